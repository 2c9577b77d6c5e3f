//! `Resize`: every output element a weighted sum of input elements, the weights and
//! indices per axis worked out at compile time (the interpolation is separable). And
//! the sampling at run-time coordinates: `AffineGrid` makes them, `GridSample` reads
//! them.

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

/// `AffineGrid`: for each of `n` matrices `theta` (`R` rows of `R + 1`), the sampling
/// coordinates `theta [c_0 .. c_R-1, 1]` of every output position of `size` (`R` axes,
/// outermost first), as `[n, size..., R]` with the coordinate of the innermost axis
/// first. Coordinates span -1..1: the extreme pixels' centres with `align_corners`,
/// their outer edges without.
#[inline(never)]
pub fn affine_grid<const R: usize>(
    theta: &[f32],
    y: &mut [f32],
    n: usize,
    size: [usize; R],
    align_corners: bool,
) {
    let points: usize = size.iter().product();
    let y = &mut y[..n * points * R];
    let coord = |i: usize, len: usize| -> f32 {
        if align_corners {
            // One position sits at -1, where linspace(-1, 1, 1) puts it.
            if len <= 1 {
                -1.0
            } else {
                -1.0 + 2.0 * i as f32 / (len - 1) as f32
            }
        } else {
            (2.0 * i as f32 + 1.0) / len as f32 - 1.0
        }
    };
    for b in 0..n {
        let t = &theta[b * R * (R + 1)..(b + 1) * R * (R + 1)];
        for q in 0..points {
            // Base point: the innermost axis is x, the next y, then z.
            let (mut base, mut rest) = ([0.0f32; R], q);
            for (a, len) in size.iter().enumerate().rev() {
                base[R - 1 - a] = coord(rest % len, *len);
                rest /= len;
            }
            let out = &mut y[(b * points + q) * R..(b * points + q + 1) * R];
            for (r, o) in out.iter_mut().enumerate() {
                let row = &t[r * (R + 1)..(r + 1) * (R + 1)];
                *o = row[R] + row[..R].iter().zip(&base).map(|(w, v)| w * v).sum::<f32>();
            }
        }
    }
}

/// `GridSample` of `x` (`[n, c, dims...]`, `R` spatial axes) at the `points` positions
/// per image that `grid` (`[n, points, R]`, the innermost axis's coordinate first, -1..1)
/// gives, into `y` (`[n, c, points]`). `mode`: 0 nearest (halves to even), 1 linear, 2
/// cubic (Keys, a = -0.75); `padding`: 0 zeros, 1 border, 2 reflection, applied to
/// the coordinate and then to every tap, as the ONNX reference does.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn grid_sample<const R: usize>(
    x: &[f32],
    grid: &[f32],
    y: &mut [f32],
    n: usize,
    c: usize,
    dims: [usize; R],
    points: usize,
    mode: u8,
    padding: u8,
    align_corners: bool,
) {
    let plane: usize = dims.iter().product();
    let (x, y) = (&x[..n * c * plane], &mut y[..n * c * points]);
    let taps = [1usize, 2, 4][mode as usize % 3];
    // The tap range of an axis: -0.5..d-0.5, or 0..d-1 with align_corners.
    let bounds = |d: usize| {
        if align_corners {
            (0.0f32, d as f32 - 1.0)
        } else {
            (-0.5f32, d as f32 - 0.5)
        }
    };
    let reflect = |v: f32, lo: f32, hi: f32| {
        let range = hi - lo;
        if range <= 0.0 {
            return lo;
        }
        let (dx, from_lo) = if v < lo {
            (lo - v, true)
        } else if v > hi {
            (v - hi, false)
        } else {
            return v;
        };
        let k = libm::truncf(dx / range);
        let r = dx - k * range;
        if (k as i64 % 2 == 0) == from_lo {
            lo + r
        } else {
            hi - r
        }
    };
    // The index of tap `i` on an axis of `d` values after padding; None reads 0.
    let index = |i: i64, d: usize| -> Option<usize> {
        match padding {
            0 => usize::try_from(i).ok().filter(|&i| i < d),
            1 => Some(i.clamp(0, d as i64 - 1) as usize),
            _ => {
                let (lo, hi) = bounds(d);
                Some((reflect(i as f32, lo, hi) as i64).clamp(0, d as i64 - 1) as usize)
            }
        }
    };
    for b in 0..n {
        for q in 0..points {
            let g = &grid[(b * points + q) * R..(b * points + q + 1) * R];
            // Per axis (outermost first): the first tap and the taps' weights.
            let mut first = [0i64; R];
            let mut weight = [[0.0f32; 4]; R];
            for a in 0..R {
                let d = dims[a];
                let u = g[R - 1 - a];
                let mut v = if align_corners {
                    (u + 1.0) / 2.0 * (d as f32 - 1.0)
                } else {
                    ((u + 1.0) * d as f32 - 1.0) / 2.0
                };
                if mode == 0 {
                    v = libm::rintf(v);
                }
                let (lo, hi) = bounds(d);
                if v < lo || v > hi {
                    v = match padding {
                        1 => v.clamp(0.0, d as f32 - 1.0),
                        2 => reflect(v, lo, hi),
                        _ => v,
                    };
                }
                match mode {
                    0 => {
                        first[a] = v as i64;
                        weight[a][0] = 1.0;
                    }
                    1 => {
                        let f = libm::floorf(v);
                        let t = v - f;
                        first[a] = f as i64;
                        weight[a][..2].copy_from_slice(&[1.0 - t, t]);
                    }
                    _ => {
                        let f = libm::floorf(v);
                        first[a] = (f as i64).saturating_sub(1);
                        weight[a] = cubic_weights(v - f);
                    }
                }
            }
            for ch in 0..c {
                let xp = &x[(b * c + ch) * plane..(b * c + ch + 1) * plane];
                let mut acc = 0.0f32;
                for combo in 0..taps.pow(R as u32) {
                    let (mut rest, mut w, mut at, mut inside) = (combo, 1.0f32, 0usize, true);
                    for a in (0..R).rev() {
                        let k = rest % taps;
                        rest /= taps;
                        w *= weight[a][k];
                        match index(first[a].saturating_add(k as i64), dims[a]) {
                            Some(i) => at += i * dims[a + 1..].iter().product::<usize>(),
                            None => inside = false,
                        }
                    }
                    if inside {
                        acc += w * xp[at];
                    }
                }
                y[(b * c + ch) * points + q] = acc;
            }
        }
    }
}

/// Keys' cubic convolution weights (a = -0.75) of the four taps around a position `t`
/// past the second.
fn cubic_weights(t: f32) -> [f32; 4] {
    const A: f32 = -0.75;
    let near = |x: f32| ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let far = |x: f32| ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A;
    [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]
}
