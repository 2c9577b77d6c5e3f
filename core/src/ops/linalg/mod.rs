//! Matrix products: `Gemm`, `MatMul`, `Einsum`.

pub mod det;
pub mod einsum;
pub mod gemm;
pub mod matmul;
