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
    super::copy::copy(y, &x[..N * C * S]);
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
            let inv = 1.0 / super::math::sqrt(var[c] + eps);
            let (m, s, bb) = (mean[c], scale[c], b[c]);
            for v in &mut y[(n * C + c) * S..(n * C + c + 1) * S] {
                *v = (*v - m) * inv * s + bb;
            }
        }
    }
}

/// [`layer_norm`] over `y` in place.
#[inline]
pub fn layer_norm_inplace<const OUTER: usize, const INNER: usize, const RMS: bool>(
    scale: &[f32],
    b: Option<&[f32]>,
    eps: f32,
    y: &mut [f32],
) {
    let y = &mut y[..OUTER * INNER];
    // The row length as a float constant: converted at run time, a library routine on
    // the cores without an FPU.
    let n = const { INNER as f32 };
    for row in y.chunks_exact_mut(super::opaque(INNER)) {
        normalize_row::<RMS>(row, n, scale, b, eps);
    }
}

/// With `RMS` (`RMSNormalization`) the mean is taken as 0: the row is divided by its
/// root mean square. `n` is `row.len()` as a float.
fn normalize_row<const RMS: bool>(
    row: &mut [f32],
    n: f32,
    scale: &[f32],
    b: Option<&[f32]>,
    eps: f32,
) {
    let mean = if RMS {
        0.0
    } else {
        super::lane_sum(row, |v| v) / n
    };
    let var = super::lane_sum(row, |v| (v - mean) * (v - mean)) / n;
    let inv = 1.0 / super::math::sqrt(var + eps);
    match b {
        // Per-element scale and bias (the common case): one straight loop.
        Some(b) if scale.len() == row.len() && b.len() == row.len() => {
            for ((v, &s), &bb) in row.iter_mut().zip(scale).zip(b) {
                super::rolled();
                *v = (*v - mean) * inv * s + bb;
            }
        }
        _ => {
            let at = |v: &[f32], i: usize| if v.len() == 1 { v[0] } else { v[i] };
            for (i, v) in row.iter_mut().enumerate() {
                super::rolled();
                *v = (*v - mean) * inv * at(scale, i) + b.map_or(0.0, |b| at(b, i));
            }
        }
    }
}

/// Normalizes each of `OUTER` rows of `INNER` values: `(x - mean) / sqrt(var + eps)`,
/// times `scale`, plus `b` (both of `INNER` values, or 1 to broadcast).
#[inline]
pub fn layer_norm<const OUTER: usize, const INNER: usize, const RMS: bool>(
    x: &[f32],
    scale: &[f32],
    b: Option<&[f32]>,
    eps: f32,
    y: &mut [f32],
) {
    let y = &mut y[..OUTER * INNER];
    super::copy::copy_run(y, &x[..OUTER * INNER]);
    layer_norm_inplace::<OUTER, INNER, RMS>(scale, b, eps, y);
}

/// `GroupNormalization` (opset 21) of `[N, C, S]`: the `C / G` channels of each group
/// share one mean and variance over their `S` positions, and each channel has its own
/// scale and bias. `InstanceNormalization` is the case `G = C`.
#[inline]
pub fn group_norm<const N: usize, const C: usize, const G: usize, const S: usize>(
    x: &[f32],
    scale: &[f32],
    b: &[f32],
    eps: f32,
    y: &mut [f32],
) {
    let span = C / G * S;
    let x = &x[..N * C * S];
    let y = &mut y[..N * C * S];
    for g in 0..N * G {
        let block = &x[g * span..(g + 1) * span];
        let mean = super::lane_sum(block, |v| v) / span as f32;
        let var = super::lane_sum(block, |v| (v - mean) * (v - mean)) / span as f32;
        let inv = 1.0 / super::math::sqrt(var + eps);
        let out = &mut y[g * span..(g + 1) * span];
        for (i, (o, p)) in out
            .chunks_exact_mut(S)
            .zip(block.chunks_exact(S))
            .enumerate()
        {
            let c = (g % G) * (C / G) + i;
            let k = scale[c] * inv;
            for (o, &v) in o.iter_mut().zip(p) {
                *o = (v - mean) * k + b[c];
            }
        }
    }
}

