//! Pooling over `[NC, H, W]` planes (1-D runs as height 1).

/// Max over each window; padding never wins.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn max_pool2d<
    const NC: usize,
    const H: usize,
    const W: usize,
    const KH: usize,
    const KW: usize,
    const OH: usize,
    const OW: usize,
    const SH: usize,
    const SW: usize,
    const DH: usize,
    const DW: usize,
    const PT: usize,
    const PL: usize,
>(
    x: &[f32],
    y: &mut [f32],
) {
    let x = &x[..NC * H * W];
    let y = &mut y[..NC * OH * OW];
    if H * W == 0 || OW == 0 {
        // No input (every window is empty) or no output.
        y.fill(f32::NEG_INFINITY);
        return;
    }
    // Output rows are accumulated window tap by window tap: each tap is one pass over
    // the row's outputs whose input falls inside, with no chain between outputs (a
    // running max per window would be a serial chain of dependent compares).
    for (xp, yp) in x.chunks_exact(H * W).zip(y.chunks_exact_mut(OH * OW)) {
        for (oh, yrow) in yp.chunks_exact_mut(OW).enumerate() {
            yrow.fill(f32::NEG_INFINITY);
            for kh in 0..KH {
                let ih = (oh * SH + kh * DH) as isize - PT as isize;
                if ih < 0 || ih >= H as isize {
                    continue;
                }
                let xrow = &xp[ih as usize * W..(ih as usize + 1) * W];
                if KW == 2 && SW == 2 && DW == 1 && PL == 0 && 2 * OW <= W {
                    // The common 2x2 stride-2 window: adjacent pairs, loops the compiler
                    // vectorizes (NaN never wins, as below).
                    for (m, pair) in yrow.iter_mut().zip(xrow.chunks_exact(2)) {
                        let a = if pair[0] > *m { pair[0] } else { *m };
                        *m = if pair[1] > a { pair[1] } else { a };
                    }
                    continue;
                }
                for kw in 0..KW {
                    let off = (kw * DW) as isize - PL as isize;
                    let (lo, hi) = super::conv::valid_range(OW, W, SW, off);
                    if lo == hi {
                        continue;
                    }
                    let start = ((lo * SW) as isize + off) as usize;
                    let taps = xrow[start..].iter().step_by(SW);
                    for (m, &v) in yrow[lo..hi].iter_mut().zip(taps) {
                        // NaN never wins (as `f32::max`), and no select on NaN is needed.
                        *m = if v > *m { v } else { *m };
                    }
                }
            }
        }
    }
}

/// Mean over each window. With `INCLUDE_PAD` the divisor counts the window positions in
/// the declared padding (`PT`..`PB`, `PL`..`PR`); otherwise only the input positions.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn avg_pool2d<
    const NC: usize,
    const H: usize,
    const W: usize,
    const KH: usize,
    const KW: usize,
    const OH: usize,
    const OW: usize,
    const SH: usize,
    const SW: usize,
    const DH: usize,
    const DW: usize,
    const PT: usize,
    const PL: usize,
    const PB: usize,
    const PR: usize,
    const INCLUDE_PAD: bool,
>(
    x: &[f32],
    y: &mut [f32],
) {
    let x = &x[..NC * H * W];
    let y = &mut y[..NC * OH * OW];
    let (hp, wp) = ((H + PT + PB) as isize, (W + PL + PR) as isize);
    for p in 0..NC {
        let xp = &x[p * H * W..(p + 1) * H * W];
        for oh in 0..OH {
            for ow in 0..OW {
                let (mut sum, mut count) = (0.0f32, 0usize);
                for kh in 0..KH {
                    let ph = (oh * SH + kh * DH) as isize;
                    let ih = ph - PT as isize;
                    for kw in 0..KW {
                        let pw = (ow * SW + kw * DW) as isize;
                        let iw = pw - PL as isize;
                        let inside = ih >= 0 && ih < H as isize && iw >= 0 && iw < W as isize;
                        if inside {
                            sum += xp[ih as usize * W + iw as usize];
                            count += 1;
                        } else if INCLUDE_PAD && ph < hp && pw < wp {
                            count += 1;
                        }
                    }
                }
                y[(p * OH + oh) * OW + ow] = if count == 0 { 0.0 } else { sum / count as f32 };
            }
        }
    }
}

/// Mean of each of `NC` planes of `S` values.
#[inline]
pub fn global_avg_pool<const NC: usize, const S: usize>(x: &[f32], y: &mut [f32]) {
    let x = &x[..NC * S];
    for (p, out) in y[..NC].iter_mut().enumerate() {
        *out = x[p * S..(p + 1) * S].iter().sum::<f32>() / S as f32;
    }
}

/// `y[p] = max(x[p * S..(p + 1) * S])` over `NC` planes of `S` values; NaN propagates.
#[inline]
pub fn global_max_pool<const NC: usize, const S: usize>(x: &[f32], y: &mut [f32]) {
    let x = &x[..NC * S];
    for (p, out) in y[..NC].iter_mut().enumerate() {
        *out = x[p * S..(p + 1) * S]
            .iter()
            .fold(f32::NEG_INFINITY, |m, &v| {
                if v.is_nan() || m.is_nan() {
                    f32::NAN
                } else if v > m {
                    v
                } else {
                    m
                }
            });
    }
}
