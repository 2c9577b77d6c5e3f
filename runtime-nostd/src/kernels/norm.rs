//! Normalizations: `BatchNormalization` (inference), `LayerNormalization` and
//! `InstanceNormalization`.

/// `y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + b[c]` over `[N, C, S]`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn batch_norm<const N: usize, const C: usize, const S: usize>(
    x: &[f32],
    scale: &[f32],
    b: &[f32],
    mean: &[f32],
    var: &[f32],
    eps: f32,
    y: &mut [f32],
) {
    let y = &mut y[..N * C * S];
    y.copy_from_slice(&x[..N * C * S]);
    batch_norm_inplace::<N, C, S>(scale, b, mean, var, eps, y);
}

/// [`batch_norm`] over `y` in place.
#[inline]
pub fn batch_norm_inplace<const N: usize, const C: usize, const S: usize>(
    scale: &[f32],
    b: &[f32],
    mean: &[f32],
    var: &[f32],
    eps: f32,
    y: &mut [f32],
) {
    let y = &mut y[..N * C * S];
    for n in 0..N {
        for c in 0..C {
            let inv = 1.0 / libm::sqrtf(var[c] + eps);
            let (m, s, bb) = (mean[c], scale[c], b[c]);
            for v in &mut y[(n * C + c) * S..(n * C + c + 1) * S] {
                *v = (*v - m) * inv * s + bb;
            }
        }
    }
}

/// [`layer_norm`] over `y` in place.
#[inline]
pub fn layer_norm_inplace<const OUTER: usize, const INNER: usize>(
    scale: &[f32],
    b: Option<&[f32]>,
    eps: f32,
    y: &mut [f32],
) {
    let y = &mut y[..OUTER * INNER];
    for o in 0..OUTER {
        let row = &mut y[o * INNER..(o + 1) * INNER];
        normalize_row(row, scale, b, eps);
    }
}

fn normalize_row(row: &mut [f32], scale: &[f32], b: Option<&[f32]>, eps: f32) {
    let n = row.len() as f32;
    let mean = super::lane_sum(row, |v| v) / n;
    let var = super::lane_sum(row, |v| (v - mean) * (v - mean)) / n;
    let inv = 1.0 / libm::sqrtf(var + eps);
    match b {
        // Per-element scale and bias (the common case): one straight loop.
        Some(b) if scale.len() == row.len() && b.len() == row.len() => {
            for ((v, &s), &bb) in row.iter_mut().zip(scale).zip(b) {
                *v = (*v - mean) * inv * s + bb;
            }
        }
        _ => {
            let at = |v: &[f32], i: usize| if v.len() == 1 { v[0] } else { v[i] };
            for (i, v) in row.iter_mut().enumerate() {
                *v = (*v - mean) * inv * at(scale, i) + b.map_or(0.0, |b| at(b, i));
            }
        }
    }
}

/// Normalizes each of `OUTER` rows of `INNER` values: `(x - mean) / sqrt(var + eps)`,
/// times `scale`, plus `b` (both of `INNER` values, or 1 to broadcast).
#[inline]
pub fn layer_norm<const OUTER: usize, const INNER: usize>(
    x: &[f32],
    scale: &[f32],
    b: Option<&[f32]>,
    eps: f32,
    y: &mut [f32],
) {
    let y = &mut y[..OUTER * INNER];
    y.copy_from_slice(&x[..OUTER * INNER]);
    layer_norm_inplace::<OUTER, INNER>(scale, b, eps, y);
}

/// `InstanceNormalization`: each of the `N * C` planes of `S` values normalized by its own
/// mean and (biased) variance, then `* scale[c] + b[c]`.
#[inline]
pub fn instance_norm<const N: usize, const C: usize, const S: usize>(
    x: &[f32],
    scale: &[f32],
    b: &[f32],
    eps: f32,
    y: &mut [f32],
) {
    let x = &x[..N * C * S];
    let y = &mut y[..N * C * S];
    for p in 0..N * C {
        let c = p % C;
        let plane = &x[p * S..(p + 1) * S];
        let mean = super::lane_sum(plane, |v| v) / S as f32;
        let var = super::lane_sum(plane, |v| (v - mean) * (v - mean)) / S as f32;
        let k = scale[c] / libm::sqrtf(var + eps);
        for (o, &v) in y[p * S..(p + 1) * S].iter_mut().zip(plane) {
            *o = (v - mean) * k + b[c];
        }
    }
}