/// `LRN` on `x` viewed as `[n, c, inner]`: each value divided by `(bias + alpha / size *
/// sum of the squares over the channels c - floor((size - 1) / 2) ..= c + ceil((size -
/// 1) / 2))^beta`.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn lrn(
    x: &[f32],
    y: &mut [f32],
    n: usize,
    c: usize,
    inner: usize,
    size: usize,
    alpha: f32,
    beta: f32,
    bias: f32,
) {
    let (below, above) = ((size - 1) / 2, size / 2);
    for b in 0..n {
        for ch in 0..c {
            let (lo, hi) = (ch.saturating_sub(below), (ch + above).min(c - 1));
            for i in 0..inner {
                let mut sq = 0.0f32;
                for k in lo..=hi {
                    let v = x[(b * c + k) * inner + i];
                    sq += v * v;
                }
                let at = (b * c + ch) * inner + i;
                y[at] = x[at] / libm::powf(bias + alpha / size as f32 * sq, beta);
            }
        }
    }
}

/// `GlobalLpPool`: `y[k] = (sum over block k of |x|^p)^(1/p)` for blocks of `spatial`
/// values.
#[inline]
pub fn global_lp_pool(x: &[f32], y: &mut [f32], spatial: usize, p: f32) {
    for (o, block) in y.iter_mut().zip(x.chunks_exact(spatial.max(1))) {
        *o = lp_root(block.iter().fold(0.0, |s, &v| s + lp_term(v, p)), p);
    }
}

/// `|v|^p`, the term of a p-norm (`LpPool`, `GlobalLpPool`), exact for p = 1 and 2.
#[inline]
pub(crate) fn lp_term(v: f32, p: f32) -> f32 {
    if p == 2.0 {
        v * v
    } else if p == 1.0 {
        v.abs()
    } else {
        libm::powf(v.abs(), p)
    }
}

/// `s^(1/p)`, the root of a p-norm's sum of [`lp_term`]s.
#[inline]
pub(crate) fn lp_root(s: f32, p: f32) -> f32 {
    if p == 2.0 {
        super::math::sqrt(s)
    } else if p == 1.0 {
        s
    } else {
        libm::powf(s, 1.0 / p)
    }
}

/// `Det` of `batch` matrices of `m x m` (LU with partial pivoting, in f64).
#[inline]
pub fn det<const M: usize>(x: &[f32], y: &mut [f32]) {
    for (o, mat) in y.iter_mut().zip(x.chunks_exact((M * M).max(1))) {
        let mut a = [[0.0f64; M]; M];
        for (i, row) in a.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = f64::from(mat[i * M + j]);
            }
        }
        let mut d = 1.0f64;
        for col in 0..M {
            let mut pivot = col;
            for r in col + 1..M {
                if a[r][col].abs() > a[pivot][col].abs() {
                    pivot = r;
                }
            }
            if a[pivot][col] == 0.0 {
                d = 0.0;
                break;
            }
            if pivot != col {
                a.swap(pivot, col);
                d = -d;
            }
            d *= a[col][col];
            for r in col + 1..M {
                let f = a[r][col] / a[col][col];
                for k in col..M {
                    a[r][k] -= f * a[col][k];
                }
            }
        }
        *o = d as f32;
    }
}

/// `MeanVarianceNormalization` of `x` over `shape` (row-major), the statistics taken over
/// the axes whose `out_strides` are 0 (the other axes index `kept` statistics):
/// `(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)`, as ONNX's function defines it.
/// `scratch` holds `2 * kept` values.
#[inline]
pub fn mean_variance<const R: usize>(
    x: &[f32],
    y: &mut [f32],
    shape: &[usize; R],
    out_strides: &[usize; R],
    kept: usize,
    scratch: &mut [f32],
) {
    let n: usize = shape.iter().product();
    let count = (n / kept.max(1)) as f32;
    let (mean, sq) = scratch[..2 * kept].split_at_mut(kept);
    mean.fill(0.0);
    sq.fill(0.0);
    let zeros = [0usize; R];
    let (mut idx, mut io, mut unused) = ([0usize; R], 0usize, 0usize);
    for &v in &x[..n] {
        mean[io] += v;
        sq[io] += v * v;
        super::step2(&mut idx, shape, out_strides, &zeros, &mut io, &mut unused);
    }
    for (m, s) in mean.iter_mut().zip(sq.iter_mut()) {
        *m /= count;
        *s = super::math::sqrt(*s / count - *m * *m) + 1e-9;
    }
    let (mut idx, mut io, mut unused) = ([0usize; R], 0usize, 0usize);
    for (o, &v) in y[..n].iter_mut().zip(&x[..n]) {
        *o = (v - mean[io]) / sq[io];
        super::step2(&mut idx, shape, out_strides, &zeros, &mut io, &mut unused);
    }
}
