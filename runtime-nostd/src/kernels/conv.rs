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

/// The geometry of a 2-D convolution, NCHW (1-D runs as height 1): `x [n, c, h, w]`,
/// `m` output channels in `g` groups, a `kh x kw` kernel, `y [n, m, oh, ow]`; strides,
/// dilations and the top and left pads (the bottom and right ones are implied by the
/// output size). The int8 kernels (`quant`) and the f32 ones sized at run time read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Images.
    pub n: usize,
    /// Input channels.
    pub c: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Output channels.
    pub m: usize,
    /// Groups.
    pub g: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// Output height.
    pub oh: usize,
    /// Output width.
    pub ow: usize,
    /// Vertical stride.
    pub sh: usize,
    /// Horizontal stride.
    pub sw: usize,
    /// Vertical dilation.
    pub dh: usize,
    /// Horizontal dilation.
    pub dw: usize,
    /// Top pad.
    pub pt: usize,
    /// Left pad.
    pub pl: usize,
}

/// What a sized convolution copy reads of one node ([`conv2d_sized`],
/// [`conv2d_packed_sized`]): its sizes, the positions of an im2col tile (unused by the
/// direct kernel), and whether a Relu follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvCall {
    /// The sizes.
    pub sizes: ConvGeometry,
    /// Output positions a tile of [`conv2d_packed_sized`].
    pub block: usize,
    /// A Relu after the convolution.
    pub relu: bool,
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
            // On the cores without an FPU the loops over the taps and over the plane (its
            // fill and its Relu) stay rolled: each product there is two library calls,
            // and unrolled copies took flash (SugarZoo's depthwise layer 1,872 -> 844 B
            // on the riscv32). Not for a window of one tap, whose pass LLVM folds (Silero
            // VAD's 1x1 layer 74 B, 384 B hidden), nor on the FPU cores (there SugarZoo
            // took 68 % more instructions, ConvZoo 824 B more flash).
            let soft = cfg!(tinyonnx_soft_float);
            let (taps_h, taps_w, plane) = if soft && KH * KW > 1 {
                let len = super::opaque(plane.len());
                (super::opaque(KH), super::opaque(KW), &mut plane[..len])
            } else {
                (KH, KW, plane)
            };
            let bias = b.map_or(0.0, |b| b[oc]);
            if soft {
                super::fill_rolled(plane, bias);
            } else {
                plane.fill(bias);
            }
            for icg in 0..cg {
                let ic = g * cg + icg;
                let xplane = &x[(n * C + ic) * H * W..(n * C + ic + 1) * H * W];
                for kh in 0..taps_h {
                    let off_h = (kh * DH) as isize - PT as isize;
                    let (oh_lo, oh_hi) = valid_range(OH, H, SH, off_h);
                    for kw in 0..taps_w {
                        let wv = w[((oc * cg + icg) * KH + kh) * KW + kw];
                        let off_w = (kw * DW) as isize - PL as isize;
                        let (ow_lo, ow_hi) = valid_range(OW, W, SW, off_w);
                        let rows = (oh_lo, oh_hi, ow_lo, ow_hi);
                        tap(plane, xplane, wv, rows, (W, OW, SH, SW, off_h, off_w), soft);
                    }
                }
            }
            if RELU {
                // A short plane's Relu a loop on the FPU cores too ([`super::run_mut`]):
                // SugarZoo's 36 values a channel took 664 bytes copied on the Cortex-M4F.
                let from = if soft { 0 } else { super::rolled_from(false) };
                for v in super::run_mut(plane, from) {
                    if soft {
                        super::rolled();
                    }
                    *v = super::math::relu(*v);
                }
            }
        }
    }
}

