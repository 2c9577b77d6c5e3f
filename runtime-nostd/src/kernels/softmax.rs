//! `Softmax` along one axis of a tensor viewed as `[OUTER, N, INNER]`.

/// `y = exp(x - max) / sum(exp(x - max))` along the middle axis.
#[inline]
pub fn softmax<const OUTER: usize, const N: usize, const INNER: usize>(x: &[f32], y: &mut [f32]) {
    let x = &x[..OUTER * N * INNER];
    let y = &mut y[..OUTER * N * INNER];
    y.copy_from_slice(x);
    softmax_inplace::<OUTER, N, INNER>(y);
}

/// Softmax in place.
#[inline]
pub fn softmax_inplace<const OUTER: usize, const N: usize, const INNER: usize>(y: &mut [f32]) {
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
                block[n * INNER + i] = e;
                sum += e;
            }
            let inv = 1.0 / sum;
            for n in 0..N {
                block[n * INNER + i] *= inv;
            }
        }
    }
}
