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
                    *v = super::math::relu(*v);
                }
            }
        }
    }
}

/// [`conv2d`] as matrix products, per group and per tile of `PB` output positions:
/// the input patches of the tile are gathered into `patches` (planned scratch) as the
/// right-hand side of [`super::packed::gemm_packed`], in panels of `NR` positions
/// (`[C/G * KH * KW][NR]` each, zeros where a window leaves the padded input), and the
/// group's weights `w` (`[M/G][C/G * KH * KW]`, the ONNX layout) are the left-hand
/// side. Each output channel's row of the tile is then stored contiguously into NCHW,
/// and a panel is one vector copy per weight tap wherever its positions lie in one
/// output row inside the input.
///
/// On x86-64 CPUs with AVX-512F a convolution of one group with output rows of 8 or at
/// least 16 positions runs as [`super::arch::x86_64::direct::conv2d_avx512`] instead, no
/// patches gathered, where its ring fits in the patches' scratch
/// ([`tinyonnx_layout::direct::fits`]; the planner sizes the scratch for im2col alone, the
/// same on every target).
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
    w: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
    patches: &mut [f32],
) {
    use super::packed::{NR, Strided, gemm_packed, packed_len};
    #[cfg(target_arch = "x86_64")]
    if tinyonnx_layout::direct::fits(
        (C, G),
        (KH, DH, SH),
        (OW, KW, SW, DW),
        (C / G * KH * KW, PB),
    ) && super::arch::x86_64::cpu::avx512()
    {
        // Safety: the CPU has AVX-512F, AVX and FMA (checked just above).
        unsafe {
            super::arch::x86_64::direct::conv2d_avx512::<
                N,
                C,
                H,
                W,
                M,
                KH,
                KW,
                OH,
                OW,
                SH,
                SW,
                DH,
                DW,
                PT,
                PL,
                RELU,
            >(x, w, b, y, patches);
        }
        return;
    }
    let cg = C / G;
    let mg = M / G;
    let k = cg * KH * KW;
    let positions = OH * OW;
    let x = &x[..N * C * H * W];
    let w = &w[..M * k];
    let y = &mut y[..N * M * positions];
    let patches = &mut super::cache_aligned(patches)[..packed_len(k, PB)];
    for n in 0..N {
        for g in 0..G {
            let bias = b.map(|b| Strided {
                values: &b[g * mg..(g + 1) * mg],
                rows: 1,
                cols: 0,
            });
            let xg = &x[(n * C + g * cg) * H * W..(n * C + (g + 1) * cg) * H * W];
            let mut p0 = 0;
            while p0 < positions {
                let pb = PB.min(positions - p0);
                for (i, panel) in patches
                    .chunks_exact_mut(k * NR)
                    .take(pb.div_ceil(NR))
                    .enumerate()
                {
                    let first = p0 + i * NR;
                    pack_panel::<H, W, KH, KW, OW, SH, SW, DH, DW, PT, PL>(
                        xg,
                        first,
                        NR.min(p0 + pb - first),
                        panel,
                    );
                }
                let out = (n * M + g * mg) * positions + p0;
                gemm_packed(
                    (mg, k, pb),
                    &w[g * mg * k..(g + 1) * mg * k],
                    k,
                    patches,
                    bias,
                    &mut y[out..],
                    (positions, 1),
                    RELU,
                );
                p0 += pb;
            }
        }
    }
}

/// One panel of patches: for output positions `first..first + width` (`width <= NR`,
/// the rest of the panel zero), `panel[kk * NR + j]` is input value `kk` (channel,
/// kernel row, kernel column) of position `first + j`'s window, zero outside the input.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pack_panel<
    const H: usize,
    const W: usize,
    const KH: usize,
    const KW: usize,
    const OW: usize,
    const SH: usize,
    const SW: usize,
    const DH: usize,
    const DW: usize,
    const PT: usize,
    const PL: usize,
>(
    xg: &[f32],
    first: usize,
    width: usize,
    panel: &mut [f32],
) {
    use super::packed::NR;
    let (oh0, ow0) = (first / OW, first % OW);
    let mut taps = panel.chunks_exact_mut(NR);
    if width == NR && ow0 + NR <= OW {
        // All positions in output row `oh0`: per kernel row one input row (or zeros),
        // per kernel column a run of input columns `ow0 * SW + kw * DW - PL + j * SW`.
        for plane in xg.chunks_exact(H * W) {
            for kh in 0..KH {
                let ih = (oh0 * SH + kh * DH) as isize - PT as isize;
                let xrow = (ih >= 0 && ih < H as isize)
                    .then(|| &plane[ih as usize * W..(ih as usize + 1) * W]);
                for kw in 0..KW {
                    let Some(dst) = taps.next() else { return };
                    let Some(xrow) = xrow else {
                        dst.fill(0.0);
                        continue;
                    };
                    let iw0 = (ow0 * SW + kw * DW) as isize - PL as isize;
                    if SW == 1 && iw0 >= 0 && iw0 as usize + NR <= W {
                        dst.copy_from_slice(&xrow[iw0 as usize..iw0 as usize + NR]);
                    } else if SW == 2 && iw0 >= 0 && iw0 as usize + 2 * NR <= W {
                        let src = &xrow[iw0 as usize..iw0 as usize + 2 * NR];
                        every_other(dst, src.try_into().expect("2 NR values"));
                    } else {
                        for (j, v) in dst.iter_mut().enumerate() {
                            let iw = iw0 + (j * SW) as isize;
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
        return;
    }
    // Positions across output rows, or a partial panel: element by element.
    for plane in xg.chunks_exact(H * W) {
        for kh in 0..KH {
            for kw in 0..KW {
                let Some(dst) = taps.next() else { return };
                for (j, v) in dst.iter_mut().enumerate() {
                    let (oh, ow) = ((first + j) / OW, (first + j) % OW);
                    let ih = (oh * SH + kh * DH) as isize - PT as isize;
                    let iw = (ow * SW + kw * DW) as isize - PL as isize;
                    let inside =
                        j < width && ih >= 0 && ih < H as isize && iw >= 0 && iw < W as isize;
                    *v = if inside {
                        plane[ih as usize * W + iw as usize]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

/// `dst[j] = src[2 j]` for a stride-2 panel, through [`super::evens`] (the
/// element-by-element loop costs more than the products of a 7x7 stride-2 stem).
#[inline(always)]
fn every_other(dst: &mut [f32], src: &[f32; 16]) {
    use super::{evens, four};
    dst[..4].copy_from_slice(&evens(four(src, 0), four(src, 4)));
    dst[4..8].copy_from_slice(&evens(four(src, 8), four(src, 12)));
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
    const PT: isize,
    const PL: isize,
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
                        let oh = (ih * SH + kh * DH) as isize - PT;
                        if oh < 0 || oh >= OH as isize {
                            continue;
                        }
                        let row = &mut plane[oh as usize * OW..(oh as usize + 1) * OW];
                        for iw in 0..W {
                            let v = xplane[ih * W + iw];
                            for kw in 0..KW {
                                let ow = (iw * SW + kw * DW) as isize - PL;
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