/// One kernel tap of a direct convolution: `plane[oh][ow] += wv * xplane[ih][iw]` for
/// output rows `oh_lo..oh_hi` and columns `ow_lo..ow_hi` (all inside the input), where
/// `ih = oh * sh + off_h` and `iw = ow * sw + off_w` (`w` input and `ow` output
/// columns); a strided row's loop kept rolled where `rolled`.
#[allow(clippy::type_complexity)]
#[inline(always)]
fn tap(
    plane: &mut [f32],
    xplane: &[f32],
    wv: f32,
    (oh_lo, oh_hi, ow_lo, ow_hi): (usize, usize, usize, usize),
    (w, ow_len, sh, sw, off_h, off_w): (usize, usize, usize, usize, isize, isize),
    rolled: bool,
) {
    for oh in oh_lo..oh_hi {
        let ih = (oh * sh) as isize + off_h;
        let xrow = &xplane[ih as usize * w..(ih as usize + 1) * w];
        let yrow = &mut plane[oh * ow_len..(oh + 1) * ow_len];
        if sw == 1 {
            let start = (ow_lo as isize + off_w) as usize;
            let src = &xrow[start..start + (ow_hi - ow_lo)];
            super::axpy(&mut yrow[ow_lo..ow_hi], wv, src);
        } else {
            for ow in ow_lo..ow_hi {
                if rolled {
                    super::rolled();
                }
                let iw = ((ow * sw) as isize + off_w) as usize;
                yrow[ow] += wv * xrow[iw];
            }
        }
    }
}

/// [`conv2d`] with the sizes as values: one copy for every node the plan marks.
#[inline(never)]
pub fn conv2d_sized(call: &ConvCall, x: &[f32], w: &[f32], b: Option<&[f32]>, y: &mut [f32]) {
    direct(call.sizes, call.relu, x, w, b, y);
}

/// The body of [`conv2d_sized`]: [`conv2d`]'s loops over sizes as values, those over
/// the taps and the plane kept rolled (the copy is for the cores without an FPU,
/// where each product is two library calls).
#[inline(always)]
fn direct(sizes: ConvGeometry, relu: bool, x: &[f32], w: &[f32], b: Option<&[f32]>, y: &mut [f32]) {
    let ConvGeometry {
        n: bn,
        c,
        h,
        w: iw_len,
        m,
        g: groups,
        kh: wkh,
        kw: wkw,
        oh: ooh,
        ow: oow,
        sh,
        sw,
        dh,
        dw,
        pt,
        pl,
    } = sizes;
    let cg = c / groups;
    let mg = m / groups;
    let x = &x[..bn * c * h * iw_len];
    let w = &w[..m * cg * wkh * wkw];
    let y = &mut y[..bn * m * ooh * oow];
    for n in 0..bn {
        for oc in 0..m {
            let g = oc / mg;
            let plane = &mut y[(n * m + oc) * ooh * oow..(n * m + oc + 1) * ooh * oow];
            let bias = b.map_or(0.0, |b| b[oc]);
            super::fill_rolled(plane, bias);
            for icg in 0..cg {
                let ic = g * cg + icg;
                let xplane = &x[(n * c + ic) * h * iw_len..(n * c + ic + 1) * h * iw_len];
                for kh in 0..wkh {
                    let off_h = (kh * dh) as isize - pt as isize;
                    let (oh_lo, oh_hi) = valid_range(ooh, h, sh, off_h);
                    for kw in 0..wkw {
                        let wv = w[((oc * cg + icg) * wkh + kh) * wkw + kw];
                        let off_w = (kw * dw) as isize - pl as isize;
                        let (ow_lo, ow_hi) = valid_range(oow, iw_len, sw, off_w);
                        let rows = (oh_lo, oh_hi, ow_lo, ow_hi);
                        let geometry = (iw_len, oow, sh, sw, off_h, off_w);
                        tap(plane, xplane, wv, rows, geometry, true);
                    }
                }
            }
            if relu {
                for v in plane.iter_mut() {
                    super::rolled();
                    *v = super::math::relu(*v);
                }
            }
        }
    }
}

/// Whether the `_shared` entry points take the copies with sizes as values: on the
/// cores without an FPU, where each product is library calls and the sizes as values
/// cost about 1 % (ConvZoo: 4.6 KB less flash on the Cortex-M3, 3.2 KB on the
/// riscv32). Not on the FPU cores: there ConvZoo took 44 % more instructions for
/// 2.7 KB, a real model (PaddleOCR's classifier) 5-10 % more for 7-12 KB.
const SIZED: bool = cfg!(tinyonnx_soft_float);

