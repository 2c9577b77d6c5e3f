//! The kernels generated forward passes call. `no_std`, no allocation; sizes are const
//! parameters so loop bounds are constants.
//!
//! Slices are re-sliced to their exact lengths on entry; with valid generated calls
//! these checks cannot fail and the compiler removes the ones inside the loops.

// Index loops mirror the formulas of the ONNX specification.
#![allow(clippy::needless_range_loop)]

pub mod binary;
pub mod conv;
pub mod copy;
pub mod gemm;
pub mod lstm;
pub mod norm;
pub mod pool;
pub mod softmax;
pub mod unary;

/// Advances a row-major multi-index over `shape`, moving two strided offsets along.
#[inline(always)]
pub(crate) fn step2<const R: usize>(
    idx: &mut [usize; R],
    shape: &[usize; R],
    sa: &[usize; R],
    sb: &[usize; R],
    ia: &mut usize,
    ib: &mut usize,
) {
    let mut d = R;
    while d > 0 {
        d -= 1;
        idx[d] += 1;
        *ia += sa[d];
        *ib += sb[d];
        if idx[d] < shape[d] {
            return;
        }
        *ia -= sa[d] * shape[d];
        *ib -= sb[d] * shape[d];
        idx[d] = 0;
    }
}
