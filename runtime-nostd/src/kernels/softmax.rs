//! `Softmax` along one axis of a tensor viewed as `[OUTER, N, INNER]`.

/// Softmax in place along the middle axis: `exp(x - max) / sum(exp(x - max))`, or
/// with `LOG` its logarithm `x - max - log(sum(exp(x - max)))`.
#[inline]
pub fn softmax_inplace<const OUTER: usize, const N: usize, const INNER: usize, const LOG: bool>(
    y: &mut [f32],
) {
    let y = &mut y[..OUTER * N * INNER];
    for o in 0..OUTER {
        let block = &mut y[o * N * INNER..(o + 1) * N * INNER];
        for i in 0..INNER {
            let mut max = f32::NEG_INFINITY;
            for n in 0..N {
                max = max.max(block[n * INNER + i]);
            }
            let mut sum = 0.0f32;
            for n in 0..N {
                let e = super::math::exp(block[n * INNER + i] - max);
                if !LOG {
                    block[n * INNER + i] = e;
                }
                sum += e;
            }
            if LOG {
                let shift = max + libm::logf(sum);
                for n in 0..N {
                    block[n * INNER + i] -= shift;
                }
            } else {
                let inv = 1.0 / sum;
                for n in 0..N {
                    block[n * INNER + i] *= inv;
                }
            }
        }
    }
}
