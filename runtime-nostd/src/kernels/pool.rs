//! Pooling over `[NC, H, W]` planes (1-D runs as height 1).

use super::math::max_nan;

/// [`max_pool2d`] of integers (a quantized model's 8-bit values): padding never wins; a
/// window of padding only gives the type's smallest value.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn max_pool2d_int<
    T: super::quant::Quant,
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
    x: &[T],
    y: &mut [T],
) {
    // The 2x2 stride-2 window of bytes on the cores with the DSP extension: four byte
    // maxima in two instructions, two windows from a word of each input row.
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    if (T::SIGNED_BYTE || T::UNSIGNED_BYTE)
        && size_of::<T>() == 1
        && plain_2x2([KH, KW, SH, SW, DH, DW, PT, PL], (H, W, OH, OW))
        && OW >= 2
    {
        let (nx, ny) = (x.len().min(NC * H * W), y.len().min(NC * OH * OW));
        // Safety: `T` is one of the sealed `Quant` types of one byte (checked above),
        // `i8` or `u8`, whose every value is a valid `u8` and back; the views cover the slices' own
        // first `nx` and `ny` elements, and `y`'s view is the only access to it while
        // it lives.
        let (xb, yb) = unsafe {
            (
                core::slice::from_raw_parts(x.as_ptr().cast::<u8>(), nx),
                core::slice::from_raw_parts_mut(y.as_mut_ptr().cast::<u8>(), ny),
            )
        };
        if super::arch::arm::dsp::max_pool_2x2_bytes(T::SIGNED_BYTE, (NC, H, W, OH, OW), xb, yb) {
            return;
        }
    }
    // Window tap by window tap over each output row, as the float kernel: per tap one
    // pass over the outputs whose input falls inside (no per-output window walk).
    for (xp, yp) in x
        .chunks_exact((H * W).max(1))
        .zip(y.chunks_exact_mut((OH * OW).max(1)))
    {
        for (oh, yrow) in yp.chunks_exact_mut(OW.max(1)).enumerate() {
            yrow.fill(T::narrow(T::LOW));
            for kh in 0..KH {
                let ih = (oh * SH + kh * DH).wrapping_sub(PT);
                if ih >= H {
                    continue;
                }
                let Some(xrow) = xp.get(ih * W..ih * W + W) else {
                    continue;
                };
                for kw in 0..KW {
                    let off = (kw * DW) as isize - PL as isize;
                    let (lo, hi) = super::conv::valid_range(OW, W, SW, off);
                    let start = ((lo * SW) as isize + off) as usize;
                    let taps = xrow
                        .get(start..)
                        .unwrap_or_default()
                        .iter()
                        .step_by(SW.max(1));
                    for (m, &v) in yrow
                        .get_mut(lo..hi)
                        .unwrap_or_default()
                        .iter_mut()
                        .zip(taps)
                    {
                        if v.widen() > m.widen() {
                            *m = v;
                        }
                    }
                }
            }
        }
    }
}

/// Whether a window `[kh, kw, sh, sw, dh, dw, pt, pl]` (taps, strides, dilations, top
/// and left padding) is the 2x2 stride-2 one without padding or dilation, every window
/// of `(h, w) -> (oh, ow)` inside the input: the case of the Arm pooling routines.
#[cfg(all(target_arch = "arm", any(feature = "fma-vfp4", feature = "dsp")))]
const fn plain_2x2(
    [kh, kw, sh, sw, dh, dw, pt, pl]: [usize; 8],
    (h, w, oh, ow): (usize, usize, usize, usize),
) -> bool {
    kh == 2
        && kw == 2
        && sh == 2
        && sw == 2
        && dh == 1
        && dw == 1
        && pt == 0
        && pl == 0
        && oh <= h / 2
        && ow <= w / 2
}

/// Max over each window; padding never wins, NaN does.
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
    const RELU: bool,