/// A node's [`ConvCall`] as a constant, for the sized copies (its address, not
/// eighteen stores a call), passed through `black_box`: given the constant at each
/// call, LLVM's function specialization made a copy of the sized kernel per call (three
/// of 2-4 KB in the CIFAR CNN), and given one constant at all of them, a copy for it.
macro_rules! call_const {
    ($block:expr, $relu:expr) => {
        &const {
            ConvCall {
                sizes: ConvGeometry {
                    n: N,
                    c: C,
                    h: H,
                    w: W,
                    m: M,
                    g: G,
                    kh: KH,
                    kw: KW,
                    oh: OH,
                    ow: OW,
                    sh: SH,
                    sw: SW,
                    dh: DH,
                    dw: DW,
                    pt: PT,
                    pl: PL,
                },
                block: $block,
                relu: $relu,
            }
        }
    };
}

/// [`conv2d`] for a node the plan marks (three or more direct convolutions that would
/// each need a copy): [`conv2d_sized`] where [`SIZED`] or the model asked for flash
/// over speed (`SMALL`, `optimize = size`), else [`conv2d`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn conv2d_shared<
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
    const SMALL: bool,
>(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
) {
    if SIZED || SMALL {
        conv2d_sized(core::hint::black_box(call_const!(0, RELU)), x, w, b, y);
    } else {
        conv2d::<N, C, H, W, M, G, KH, KW, OH, OW, SH, SW, DH, DW, PT, PL, RELU>(x, w, b, y);
    }
}

/// [`conv2d_packed`] for a node the plan marks (three or more im2col convolutions
/// below [`super::SHARED_CHANNELS`] channels a group): [`conv2d_packed_sized`] where
/// [`SIZED`] or `SMALL` (as [`conv2d_shared`]), else [`conv2d_packed`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn conv2d_packed_shared<
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
    const SMALL: bool,
