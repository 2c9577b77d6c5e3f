//! x86-64: CPU detection and the kernels written with AVX, FMA and AVX-512 intrinsics
//! that the portable kernels dispatch to at run time.

pub mod cpu;
pub mod direct;
pub mod packed;
