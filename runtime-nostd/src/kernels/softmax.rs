//! `Softmax` along one axis of a tensor viewed as `[OUTER, N, INNER]`.

use super::num::Float;

/// Softmax in place along the middle axis: `exp(x - max) / sum(exp(x - max))`, or
/// with `LOG` its logarithm `x - max - log(sum(exp(x - max)))`.
#[inline]
pub fn softmax_inplace<
    T: Float,
    const OUTER: usize,
    const N: usize,
    const INNER: usize,
    const LOG: bool,
>(
    y: &mut [T],
) {
    let y = &mut y[..OUTER * N * INNER];
    if INNER == 1 && !LOG && N > 0 {
        // Contiguous rows: each row shifted by its max, then every exponential of the
        // tensor in one loop the compiler vectorizes (rows are often shorter than a few
        // vectors: ten keys of attention), then sums in eight independent chains.
        // On the microcontrollers that loop is kept a loop (`exp_each`): over a
        // constant row of ten classes LLVM inlined the exponential ten times, 1.2 KB of
        // flash.
        // On the microcontrollers, several rows are not unrolled either (`opaque`,
        // `rolled`): the attention's forty rows of ten took 950 bytes. One row (a
        // classifier's) stays as the compiler lays it out: it is small, and rolled it
        // cost the digits MLP 6 % of its instructions.
        let rolled = || {
            if OUTER > 1 {
                super::rolled();
            }
        };
        let n = if OUTER > 1 { super::opaque(N) } else { N };
        for row in y.chunks_exact_mut(n) {
            let mut max = T::LOWEST;
            for &v in row.iter() {
                rolled();
                if v > max {
                    max = v;
                }
            }
            for v in row.iter_mut() {
                rolled();
                *v = *v - max;
            }
        }
        exp_each(y);
        for row in y.chunks_exact_mut(n) {
            let mut acc = [T::ZERO; 8];
            let chunks = row.chunks_exact(8);
            let rest = chunks.remainder();
            for c in chunks {
                rolled();
                for (a, &v) in acc.iter_mut().zip(c) {
                    *a = *a + v;
                }
            }
            let mut sum =
                ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
            for &v in rest {
                rolled();
                sum = sum + v;
            }
            let inv = T::ONE / sum;
            for v in row.iter_mut() {
                rolled();
                *v = *v * inv;
            }
        }
        return;
    }
    for o in 0..OUTER {
        let block = &mut y[o * N * INNER..(o + 1) * N * INNER];
        for i in 0..INNER {
            let mut max = T::LOWEST;
            for n in 0..N {
                let v = block[n * INNER + i];
                if v > max {
                    max = v;
                }
            }
            let mut sum = T::ZERO;
            for n in 0..N {
                let e = (block[n * INNER + i] - max).exp_fast();
                if !LOG {
                    block[n * INNER + i] = e;
                }
                sum = sum + e;
            }
            if LOG {
                let shift = max + sum.ln();
                for n in 0..N {
                    block[n * INNER + i] = block[n * INNER + i] - shift;
                }
            } else {
                let inv = T::ONE / sum;
                for n in 0..N {
                    block[n * INNER + i] = block[n * INNER + i] * inv;
                }
            }
        }
    }
}

/// `e^x` of every value. On the microcontrollers out of line and not unrolled: the
/// opaque use of each result is an inline `asm` statement, which LLVM's Arm and RISC-V
/// unrolling preferences treat as a call (no partial or runtime unrolling), and a
/// constant length is not unrolled fully either.
#[cfg_attr(target_pointer_width = "32", inline(never))]
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn exp_each<T: Float>(y: &mut [T]) {
    for v in y.iter_mut() {
        *v = v.exp_fast();
        #[cfg(target_pointer_width = "32")]
        core::hint::black_box(v);
    }
}