>(
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
    patches: &mut [f32],
) {
    if SIZED || SMALL {
        let call = core::hint::black_box(call_const!(PB, RELU));
        conv2d_packed_sized(call, x, w, b, y, patches);
    } else {
        conv2d_packed::<N, C, H, W, M, G, KH, KW, OH, OW, SH, SW, DH, DW, PT, PL, PB, RELU>(
            x, w, b, y, patches,
        );
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
/// same on every target). On the microcontrollers a convolution of at least
/// [`super::SHARED_CHANNELS`] output channels a group gathers its patches through one
/// function for every such layer ([`pack_panel_shared`]).
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
    // On the microcontrollers a layer of `SHARED_CHANNELS` output channels a group or
    // more gathers its patches through one function for every such layer, the image
    // sizes and the kernel window as values: a copy specialized on all of a layer's
    // sizes is 2-3 KB of flash (the CIFAR CNN had three), a copy per kernel window
    // 0.2-2 KB (Silero VAD's three were 3.2 KB, the one 0.9 KB), and with many channels
    // each gathered value feeds many products (a layer of eight ran 50 % slower so).
    let shared = cfg!(target_os = "none") && M / G >= super::SHARED_CHANNELS;
    im2col::<N, C, H, W, M, G, KH, KW, OH, OW, SH, SW, DH, DW, PT, PL, PB>(
        (x, w, b),
        (y, patches),
        RELU,
        shared,
    );
}

/// The im2col path of [`conv2d_packed`], tile by tile: the panels of a tile gathered by
/// [`pack_panel`] (unrolled for these sizes) or, where `shared`, by
/// [`pack_panel_shared`]; then the tile's products. The tiles' loop and the products'
/// checks stay in the caller, constant sizes, and the gathering's frame is gone before
/// the products' calls (the stack's deepest path). (The differential suite calls it
/// with `shared` on the host.)
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn im2col<
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
>(
    (x, w, b): (&[f32], &[f32], Option<&[f32]>),
    (y, patches): (&mut [f32], &mut [f32]),
    relu: bool,
    shared: bool,
) {
    use super::packed::{NR, Strided, gemm_packed, packed_len};
    let cg = C / G;
    let mg = M / G;
    let k = cg * KH * KW;
    let positions = OH * OW;
    let x = &x[..N * C * H * W];
    let w = &w[..M * k];
    let y = &mut y[..N * M * positions];
    let patches = &mut super::cache_aligned(patches)[..packed_len(k, PB)];
    #[cfg(not(any(target_os = "none", test)))]
    let _ = shared;
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
                // On the microcontrollers, where several tiles are whole panels
                // (`positions`, `PB` and so `p0` multiples of NR), `pb` with its low
                // bits cleared, the same value, through a value the optimizer cannot
                // see through: a build whose convolutions all say so links no code for
                // a partial panel's products (2.2 KB). (LLVM proves `pb` a multiple
                // from the loop, drops the clearing, then loses the fact before the
                // products' test.)
                let pb =
                    if cfg!(target_os = "none") && PB < positions && whole_panels(positions, PB) {
                        core::hint::black_box(pb) & !(NR - 1)
                    } else {
                        pb
                    };
                for (i, panel) in patches
                    .chunks_exact_mut(k * NR)
                    .take(pb.div_ceil(NR))
                    .enumerate()
                {
                    let first = p0 + i * NR;
                    let width = NR.min(p0 + pb - first);
                    #[cfg(any(target_os = "none", test))]
                    if shared {
                        // A constant: its address, not five stores a call.
                        let win = &const {
                            Window {
                                h: H,
                                w: W,
                                ow: OW,
                                pt: PT,
                                pl: PL,
                            }
                        };
                        let taps = &const {
                            Taps {
                                kh: KH,
                                kw: KW,
                                sh: SH,
                                sw: SW,
                                dh: DH,
                                dw: DW,
                            }
                        };
                        pack_panel_shared(win, taps, xg, first, width, panel);
                        continue;
                    }
                    pack_panel::<H, W, KH, KW, OW, SH, SW, DH, DW, PT, PL>(xg, first, width, panel);
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
                    relu,
                );
                p0 += pb;
            }
        }
    }
}

/// [`conv2d_packed`] with the sizes, the tile's positions and the Relu as values: one
/// copy for every node the plan marks, its panels gathered by [`pack_panel_sized`]. Its
/// tiles' loop is [`im2col`]'s written again over values: one body generic over both
/// made the constant copies larger (the digits CNN's two by 120 and 56 B on the
/// Cortex-M4F).
#[inline(never)]
pub fn conv2d_packed_sized(
    call: &ConvCall,
    x: &[f32],
    w: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
    patches: &mut [f32],
) {
    use super::packed::{NR, Strided, gemm_packed, packed_len};
    let ConvGeometry {
        n: bn,
        c,
        h,
        w: iw_len,
        m,
        g: groups,
        kh,
        kw,
        oh,
        ow,
        ..
    } = call.sizes;
    let (block, relu) = (call.block, call.relu);
    let cg = c / groups;
    let mg = m / groups;
    let k = cg * kh * kw;
    let positions = oh * ow;
    let x = &x[..bn * c * h * iw_len];
    let w = &w[..m * k];
    let y = &mut y[..bn * m * positions];
    let patches = &mut super::cache_aligned(patches)[..packed_len(k, block)];
    for n in 0..bn {
        for g in 0..groups {
            let bias = b.map(|b| Strided {
                values: &b[g * mg..(g + 1) * mg],
                rows: 1,
                cols: 0,
            });
            let xg = &x[(n * c + g * cg) * h * iw_len..(n * c + (g + 1) * cg) * h * iw_len];
            let mut p0 = 0;
            while p0 < positions {
                let pb = block.min(positions - p0);
                for (i, panel) in patches
                    .chunks_exact_mut(k * NR)
                    .take(pb.div_ceil(NR))
                    .enumerate()
                {
                    let first = p0 + i * NR;
                    let width = NR.min(p0 + pb - first);
                    pack_panel_sized(&call.sizes, xg, first, width, panel);
                }
                let out = (n * m + g * mg) * positions + p0;
                gemm_packed(
                    (mg, k, pb),
                    &w[g * mg * k..(g + 1) * mg * k],
                    k,
                    patches,
                    bias,
                    &mut y[out..],
                    (positions, 1),
                    relu,
                );
                p0 += pb;
            }
        }
    }
}

