//! x86-64: CPU detection and the kernels written with SSE, AVX, FMA and AVX-512
//! intrinsics that the portable kernels dispatch to at run time.

pub mod cpu;
pub mod direct;
pub mod packed;
pub mod pool;
pub mod q8;
pub mod winograd;

/// `[lo[0], lo[2], hi[0], hi[2]]` as one SSE shuffle (see `kernels::evens`).
#[inline(always)]
pub(crate) fn evens_sse(lo: &[f32; 4], hi: &[f32; 4]) -> [f32; 4] {
    use core::arch::x86_64::{_mm_loadu_ps, _mm_shuffle_ps, _mm_storeu_ps};
    let mut out = [0.0; 4];
    // Safety: SSE is part of x86-64; the loads read the four values of `lo` and `hi`,
    // the store writes the four of `out`.
    unsafe {
        let even =
            _mm_shuffle_ps::<0b10_00_10_00>(_mm_loadu_ps(lo.as_ptr()), _mm_loadu_ps(hi.as_ptr()));
        _mm_storeu_ps(out.as_mut_ptr(), even);
    }
    out
}