>(
    x: &[f32],
    y: &mut [f32],
) {
    let x = &x[..NC * H * W];
    let y = &mut y[..NC * OH * OW];
    if H * W == 0 || OW == 0 {
        // No input (every window is empty) or no output.
        y.fill(if RELU { 0.0 } else { f32::NEG_INFINITY });
        return;
    }
    // The 2x2 stride-2 window on the Arm FPU cores: three compares a window in
    // assembly, then NaN set where a window holds one.
    #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
    if plain_2x2([KH, KW, SH, SW, DH, DW, PT, PL], (H, W, OH, OW))
        && super::arch::arm::pool::max_pool_2x2((NC, H, W, OH, OW), x, y, RELU)
    {
        return;
    }
    // On the microcontrollers, layers of many channels whose windows all lie inside the
    // input (the usual 2x2 stride-2 MaxPool) go to one function for every layer with
    // the same window (`SHARED_CHANNELS`), which applies a Relu as it stores.
    #[cfg(target_os = "none")]
    if NC >= super::SHARED_CHANNELS
        && PT == 0
        && PL == 0
        && last_inside(OH, H, (SH, KH, DH))
        && last_inside(OW, W, (SW, KW, DW))
    {
        max_pool_inside::<KH, KW, SH, SW, DH, DW>((H, W, OH, OW), x, y, RELU);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if KH == 3
        && KW == 3
        && SH == 2
        && SW == 2
        && DH == 1
        && DW == 1
        && PL + W <= super::arch::x86_64::pool::MAX_ROW
        && 2 * OW <= super::arch::x86_64::pool::MAX_ROW
        && super::arch::x86_64::cpu::avx512()
    {
        // Safety: the CPU has AVX-512F (checked just above).
        unsafe {
            super::arch::x86_64::pool::max_pool_3x3s2_avx512::<NC, H, W, OH, OW, PT, PL>(x, y)
        };
        relu_after::<RELU>(y);
        return;
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if KH > 2 && W <= MAX_ROW {
        max_pool_rows_first::<NC, H, W, KH, KW, OH, OW, SH, SW, DH, DW, PT, PL>(x, y);
        relu_after::<RELU>(y);
        return;
    }
    // Output rows are accumulated window tap by window tap: each tap is one pass over
    // the row's outputs whose input falls inside, with no chain between outputs (a
    // running max per window would be a serial chain of dependent compares). With the
    // Relu every window starts from +0: the max of +0 and the window is the Relu of its
    // max (NaN still wins; only a max of -0 comes out +0).
    let start = if RELU { 0.0 } else { f32::NEG_INFINITY };
    for (xp, yp) in x.chunks_exact(H * W).zip(y.chunks_exact_mut(OH * OW)) {
        for (oh, yrow) in yp.chunks_exact_mut(OW).enumerate() {
            yrow.fill(start);
            for kh in 0..KH {
                let ih = (oh * SH + kh * DH) as isize - PT as isize;
                if ih < 0 || ih >= H as isize {
                    continue;
                }
                let xrow = &xp[ih as usize * W..(ih as usize + 1) * W];
                row_taps::<W, KW, OW, SW, DW, PL>(yrow, xrow);
            }
        }
    }
}

/// The Relu that the plan moved from a pool's input to its output, on the output.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn relu_after<const RELU: bool>(y: &mut [f32]) {
    if RELU {
        y.iter_mut().for_each(|v| *v = super::math::relu(*v));
    }
}

/// Whether the last of `out` windows along an axis of `len` inputs, `(stride, taps,
/// dilation)`, ends inside it without padding: `(out - 1) * stride + (taps - 1) *
/// dilation < len`, computed without overflow (no window: true). The test
/// [`max_pool2d`] takes [`max_pool_inside`] on, and that function's own check.
#[cfg(any(target_os = "none", test))]
const fn last_inside(
    out: usize,
    len: usize,
    (stride, taps, dilation): (usize, usize, usize),
) -> bool {
    if out == 0 {
        return true;
    }
    let (Some(start), Some(span)) = (
        (out - 1).checked_mul(stride),
        taps.saturating_sub(1).checked_mul(dilation),
    ) else {
        return false;
    };
    match start.checked_add(span) {
        Some(end) => end < len,
        None => false,
    }
}

/// [`max_pool2d`] on the microcontrollers where every window lies inside the input (no
/// padding; `x` and `y` whole planes of `h * w` and `oh * ow` values), window by window:
/// one function for every layer with this window, the image sizes `(h, w, oh, ow)` as
/// values (unrolled over each layer's sizes, the CIFAR CNN's three took 2.3 KB of flash
/// more), no test a tap, and no store until a window's max (an in-order core gains
/// nothing from the host's independent passes).
///
/// # Panics
/// When a window reaches outside the input.
#[cfg(any(target_os = "none", test))]
#[inline(never)]
pub(crate) fn max_pool_inside<
    const KH: usize,
    const KW: usize,
    const SH: usize,
    const SW: usize,
    const DH: usize,
    const DW: usize,
>(
    (h, w, oh, ow): (usize, usize, usize, usize),
    x: &[f32],
    y: &mut [f32],
    relu: bool,
) {
    assert!(
        last_inside(oh, h, (SH, KH, DH)) && last_inside(ow, w, (SW, KW, DW)),
        "max_pool_inside: a window outside the input"
    );
    for (xp, yp) in x.chunks_exact(h * w).zip(y.chunks_exact_mut(oh * ow)) {
        for (r, yrow) in yp.chunks_exact_mut(ow).enumerate() {
            let top = r * SH * w;
            for (c, out) in yrow.iter_mut().enumerate() {
                super::rolled();
                let at = top + c * SW;
                let tap = |kh: usize, kw: usize| {
                    // Safety: `r < oh`, `c < ow`, `kh < KH` and `kw < KW`, so the index is
                    // at most `((oh - 1) * SH + (KH - 1) * DH) * w + (ow - 1) * SW +
                    // (KW - 1) * DW`, below `h * w = xp.len()` by the assertion above.
                    unsafe { *xp.get_unchecked(at + kh * DH * w + kw * DW) }
                };
                let mut m = tap(0, 0);
                for kh in 0..KH {
                    for kw in 0..KW {
                        if kh + kw > 0 {
                            let v = tap(kh, kw);
                            m = if super::math::COMPARE_ON_BITS {
                                super::math::max_nan_bits(m, v)
                            } else {
                                max_nan(m, v)
                            };
                        }
                    }
                }
                *out = if relu { super::math::relu(m) } else { m };
            }
        }
    }
}

/// Rows of at most this many values take [`max_pool_rows_first`] on hosts.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const MAX_ROW: usize = 1024;

/// [`max_pool2d`] on hosts (a row of `MAX_ROW` values on the stack) for windows of three
/// rows or more: per output row the window rows' maxima first, column by column
/// (contiguous passes), then the window's columns over that one row, where the strided
/// passes would otherwise run once per window row (with two rows the extra pass over
/// the row costs more than it saves). Same result: the max of the window's numbers.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn max_pool_rows_first<
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
    let mut column_max = [f32::NEG_INFINITY; MAX_ROW];
    let row = &mut column_max[..W];
    for (xp, yp) in x.chunks_exact(H * W).zip(y.chunks_exact_mut(OH * OW)) {
        for (oh, yrow) in yp.chunks_exact_mut(OW).enumerate() {
            row.fill(f32::NEG_INFINITY);
            for kh in 0..KH {
                let ih = (oh * SH + kh * DH).wrapping_sub(PT);
                if ih < H {
                    for (m, &v) in row.iter_mut().zip(&xp[ih * W..(ih + 1) * W]) {
                        *m = max_nan(*m, v);
                    }
                }
            }
            yrow.fill(f32::NEG_INFINITY);
            row_taps::<W, KW, OW, SW, DW, PL>(yrow, row);
        }
    }
}