/// Whether every tile of `block` out of `positions` output positions is whole panels of
/// `NR`.
const fn whole_panels(positions: usize, block: usize) -> bool {
    use super::packed::NR;
    positions.is_multiple_of(NR) && block.is_multiple_of(NR)
}

/// The image sizes of a convolution as values, for [`pack_panel_shared`]: input rows
/// and columns, output columns, top and left padding.
struct Window {
    h: usize,
    w: usize,
    ow: usize,
    pt: usize,
    pl: usize,
}

/// A convolution's kernel window: rows, columns, strides, dilations.
#[derive(Clone, Copy)]
struct Taps {
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
}

/// [`pack_panel`] with the image's and the kernel window's sizes as values, one function
/// for every layer that gathers so: by runs of positions in one output row, the loops
/// kept rolled; out of line, its frame not under the products'.
#[inline(never)]
fn pack_panel_shared(
    win: &Window,
    taps: &Taps,
    xg: &[f32],
    first: usize,
    width: usize,
    panel: &mut [f32],
) {
    use super::packed::NR;
    // The panel's length hidden: where one convolution calls this function, the
    // optimizer took its constants and unrolled the loop over the input channels.
    let len = super::opaque(panel.len());
    let panel = &mut panel[..len];
    // A run per output row, then zeros in the columns past `width`. A whole panel in
    // one output row is a single run of `NR`: `pack_run`'s tests of `len == NR` make
    // its copies vector copies, so it needs no copy of its own (one was 870 B of the
    // CIFAR CNN's flash on the Cortex-M4F, for 0.27 % of its instructions).
    let (mut oh, mut ow, mut j) = (first / win.ow, first % win.ow, 0);
    while j < width {
        let len = (width - j).min(win.ow - ow);
        pack_run(win, *taps, xg, (oh, ow), (j, len), panel);
        (oh, ow, j) = (oh + 1, 0, j + len);
    }
    if width < NR {
        for tap in panel.chunks_exact_mut(NR) {
            zero(&mut tap[width..]);
        }
    }
}

/// [`pack_panel_shared`] on a [`ConvGeometry`], for [`conv2d_packed_sized`].
#[inline(always)]
fn pack_panel_sized(s: &ConvGeometry, xg: &[f32], first: usize, width: usize, panel: &mut [f32]) {
    let win = Window {
        h: s.h,
        w: s.w,
        ow: s.ow,
        pt: s.pt,
        pl: s.pl,
    };
    let taps = Taps {
        kh: s.kh,
        kw: s.kw,
        sh: s.sh,
        sw: s.sw,
        dh: s.dh,
        dw: s.dw,
    };
    pack_panel_shared(&win, &taps, xg, first, width, panel);
}

/// `dst` filled with zeros by a rolled loop ([`super::fill_rolled`]).
#[inline(always)]
fn zero(dst: &mut [f32]) {
    super::fill_rolled(dst, 0.0);
}

