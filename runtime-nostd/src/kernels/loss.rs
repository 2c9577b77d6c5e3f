//! `NegativeLogLikelihoodLoss` over scores viewed as `[N, C, D]` (`D` the product of the
//! dims after the class axis), which `SoftmaxCrossEntropyLoss` runs on its LogSoftmax.

use super::num::{CastTo, Float};

/// No reduction: one loss per `[n, d]`.
pub const NONE: u8 = 0;
/// The sum of the losses.
pub const SUM: u8 = 1;
/// The sum of the losses over the sum of their class weights.
pub const MEAN: u8 = 2;

/// `loss[n, d] = -x[n, t, d] * weight[t]` with `t = target[n, d]` (weight 1 without
/// `weight`), then reduced by `R` ([`NONE`], [`SUM`], [`MEAN`]). A target equal to
/// `ignore` adds a loss of 0 and a weight of 0; a target outside `0..C` (which ONNX
/// Runtime refuses when the model runs) gives NaN, so the output shows it.
#[inline]
pub fn nll_loss<
    T: Float,
    I: CastTo<i64> + Copy,
    const N: usize,
    const C: usize,
    const D: usize,
    const R: u8,
>(
    x: &[T],
    target: &[I],
    weight: Option<&[T]>,
    ignore: Option<i64>,
    y: &mut [T],
) {
    let (x, target) = (&x[..N * C * D], &target[..N * D]);
    let (mut sum, mut weights) = (T::ZERO, T::ZERO);
    for (k, &t) in target.iter().enumerate() {
        let t: i64 = t.cast();
        let (n, d) = (k / D, k % D);
        let (loss, w) = if Some(t) == ignore {
            (T::ZERO, T::ZERO)
        } else if let Some(c) = usize::try_from(t).ok().filter(|&c| c < C) {
            let w = weight.map_or(T::ONE, |w| w[c]);
            (T::neg(x[(n * C + c) * D + d]) * w, w)
        } else {
            (T::NAN, T::ONE)
        };
        if R == NONE {
            y[k] = loss;
        }
        sum = sum + loss;
        weights = weights + w;
    }
    match R {
        SUM => y[0] = sum,
        MEAN => y[0] = sum / weights,
        _ => {}
    }
}

/// `SoftmaxCrossEntropyLoss`: `log_prob` gets the LogSoftmax of `scores` along the class
/// axis, then [`nll_loss`] of it.
#[inline]
pub fn softmax_cross_entropy<
    T: Float,
    I: CastTo<i64> + Copy,
    const N: usize,
    const C: usize,
    const D: usize,
    const R: u8,
>(
    scores: &[T],
    labels: &[I],
    weight: Option<&[T]>,
    ignore: Option<i64>,
    y: &mut [T],
    log_prob: &mut [T],
) {
    let log_prob = &mut log_prob[..N * C * D];
    super::copy::copy(log_prob, &scores[..N * C * D]);
    super::softmax::softmax_inplace::<T, N, C, D, true>(log_prob);
    nll_loss::<T, I, N, C, D, R>(log_prob, labels, weight, ignore, y);
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two samples, three classes, two positions; values by hand from the definition.
    const X: [f32; 12] = [
        0.1, 0.2, 0.3, 0.4, 0.5, 0.6, //
        0.7, 0.8, 0.9, 1.0, 1.1, 1.2,
    ];

    #[test]
    fn reductions_weights_and_ignore() {
        let t: [i64; 4] = [2, 0, 1, 2];
        let w = [1.0f32, 2.0, 3.0];
        let mut y = [0.0f32; 4];
        nll_loss::<f32, i64, 2, 3, 2, NONE>(&X, &t, Some(&w), None, &mut y);
        assert_eq!(y, [-0.5 * 3.0, -0.2 * 1.0, -0.9 * 2.0, -1.2 * 3.0]);
        let mut s = [0.0f32];
        nll_loss::<f32, i64, 2, 3, 2, MEAN>(&X, &t, Some(&w), Some(0), &mut s);
        let want = (-1.5f32 - 1.8 - 3.6) / (3.0 + 2.0 + 3.0);
        assert!((s[0] - want).abs() < 1e-6, "{} {want}", s[0]);
        nll_loss::<f32, i64, 2, 3, 2, SUM>(&X, &t, None, None, &mut s);
        assert!((s[0] - (-0.5 - 0.2 - 0.9 - 1.2)).abs() < 1e-6);
        let bad: [i32; 4] = [3, 0, 1, 2];
        nll_loss::<f32, i32, 2, 3, 2, SUM>(&X, &bad, None, None, &mut s);
        assert!(s[0].is_nan());
    }
}
