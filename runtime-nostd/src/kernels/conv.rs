//! 2-D convolution (1-D runs as height 1), NCHW, with groups, strides, dilations and
//! zero padding, and an optional fused Relu.

/// The output positions `o` in `0..out` whose input index
/// `o * stride + k * dilation - pad` falls in `0..len`.
#[inline(always)]
pub(crate) fn valid_range(out: usize, len: usize, stride: usize, offset: isize) -> (usize, usize) {
    // input = o * stride + offset must satisfy 0 <= input < len.
    let lo = if offset >= 0 {
        0
    } else {
        ((-offset) as usize).div_ceil(stride)
    };
    let hi_input = len as isize - offset;
    let hi = if hi_input <= 0 {
        0
    } else {
        (hi_input as usize).div_ceil(stride).min(out)
    };
    (lo.min(hi), hi)
}

/// `y[N, M, OH, OW] = conv(x[N, C, H, W], w[M, C/G, KH, KW]) + b`, then `max(y, 0)` when
/// `RELU`. Padding is zero; `PT`/`PL` are the top/left pads (the bottom/right ones are
/// implied by the output size).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn conv2d<
    const N: usize,
    const C: usize,
    const H: usize,
    const W: usize,
    const M: usize,
    const G: usize,
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
    w: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
) {
    let cg = C / G;
    let mg = M / G;
    let x = &x[..N * C * H * W];
    let w = &w[..M * cg * KH * KW];
    let y = &mut y[..N * M * OH * OW];
    for n in 0..N {
        for oc in 0..M {
            let g = oc / mg;
            let plane = &mut y[(n * M + oc) * OH * OW..(n * M + oc + 1) * OH * OW];
            plane.fill(b.map_or(0.0, |b| b[oc]));
            for icg in 0..cg {
                let ic = g * cg + icg;
                let xplane = &x[(n * C + ic) * H * W..(n * C + ic + 1) * H * W];
                for kh in 0..KH {
                    let off_h = (kh * DH) as isize - PT as isize;
                    let (oh_lo, oh_hi) = valid_range(OH, H, SH, off_h);
                    for kw in 0..KW {
                        let wv = w[((oc * cg + icg) * KH + kh) * KW + kw];
                        let off_w = (kw * DW) as isize - PL as isize;
                        let (ow_lo, ow_hi) = valid_range(OW, W, SW, off_w);
                        for oh in oh_lo..oh_hi {
                            let ih = (oh * SH) as isize + off_h;
                            let xrow = &xplane[ih as usize * W..(ih as usize + 1) * W];
                            let yrow = &mut plane[oh * OW..(oh + 1) * OW];
                            if SW == 1 {
                                let start = (ow_lo as isize + off_w) as usize;
                                let src = &xrow[start..start + (ow_hi - ow_lo)];
                                super::axpy(&mut yrow[ow_lo..ow_hi], wv, src);
                            } else {
                                for ow in ow_lo..ow_hi {
                                    let iw = ((ow * SW) as isize + off_w) as usize;
                                    yrow[ow] += wv * xrow[iw];
                                }
                            }
                        }
                    }
                }
            }
            if RELU {
                for v in plane.iter_mut() {
                    *v = v.max(0.0);
                }
            }
        }
    }
}

/// [`conv2d`] as matrix products: for each group and each tile of `PB` output
/// positions, the input patches (`[PB][C/G * KH * KW]`, zeros where the window leaves
/// the padded input) are gathered into `patches` (planned scratch), then multiplied by
/// the weights the macro packed at compile time (`wp`: per group, the
/// `[C/G * KH * KW, M/G]` matrix in panels, see [`super::packed`]). The output tile is
/// stored back into NCHW.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn conv2d_packed<
    const N: usize,
    const C: usize,
    const H: usize,
    const W: usize,
    const M: usize,
    const G: usize,
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
    const RELU: bool,