/// Columns `j0..j0 + len` of a panel's tap rows: input value `kk` of the windows of
/// output positions `(oh, ow0 + j)`, `j < len`, one output row. Tap by tap, then
/// channel by channel: what decides a tap's case (its input row inside the image, its
/// run of columns inside the row) is the same for every channel, so the loop over the
/// channels is only the copies.
#[inline(always)]
fn pack_run(
    win: &Window,
    taps: Taps,
    xg: &[f32],
    (oh, ow0): (usize, usize),
    (j0, len): (usize, usize),
    panel: &mut [f32],
) {
    use super::packed::NR;
    let &Window { h, w, pt, pl, .. } = win;
    let Taps {
        kh: rows,
        kw: cols,
        sh,
        sw,
        dh,
        dw,
    } = taps;
    let taps = rows * cols;
    // On the cores without an FPU not unrolled over the window's rows either.
    let taps_h = if cfg!(tinyonnx_soft_float) {
        super::opaque(rows)
    } else {
        rows
    };
    for kh in 0..taps_h {
        // Not unrolled over the window's columns: one copy of the cases below (the
        // CIFAR CNN's flash 412 B less, its instructions 0.1 % more).
        let taps_w = super::opaque(cols);
        let ih = (oh * sh + kh * dh).wrapping_sub(pt);
        for kw in 0..taps_w {
            // Column `j` of this tap's row of channel `c`'s block of the panel.
            let at = (kh * taps_w + kw) * NR + j0;
            let channels = xg
                .chunks_exact(h * w)
                .zip(panel.chunks_exact_mut(taps * NR));
            if ih >= h {
                // A row of padding (or wrapped below zero).
                for (_, block) in channels {
                    zero(&mut block[at..at + len]);
                }
                continue;
            }
            let iw0 = (ow0 * sw + kw * dw) as isize - pl as isize;
            let row = ih * w;
            // On the cores without an FPU only the general gathering: next to products
            // that are library calls, the copies below save little time and take flash.
            if cfg!(tinyonnx_soft_float) {
                for (plane, block) in channels {
                    gather(&mut block[at..at + len], &plane[row..row + w], iw0, sw);
                }
            } else if len == NR && sw == 1 && iw0 >= 0 && iw0 as usize + NR <= w {
                let from = row + iw0 as usize;
                for (plane, block) in channels {
                    super::rolled();
                    block[at..at + NR].copy_from_slice(&plane[from..from + NR]);
                }
            } else if len == NR && sw == 2 && iw0 >= 0 && iw0 as usize + 2 * NR <= w {
                let from = row + iw0 as usize;
                for (plane, block) in channels {
                    super::rolled();
                    let src = &plane[from..from + 2 * NR];
                    every_other(
                        &mut block[at..at + NR],
                        src.try_into().expect("2 NR values"),
                    );
                }
            } else if len == NR && sw == 1 {
                // At the image's left or right edge: the eight values around the row
                // copied as one run where they lie inside `xg` (those of the channels
                // before or after), then the ones outside the row zeroed.
                let (lo, hi) = valid_range(NR, w, 1, iw0);
                for (c, block) in panel.chunks_exact_mut(taps * NR).enumerate() {
                    let dst = &mut block[at..at + NR];
                    // Negative before the first plane: wraps, and `get` finds nothing.
                    let start = ((c * h * w + row) as isize + iw0) as usize;
                    if let Some(src) = xg.get(start..).and_then(|rest| rest.get(..NR)) {
                        dst.copy_from_slice(src);
                        zero(&mut dst[..lo]);
                        zero(&mut dst[hi..]);
                    } else {
                        gather(dst, &xg[c * h * w + row..][..w], iw0, 1);
                    }
                }
            } else {
                for (plane, block) in channels {
                    gather(&mut block[at..at + len], &plane[row..row + w], iw0, sw);
                }
            }
        }
    }
}

/// `dst[j] = xrow[iw0 + j * sw]`, zero where that falls outside the row.
#[inline(always)]
fn gather(dst: &mut [f32], xrow: &[f32], iw0: isize, sw: usize) {
    for (j, v) in dst.iter_mut().enumerate() {
        super::rolled();
        let iw = (iw0 + (j * sw) as isize) as usize;
        *v = if iw < xrow.len() { xrow[iw] } else { 0.0 };
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
    // On the cores without an FPU the loop over the window's rows stays rolled: each
    // product there is two library calls, and the unrolled copies took flash
    // (ConvTransposeZoo's four layers 7,760 -> 5,228 B on the riscv32; hiding the
    // columns' or an input row's count as well made them larger).
    let taps_h = if cfg!(tinyonnx_soft_float) {
        super::opaque(KH)
    } else {
        KH
    };
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
                    for kh in 0..taps_h {
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
