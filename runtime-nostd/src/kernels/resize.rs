//! `Resize`: every output element a weighted sum of input elements, the weights and
//! indices per axis worked out at compile time (the interpolation is separable).

/// The taps of one axis: output position `o` reads input indices
/// `index[o * taps .. (o + 1) * taps]` with the matching weights; `outside[o]` marks a
/// position whose source lies outside the input (`tf_crop_and_resize`), which takes the
/// extrapolation value. `outside` is empty when no position does.
#[derive(Debug, Clone, Copy)]
pub struct Taps<'a> {
    /// Taps per output position.
    pub taps: usize,
    /// Input indices, `taps` per output position.
    pub index: &'a [usize],
    /// Weights, `taps` per output position.
    pub weight: &'a [f32],
    /// Positions outside the input, one flag per output position (or none).
    pub outside: &'a [bool],
}

/// `y` over `out_shape` from `x` over `in_shape`: the sum over every combination of the
/// axes' taps of the product of their weights times the input element, or `extrapolation`
/// where an axis is outside.
#[inline]
pub fn resize<const R: usize>(
    x: &[f32],
    y: &mut [f32],
    in_shape: &[usize; R],
    out_shape: &[usize; R],
    axes: &[Taps<'_>; R],
    extrapolation: f32,
) {
    let mut in_strides = [1usize; R];
    for d in (0..R.saturating_sub(1)).rev() {
        in_strides[d] = in_strides[d + 1] * in_shape[d + 1];
    }
    let mut o = [0usize; R];
    for out in y.iter_mut() {
        if axes
            .iter()
            .zip(&o)
            .any(|(a, &p)| a.outside.get(p).copied().unwrap_or(false))
        {
            *out = extrapolation;
        } else {
            // Odometer over the taps of every axis.
            let mut t = [0usize; R];
            let mut acc = 0.0f32;
            'combos: loop {
                let (mut at, mut w) = (0usize, 1.0f32);
                for d in 0..R {
                    let k = o[d] * axes[d].taps + t[d];
                    at += axes[d].index[k] * in_strides[d];
                    w *= axes[d].weight[k];
                }
                // A zero weight still multiplies: NaN and infinities spread as in ONNX
                // Runtime and the reference.
                acc += w * x[at];
                let mut d = R;
                loop {
                    if d == 0 {
                        break 'combos;
                    }
                    d -= 1;
                    t[d] += 1;
                    if t[d] < axes[d].taps {
                        break;
                    }
                    t[d] = 0;
                }
            }
            *out = acc;
        }
        // Next output position.
        let mut d = R;
        while d > 0 {
            d -= 1;
            o[d] += 1;
            if o[d] < out_shape[d] {
                break;
            }
            o[d] = 0;
        }
    }
}