>(
    x: &[f32],
    wp: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
    patches: &mut [f32],
) {
    let cg = C / G;
    let mg = M / G;
    let k = cg * KH * KW;
    let positions = OH * OW;
    let group_len = super::packed::packed_len(k, mg);
    let x = &x[..N * C * H * W];
    let wp = &wp[..G * group_len];
    let y = &mut y[..N * M * positions];
    let patches = &mut patches[..PB * k];
    for n in 0..N {
        for g in 0..G {
            let bias = b.map(|b| super::packed::Strided {
                values: &b[g * mg..(g + 1) * mg],
                rows: 0,
                cols: 1,
            });
            let xg = &x[(n * C + g * cg) * H * W..(n * C + (g + 1) * cg) * H * W];
            let mut p0 = 0;
            while p0 < positions {
                let pb = PB.min(positions - p0);
                for (pp, patch) in patches.chunks_exact_mut(k).take(pb).enumerate() {
                    let (oh, ow) = ((p0 + pp) / OW, (p0 + pp) % OW);
                    gather::<H, W, KH, KW, SH, SW, DH, DW, PT, PL>(xg, oh, ow, patch);
                }
                let out = (n * M + g * mg) * positions + p0;
                super::packed::gemm_packed(
                    (pb, k, mg),
                    patches,
                    k,
                    &wp[g * group_len..(g + 1) * group_len],
                    bias,
                    &mut y[out..],
                    (1, positions),
                    RELU,
                );
                p0 += pb;
            }
        }
    }
}

/// The input window of output position `(oh, ow)` over every channel of `xg`, in
/// weight order (channel, kernel row, kernel column), zero outside the input.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn gather<
    const H: usize,
    const W: usize,
    const KH: usize,
    const KW: usize,
    const SH: usize,
    const SW: usize,
    const DH: usize,
    const DW: usize,
    const PT: usize,
    const PL: usize,
>(
    xg: &[f32],
    oh: usize,
    ow: usize,
    patch: &mut [f32],
) {
    let mut rows = patch.chunks_exact_mut(KW);
    for plane in xg.chunks_exact(H * W) {
        for kh in 0..KH {
            let Some(out) = rows.next() else { return };
            let ih = (oh * SH + kh * DH) as isize - PT as isize;
            if ih < 0 || ih >= H as isize {
                out.fill(0.0);
                continue;
            }
            let xrow = &plane[ih as usize * W..(ih as usize + 1) * W];
            let iw0 = (ow * SW) as isize - PL as isize;
            if DW == 1 && iw0 >= 0 && iw0 as usize + KW <= W {
                out.copy_from_slice(&xrow[iw0 as usize..iw0 as usize + KW]);
            } else {
                for (kw, v) in out.iter_mut().enumerate() {
                    let iw = iw0 + (kw * DW) as isize;
                    *v = if iw >= 0 && iw < W as isize {
                        xrow[iw as usize]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

/// `ConvTranspose`, NCHW: `y = b` then every input value `x[n, c, ih, iw]` adds
/// `x * w[c, m, kh, kw]` at `(ih * SH + kh * DH - PT, iw * SW + kw * DW - PL)` when that
/// falls inside the output, for the `M/G` output channels of `c`'s group.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn conv_transpose2d<
    const N: usize,
    const C: usize,
    const H: usize,
    const W: usize,
    const M: usize,
    const G: usize,
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
    w: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
) {
    let (cg, mg) = (C / G, M / G);
    let x = &x[..N * C * H * W];
    let w = &w[..C * mg * KH * KW];
    let y = &mut y[..N * M * OH * OW];
    for n in 0..N {
        for m in 0..M {
            y[(n * M + m) * OH * OW..(n * M + m + 1) * OH * OW].fill(b.map_or(0.0, |b| b[m]));
        }
        for c in 0..C {
            let g = c / cg;
            let xplane = &x[(n * C + c) * H * W..(n * C + c + 1) * H * W];
            for ml in 0..mg {
                let m = g * mg + ml;
                let plane = &mut y[(n * M + m) * OH * OW..(n * M + m + 1) * OH * OW];
                let taps = &w[(c * mg + ml) * KH * KW..(c * mg + ml + 1) * KH * KW];
                for ih in 0..H {
                    for kh in 0..KH {
                        let oh = (ih * SH + kh * DH) as isize - PT as isize;
                        if oh < 0 || oh >= OH as isize {
                            continue;
                        }
                        let row = &mut plane[oh as usize * OW..(oh as usize + 1) * OW];
                        for iw in 0..W {
                            let v = xplane[ih * W + iw];
                            for kw in 0..KW {
                                let ow = (iw * SW + kw * DW) as isize - PL as isize;
                                if ow >= 0 && ow < OW as isize {
                                    row[ow as usize] += v * taps[kh * KW + kw];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
