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
