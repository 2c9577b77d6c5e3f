//! Matrix products: `Gemm`, `MatMul`, `Einsum`.

pub mod einsum;
pub mod gemm;
pub mod matmul;