/// `yrow[ow] = max(yrow[ow], xrow[ow * SW + kw * DW - PL])` for every window column
/// `kw` and every output whose input column lies inside the row (NaN propagates).
#[inline(always)]
fn row_taps<
    const W: usize,
    const KW: usize,
    const OW: usize,
    const SW: usize,
    const DW: usize,
    const PL: usize,
>(
    yrow: &mut [f32],
    xrow: &[f32],
) {
    for kw in 0..KW {
        let off = (kw * DW) as isize - PL as isize;
        let (lo, hi) = super::conv::valid_range(OW, W, SW, off);
        if lo == hi {
            continue;
        }
        let start = ((lo * SW) as isize + off) as usize;
        if SW == 2 {
            max_every_other(&mut yrow[lo..hi], &xrow[start..]);
            continue;
        }
        let taps = xrow[start..].iter().step_by(SW);
        for (m, &v) in yrow[lo..hi].iter_mut().zip(taps) {
            super::rolled();
            *m = max_nan(*m, v);
        }
    }
}

/// `m[j] = max(m[j], x[2 j])` (NaN propagates), the even elements four at a time
/// through [`super::evens`].
#[inline]
fn max_every_other(m: &mut [f32], x: &[f32]) {
    let mut done = 0;
    while done + 4 <= m.len() && 2 * done + 8 <= x.len() {
        super::rolled();
        let even = super::evens(super::four(x, 2 * done), super::four(x, 2 * done + 4));
        for (v, t) in m[done..done + 4].iter_mut().zip(even) {
            *v = max_nan(*v, t);
        }
        done += 4;
    }
    for (j, v) in m.iter_mut().enumerate().skip(done) {
        super::rolled();
        *v = max_nan(*v, x[2 * j]);
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

/// MaxPool (`MAX`, NaN propagating) or AveragePool (`INCLUDE_PAD` as in
/// [`avg_pool2d`]) over three spatial axes, each given as `[input, kernel, output,
/// stride, dilation, pad_begin, pad_end]`. Rare on devices, so the geometry is read at
/// run time rather than unrolled.
#[inline(never)]
pub fn pool3d<const NC: usize, const MAX: bool, const INCLUDE_PAD: bool>(
    x: &[f32],
    y: &mut [f32],
    g: &[[usize; 7]; 3],
) {
    let init = (if MAX { f32::NEG_INFINITY } else { 0.0 }, 0usize);
    fold_windows::<NC, _>(
        x,
        y,
        g,
        init,
        |(acc, n), tap| match tap {
            Some(v) => (if MAX { max_nan(acc, v) } else { acc + v }, n + 1),
            None => (acc, n + INCLUDE_PAD as usize),
        },
        |(acc, n)| match (MAX, n) {
            (true, _) => acc,
            (false, 0) => 0.0,
            (false, n) => acc / n as f32,
        },
    );
}

/// `LpPool` over `[NC, D, H, W]` (1-D and 2-D windows as unit outer axes, `g` as for
/// [`pool3d`]): `(sum |x|^p)^(1/p)` of each window, padding adding nothing.
#[inline(never)]
pub fn lp_pool3d<const NC: usize>(x: &[f32], y: &mut [f32], g: &[[usize; 7]; 3], p: f32) {
    use super::norm::{lp_root, lp_term};
    fold_windows::<NC, _>(
        x,
        y,
        g,
        0.0,
        |s, tap| s + tap.map_or(0.0, |v| lp_term(v, p)),
        |s| lp_root(s, p),
    );
}

/// Folds each window of each of `NC` planes into one output: `tap` sees every input
/// value of the window (`Some`) and every position in the explicit padding (`None`; a
/// position past the padding, which `ceil_mode` can add, is not seen), `finish` makes
/// the output of the folded value.
fn fold_windows<const NC: usize, A: Copy>(
    x: &[f32],
    y: &mut [f32],
    g: &[[usize; 7]; 3],
    init: A,
    tap: impl Fn(A, Option<f32>) -> A,
    finish: impl Fn(A) -> f32,
) {
    let [d, h, w] = g;
    let plane_in = d[0] * h[0] * w[0];
    let plane_out = d[2] * h[2] * w[2];
    let x = &x[..NC * plane_in];
    let y = &mut y[..NC * plane_out];
    // Position `o` of an axis, tap `k`: its index in the padded input and in the input.
    let at = |a: &[usize; 7], o: usize, k: usize| {
        let padded = (o * a[3] + k * a[4]) as isize;
        (padded, padded - a[5] as isize)
    };
    let inside = |a: &[usize; 7], i: isize| i >= 0 && i < a[0] as isize;
    let in_pads = |a: &[usize; 7], p: isize| p < (a[0] + a[5] + a[6]) as isize;
    for p in 0..NC {
        let xp = &x[p * plane_in..(p + 1) * plane_in];
        let mut out = p * plane_out;
        for od in 0..d[2] {
            for oh in 0..h[2] {
                for ow in 0..w[2] {
                    let mut acc = init;
                    for kd in 0..d[1] {
                        let (pd, id) = at(d, od, kd);
                        for kh in 0..h[1] {
                            let (ph, ih) = at(h, oh, kh);
                            for kw in 0..w[1] {
                                let (pw, iw) = at(w, ow, kw);
                                if inside(d, id) && inside(h, ih) && inside(w, iw) {
                                    let v =
                                        xp[(id as usize * h[0] + ih as usize) * w[0] + iw as usize];
                                    acc = tap(acc, Some(v));
                                } else if in_pads(d, pd) && in_pads(h, ph) && in_pads(w, pw) {
                                    acc = tap(acc, None);
                                }
                            }
                        }
                    }
                    y[out] = finish(acc);
                    out += 1;
                }
            }
        }
    }
}

/// Mean of each of `NC` planes of `S` values.
#[inline]
pub fn global_avg_pool<const NC: usize, const S: usize>(x: &[f32], y: &mut [f32]) {
    let x = &x[..NC * S];
    for (p, out) in y[..NC].iter_mut().enumerate() {
        // Eight partial sums: a serial sum is one long chain of dependent adds.
        *out = super::lane_sum(&x[p * S..(p + 1) * S], |v| v) / S as f32;
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

#[cfg(test)]
mod tests {
    extern crate std;
    use super::max_pool2d;

    /// The 8-bit max pool against the window-by-window definition: strides, dilations,
    /// pads on every side (a window of padding only gives the type's smallest value),
    /// i8 and u8.
    #[test]
    fn integer_max_pool_equals_the_definition() {
        fn check<T: super::super::quant::Quant + PartialEq + core::fmt::Debug>() {
            const NC: usize = 2;
            const H: usize = 7;
            const W: usize = 9;
            // 3x2 windows, stride (2, 3), dilation (1, 2), pads top 2, left 3 (bottom
            // and right implied by the output size: windows of padding only included).
            const OH: usize = 5;
            const OW: usize = 5;
            let x: std::vec::Vec<T> = (0..NC * H * W)
                .map(|i| T::narrow(((i * 89 + 11) % 256) as i32 + T::LOW))
                .collect();
            let mut y = std::vec![T::narrow(0); NC * OH * OW];
            super::max_pool2d_int::<T, NC, H, W, 3, 2, OH, OW, 2, 3, 1, 2, 2, 3>(&x, &mut y);
            for p in 0..NC {
                for oh in 0..OH {
                    for ow in 0..OW {
                        let mut m = T::LOW;
                        for kh in 0..3 {
                            for kw in 0..2 {
                                let ih = (oh * 2 + kh) as isize - 2;
                                let iw = (ow * 3 + kw * 2) as isize - 3;
                                if (0..H as isize).contains(&ih) && (0..W as isize).contains(&iw) {
                                    m = m.max(x[(p * H + ih as usize) * W + iw as usize].widen());
                                }
                            }
                        }
                        assert_eq!(y[(p * OH + oh) * OW + ow], T::narrow(m), "{p} {oh} {ow}");
                    }
                }
            }
            assert!(
                y.iter().any(|&v| v == T::narrow(T::LOW)),
                "a window of padding only"
            );
        }
        check::<i8>();
        check::<u8>();
    }

    /// The max of plane `p`'s `k x k` window at stride 2 over output `(oh, ow)` of an
    /// `h x w` input padded by `pad` (NaN propagates, as in the ONNX reference).
    #[allow(clippy::too_many_arguments)]
    fn window_max(
        x: &[f32],
        (h, w): (usize, usize),
        k: usize,
        pad: usize,
        p: usize,
        oh: usize,
        ow: usize,
    ) -> f32 {
        let mut m = f32::NEG_INFINITY;
        for kh in 0..k {
            for kw in 0..k {
                let ih = (oh * 2 + kh) as isize - pad as isize;
                let iw = (ow * 2 + kw) as isize - pad as isize;
                if ih >= 0 && ih < h as isize && iw >= 0 && iw < w as isize {
                    let v = x[p * h * w + ih as usize * w + iw as usize];
                    if v.is_nan() || m.is_nan() {
                        m = f32::NAN;
                    } else {
                        m = m.max(v);
                    }
                }
            }
        }
        m
    }

    /// 3x3 windows at stride 2 over `NC` planes against [`window_max`], with the AVX-512
    /// kernel where the CPU has it and without.
    fn three_by_three<
        const NC: usize,
        const H: usize,
        const W: usize,
        const OH: usize,
        const OW: usize,
        const P: usize,
    >(
        x: &[f32],
    ) {
        let run = || {
            let mut y = std::vec![0.0f32; NC * OH * OW];
            max_pool2d::<NC, H, W, 3, 3, OH, OW, 2, 2, 1, 1, P, P, false>(x, &mut y);
            for (i, &v) in y.iter().enumerate() {
                let (p, oh, ow) = (i / (OH * OW), i / OW % OH, i % OW);
                let want = window_max(x, (H, W), 3, P, p, oh, ow);
                let same = (v.is_nan() && want.is_nan()) || v.to_bits() == want.to_bits();
                assert!(same, "3x3 {H}x{W} pad {P} at {i}: {v} != {want}");
            }
        };
        crate::kernels::arch::on_every_path(|_| run());
    }

    /// Stride 2 (the shuffled path, 3x3 pad 1 and 0, and 2x2) against a direct per-window
    /// max, with NaNs among the inputs (they propagate).
    #[test]
    fn stride_two_matches_windows() {
        const H: usize = 9;
        const W: usize = 22;
        let x: [f32; 2 * H * W] = core::array::from_fn(|i| {
            if i % 13 == 5 {
                f32::NAN
            } else {
                (i as f32 * 0.61).sin()
            }
        });
        three_by_three::<2, H, W, 5, 11, 1>(&x);
        // No padding: the last input row and column in no window.
        three_by_three::<2, H, W, 4, 10, 0>(&x);
        let mut y = [0.0f32; 2 * 4 * 11];
        max_pool2d::<2, H, W, 2, 2, 4, 11, 2, 2, 1, 1, 0, 0, false>(&x, &mut y);
        for (i, &v) in y.iter().enumerate() {
            let (p, oh, ow) = (i / 44, i / 11 % 4, i % 11);
            let want = window_max(&x, (H, W), 2, 0, p, oh, ow);
            let same = (v.is_nan() && want.is_nan()) || v.to_bits() == want.to_bits();
            assert!(same, "2x2 at {i}: {v} != {want}");
        }
    }

    /// The microcontrollers' loop for windows inside the input (its unchecked reads run
    /// under Miri): every window's max, the last window ending on the last row and
    /// column, and a window past the input refused.
    #[test]
    fn windows_inside_read_only_the_input() {
        const H: usize = 9;
        const W: usize = 22;
        let x: std::vec::Vec<f32> = (0..2 * H * W)
            .map(|i| {
                if i % 13 == 5 {
                    f32::NAN
                } else {
                    (i as f32 * 0.61).sin()
                }
            })
            .collect();
        // 3x3 at stride 2: rows 0..=8 and columns 0..=21 of the last window, all inside.
        let mut y = std::vec![0.0f32; 2 * 4 * 10];
        super::max_pool_inside::<3, 3, 2, 2, 1, 1>(
            (H, W - 1, 4, 10),
            &x[..2 * H * (W - 1)],
            &mut y,
            false,
        );
        let x_narrow = &x[..2 * H * (W - 1)];
        for (i, &v) in y.iter().enumerate() {
            let (p, oh, ow) = (i / 40, i / 10 % 4, i % 10);
            let want = window_max(x_narrow, (H, W - 1), 3, 0, p, oh, ow);
            let same = (v.is_nan() && want.is_nan()) || v.to_bits() == want.to_bits();
            assert!(same, "3x3 at {i}: {v} != {want}");
        }
        // One output column more reaches column 22 of a 22-wide input.
        let refused = std::panic::catch_unwind(|| {
            let mut y = std::vec![0.0f32; 2 * 4 * 11];
            super::max_pool_inside::<2, 2, 2, 2, 1, 1>((H, W, 4, 11 + 1), &x, &mut y, false);
        });
        assert!(refused.is_err());
    }

    /// 3x3 stride-2 windows over rows of several registers (outputs past 16 and 32, a
    /// row of 70 inputs), with NaNs and an infinity among the inputs.
    #[test]
    fn three_by_three_stride_two_wide_rows() {
        fn check<
            const H: usize,
            const W: usize,
            const OH: usize,
            const OW: usize,
            const P: usize,
        >() {
            let x: std::vec::Vec<f32> = (0..3 * H * W)
                .map(|i| match i % 29 {
                    3 => f32::NAN,
                    17 => f32::INFINITY,
                    _ => (i as f32 * 0.37).cos(),
                })
                .collect();
            three_by_three::<3, H, W, OH, OW, P>(&x);
        }
        check::<7, 70, 4, 35, 1>();
        check::<6, 33, 2, 16, 0>();
        check::<5, 64, 3, 32, 1>();
    }
}
