//! 3x3 stride-1 convolution by Winograd's minimal filtering F(2x2, 3x3) (Lavin and
//! Gray, "Fast Algorithms for Convolutional Neural Networks", 2015): each 2x2 block of
//! outputs ("tile") comes from the 4x4 input window under it through
//! `Y = At [ U (.) (Bt d B) ] A`, with `U = G g Gt` the transformed kernel (computed by
//! the macro at compile time). Per tile and channel pair that is 16 products instead of
//! 36, and the 16 products of all channel pairs are 16 matrix products
//! `O_e[M, T] = U_e[M, C] V_e[C, T]` over a block of `T` tiles, through
//! [`super::packed::gemm_packed`] (with AVX-512, [`super::arch::x86_64::packed::gemm_pairs`] over
//! `V_e` in pairs of panels). The transforms only add and subtract, and
//! `G` holds halves, so the rounding is that of a few more additions per output.
//!
//! The matrices, for correlation as `Conv` computes it:
//! `Bt = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]`,
//! `G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]`,
//! `At = [[1, 1, 1, 0], [0, 1, -1, -1]]`.

pub(crate) mod lanes;

use super::packed::{NR, gemm_packed};

use lanes::{
    AT, Block, LANE_TILE, Lanes, Products, TILE_LANE, add, at_row, bt, segments, sub, window_rows,
};

pub use tinyonnx_layout::winograd::scratch_len;
use tinyonnx_layout::winograd::{SLACK, layout};

/// Whether the transforms run a tile at a time, a few scalars in registers, rather than
/// on arrays of lanes: on the microcontrollers, whose FPUs have no vectors to fill and
/// where the arrays spilled to the stack (CnnWinograd's inference took 1,228 bytes at
/// `opt-level = "s"` on the Cortex-M4F, above its 1,040). There the transforms are two
/// functions out of line ([`tiles_in`], [`tiles_out`]) that every convolution shares,
/// their sizes values; the input transform reads the image itself (no padded band), the
/// output transform writes the outputs. Hosts keep the arrays, which become vector
/// operations (a lane at a time, CnnWinograd's two layers ran 1.7 and 2.4 times slower
/// with AVX). The two forms add in the same order, so give the same bits.
pub(crate) const BY_LANE: bool = cfg!(target_os = "none");

/// Whether passes of fewer than four element rows beat the im2col kernel
/// (`conv::conv2d_packed`, the direct kernel where it applies) on this CPU: not with
/// AVX-512, where the direct kernel runs near the FMA units' peak and one-row passes
/// repeat the window loads and the output reads four times (measured on a Xeon with
/// two 512-bit FMA units, 64 -> 128 channels over 8x8: one-row passes 60 us, direct 56,
/// all 16 elements a pass 37); with 256-bit or scalar products the 2.25x fewer products
/// win. The macro emits both kernels for such a convolution, in the same scratch.
#[inline(always)]
pub fn passes_pay() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !super::arch::x86_64::cpu::avx512()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}

/// `y[N, M, OH, OW] = conv(x[N, C, H, W], w) + b` for a 3x3 kernel, stride 1,
/// dilation 1, one group, zero padding `PT`/`PL` at the top/left (bottom/right implied by
/// `OH`/`OW`), then `max(y, 0)` when `RELU`. `u` is the transformed kernel
/// `[16][M][C]` (element `e = 4 a + b` of `G g Gt` for output channel `m` and input
/// channel `c` at `(e * M + m) * C + c`); tiles run in blocks of `TB`.
///
/// Each block runs in passes of `R` rows `a` of the 4x4 elements (`R` = 1, 2 or 4): a
/// pass transforms its `4 R` elements of the inputs, multiplies them and adds their
/// share of the outputs (`At` row `p` times the pass's rows) into `y`, so the scratch
/// holds `4 R` element blocks instead of 16, for one more read and write of the block's
/// outputs per pass.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn conv3x3_winograd<
    const N: usize,
    const C: usize,
    const H: usize,
    const W: usize,
    const M: usize,
    const OH: usize,
    const OW: usize,
    const PT: usize,
    const PL: usize,
    const TB: usize,
    const R: usize,
    const RELU: bool,
>(
    x: &[f32],
    u: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
    scratch: &mut [f32],
) {
    winograd::<N, C, H, W, M, OH, OW, PT, PL, TB, R, RELU, BY_LANE>(x, u, b, y, scratch);
}

/// [`conv3x3_winograd`] with its transforms' form chosen ([`BY_LANE`]): the tests run
/// both on the host.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn winograd<
    const N: usize,
    const C: usize,
    const H: usize,
    const W: usize,
    const M: usize,
    const OH: usize,
    const OW: usize,
    const PT: usize,
    const PL: usize,
    const TB: usize,
    const R: usize,
    const RELU: bool,
    const BY_LANE: bool,
>(
    x: &[f32],
    u: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
    scratch: &mut [f32],
) {
    const {
        assert!(
            R == 1 || R == 2 || R == 4,
            "passes of 1, 2 or 4 element rows"
        )
    };
    let tiles_w = OW.div_ceil(2);
    let tiles = OH.div_ceil(2) * tiles_w;
    let l = layout((C, M, OH, OW), TB, R);
    let (vs, os, ors, hp, wp, len) = (l.vs, l.os, l.ors, l.band_rows, l.band_cols, l.len);
    let x = &x[..N * C * H * W];
    let u = &u[..16 * M * C];
    let y = &mut y[..N * M * OH * OW];
    let (v, rest) =
        super::cache_aligned(scratch)[..len - super::ALIGN_SLACK].split_at_mut(4 * R * vs);
    let (o, rest) = rest.split_at_mut(4 * R * os);
    let padded = rest;
    #[cfg(target_arch = "x86_64")]
    let avx = super::arch::x86_64::cpu::avx_fma();
    #[cfg(not(target_arch = "x86_64"))]
    let avx = false;
    // The 512-bit input transform reads the input itself, the padding masked.
    let direct = paired::<TB>(avx);
    for n in 0..N {
        let xn = &x[n * C * H * W..(n + 1) * C * H * W];
        let yn = &mut y[n * M * OH * OW..(n + 1) * M * OH * OW];
        let mut t0 = 0;
        while t0 < tiles {
            let tiles = (t0, TB.min(tiles - t0), tiles_w);
            // The padded rows under the block's tile rows ty0..=ty1.
            let (ty0, ty1) = (t0 / tiles_w, (t0 + tiles.1 - 1) / tiles_w);
            // The microcontrollers' input transform reads the image itself.
            if !direct && !BY_LANE {
                band::<C, H, W, PT, PL>(xn, padded, (2 * ty0, 2 * (ty1 - ty0) + 4), (hp, wp));
            }
            let geometry = (vs, 2 * ty0, hp, wp);
            // The passes in order: the first to touch an output row sets it.
            let job = ((&*padded, xn), geometry, u, b, tiles, avx);
            pass::<C, H, W, PT, PL, M, OH, OW, TB, R, 0, RELU, BY_LANE>(job, (v, o, (os, ors)), yn);
            if R == 1 {
                pass::<C, H, W, PT, PL, M, OH, OW, TB, R, 1, RELU, BY_LANE>(
                    job,
                    (v, o, (os, ors)),
                    yn,
                );
            }
            if R <= 2 {
                pass::<C, H, W, PT, PL, M, OH, OW, TB, R, 2, RELU, BY_LANE>(
                    job,
                    (v, o, (os, ors)),
                    yn,
                );
            }
            if R == 1 {
                pass::<C, H, W, PT, PL, M, OH, OW, TB, R, 3, RELU, BY_LANE>(
                    job,
                    (v, o, (os, ors)),
                    yn,
                );
            }
            t0 += TB;
        }
    }
}

/// Whether a block's transformed inputs are laid out in pairs of panels, `[C][2 NR]`
/// each (panels `2 q` and `2 q + 1` side by side), for the 512-bit input transform
/// (which reads the image itself, no padded band) and [`super::arch::x86_64::packed::gemm_pairs`]:
/// AVX-512F, and blocks of whole pairs of panels. Otherwise one panel `[C][NR]` after
/// another, as [`gemm_packed`] reads them.
#[inline(always)]
fn paired<const TB: usize>(avx: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx && TB.div_ceil(NR).is_multiple_of(2) && super::arch::x86_64::cpu::avx512()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = avx;
        false
    }
}

/// What every pass over a block reads: the padded band (unused by the 512-bit input
/// transform) and the image, the band's geometry (transformed block stride, first padded
/// row, band rows and columns), the transformed kernel, the bias, the block and whether
/// the CPU has AVX and FMA.
type Job<'a> = (
    (&'a [f32], &'a [f32]),
    (usize, usize, usize, usize),
    &'a [f32],
    Option<&'a [f32]>,
    Block,
    bool,
);

/// One pass over a block: element rows `A0..A0 + R` transformed into `v`, multiplied
/// into `o` (blocks `os` apart, rows `ors`), and their share of the outputs added into
/// `yn`.
#[allow(clippy::type_complexity)]
#[inline(always)]
fn pass<
    const C: usize,
    const H: usize,
    const W: usize,
    const PT: usize,
    const PL: usize,
    const M: usize,
    const OH: usize,
    const OW: usize,
    const TB: usize,
    const R: usize,
    const A0: usize,
    const RELU: bool,
    const BY_LANE: bool,
>(
    ((padded, xn), geometry, u, b, tiles, avx): Job<'_>,
    (v, o, (os, ors)): (&mut [f32], &mut [f32], (usize, usize)),
    yn: &mut [f32],
) {
    let vs = geometry.0;
    let paired = paired::<TB>(avx);
    let image = (H, W, PT, PL);
    #[cfg(target_arch = "x86_64")]
    if paired {
        // Safety: the CPU has AVX-512F.
        unsafe {
            super::arch::x86_64::winograd::inputs_avx512::<C, H, W, PT, PL, R, A0>(xn, v, vs, tiles)
        };
    } else if avx {
        // Safety: the CPU has AVX and FMA.
        unsafe { inputs_avx::<C, R, A0, BY_LANE>((padded, xn), image, v, geometry, tiles) };
    } else {
        inputs::<C, R, A0, false, BY_LANE>((padded, xn), image, v, geometry, tiles);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (xn, paired);
        inputs::<C, R, A0, false, BY_LANE>((padded, xn), image, v, geometry, tiles);
    }
    // The pass's products O_e = U_e V_e, over whole panels (a partial panel's tiles are
    // not its first lanes, see `LANE_TILE`), or whole pairs of them.
    for k in 0..4 * R {
        let e = 4 * A0 + k;
        let (ue, ve, oe) = (
            &u[e * M * C..(e + 1) * M * C],
            &v[k * vs..(k + 1) * vs],
            &mut o[k * os..(k + 1) * os],
        );
        #[cfg(target_arch = "x86_64")]
        if paired {
            // Safety: the CPU has AVX-512F (`paired`); `ors` holds whole pairs.
            unsafe {
                super::arch::x86_64::packed::gemm_pairs((M, C, tiles.1), (ue, C), ve, (oe, ors))
            };
            continue;
        }
        gemm_packed(
            (M, C, tiles.1.div_ceil(NR) * NR),
            ue,
            C,
            ve,
            None,
            oe,
            (ors, 1),
            false,
        );
    }
    let products = (&*o, (os, ors));
    #[cfg(target_arch = "x86_64")]
    if avx && super::arch::x86_64::cpu::avx512() {
        // Safety: the CPU has AVX-512F.
        unsafe {
            super::arch::x86_64::winograd::outputs_avx512::<M, OH, OW, R, A0, RELU>(
                products, b, yn, tiles,
            )
        };
    } else if avx {
        // Safety: the CPU has AVX and FMA.
        unsafe { outputs_avx::<M, OH, OW, R, A0, RELU, BY_LANE>(products, b, yn, tiles) };
    } else {
        outputs::<M, OH, OW, R, A0, RELU, false, BY_LANE>(products, b, yn, tiles);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = avx;
        outputs::<M, OH, OW, R, A0, RELU, false, BY_LANE>(products, b, yn, tiles);
    }
}

/// Copies `rows` rows from padded row `r0` of one image `[C, H, W]` into `padded`
/// (after `SLACK` values): per channel a band of `hp x wp`, the image at padded row `PT`,
/// column `PL`, zeros around it.
fn band<const C: usize, const H: usize, const W: usize, const PT: usize, const PL: usize>(
    xn: &[f32],
    padded: &mut [f32],
    (r0, rows): (usize, usize),
    (hp, wp): (usize, usize),
) {
    let planes = &mut padded[SLACK..SLACK + C * hp * wp];
    for (plane, src) in planes.chunks_exact_mut(hp * wp).zip(xn.chunks_exact(H * W)) {
        for (r, row) in (r0..).zip(plane.chunks_exact_mut(wp).take(rows)) {
            if r < PT || r >= PT + H {
                row.fill(0.0);
                continue;
            }
            let (left, rest) = row.split_at_mut(PL);
            let (mid, right) = rest.split_at_mut(W);
            left.fill(0.0);
            mid.copy_from_slice(&src[(r - PT) * W..(r - PT + 1) * W]);
            right.fill(0.0);
        }
    }
}

/// [`inputs`] compiled with AVX and FMA (8 lanes a register).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
fn inputs_avx<const C: usize, const R: usize, const A0: usize, const BY_LANE: bool>(
    sources: (&[f32], &[f32]),
    image: (usize, usize, usize, usize),
    v: &mut [f32],
    geometry: (usize, usize, usize, usize),
    block: Block,
) {
    inputs::<C, R, A0, true, BY_LANE>(sources, image, v, geometry, block);
}

/// The input transform of a block for element rows `A0..A0 + R`, a panel of `NR` tiles
/// and one channel at a time: `v[k * vs..]` is element `4 A0 + k` of `Bt d B`, `[C, tiles]`
/// in panels, from the padded input band (`hp x wp` per channel, starting at padded row
/// `r0`), a panel's windows gathered in lanes (`windows`), which hosts hold in vector
/// registers. With `BY_LANE`, [`tiles_in`], which reads the image itself.
#[inline(always)]
fn inputs<const C: usize, const R: usize, const A0: usize, const AVX: bool, const BY_LANE: bool>(
    (padded, xn): (&[f32], &[f32]),
    image: (usize, usize, usize, usize),
    v: &mut [f32],
    (vs, r0, hp, wp): (usize, usize, usize, usize),
    (t0, tb, tiles_w): Block,
) {
    let rows = const { window_rows(A0, R) };
    if BY_LANE {
        let (h, w, pt, pl) = image;
        tiles_in::<R, A0>(xn, v, (C, h, w, pt, pl), vs, (t0, tb, tiles_w));
        return;
    }
    for p in 0..tb.div_ceil(NR) {
        let first = t0 + p * NR;
        let width = NR.min(t0 + tb - first);
        for c in 0..C {
            let base = SLACK + c * hp * wp;
            let at = p * C * NR + c * NR;
            let d = &mut [[0.0; NR]; 16];
            windows::<AVX>(d, padded, (base, r0, wp), (first, width, tiles_w), rows);
            // Row a of Bt over the window's rows, then every row of Bt over columns.
            for k in 0..R {
                let mut s = [[0.0; NR]; 4];
                for (j, s) in s.iter_mut().enumerate() {
                    *s = match A0 + k {
                        0 => sub(&d[j], &d[8 + j]),
                        1 => add(&d[4 + j], &d[8 + j]),
                        2 => sub(&d[8 + j], &d[4 + j]),
                        _ => sub(&d[4 + j], &d[12 + j]),
                    };
                }
                let elements = bt(&s[0], &s[1], &s[2], &s[3]);
                for (e, lanes) in (4 * k..).zip(&elements) {
                    v[e * vs + at..e * vs + at + NR].copy_from_slice(lanes);
                }
            }
        }
    }
}

/// The input transform of a block (`inputs` with `BY_LANE`), a tile at a time and, for
/// each tile, a channel at a time: the window's rows read straight from the image `xn`
/// (`c` planes of `h x w`, padding `pt` above and `pl` left) into registers, the
/// elements into `v` (blocks `vs` apart, each `[C][NR]` a panel). Out of line and its
/// sizes values, one copy for every convolution of the same passes: a copy a
/// convolution, inlined, took 1.0-2.4 KB on the Cortex-M4F.
#[inline(never)]
fn tiles_in<const R: usize, const A0: usize>(
    xn: &[f32],
    v: &mut [f32],
    (c, h, w, pt, pl): (usize, usize, usize, usize, usize),
    vs: usize,
    (t0, tb, tiles_w): Block,
) {
    let rows = const { window_rows(A0, R) };
    let (plane, panels) = (span(h, w, 0, 0), tb.div_ceil(NR));
    // One bounds check a call for the image and the panels' lanes of the 4R element
    // blocks, not one a value; their lengths are checked for overflow (`span`), so no
    // index below them wraps.
    let xn = &xn[..span(c, plane, 0, 0)];
    let v = &mut v[..span(4 * R - 1, vs, span(panels, c, 0, 0), NR)];
    // The lanes past the block's tiles keep what they held: a product's column reads
    // its own lane only, and the output transform leaves those columns out.
    each_tile((t0, tb, tiles_w), |p, l, (ty, tx)| {
        // The window's top left corner at padded row `y`, column `x`; inside the
        // image, or over the padding with its rows `i0..i1` and columns `j0..j1`
        // inside (the ends hidden: at most 4, the loops were unrolled whole).
        let (y, x) = (2 * ty, 2 * tx);
        let inside = y >= pt && y - pt + 4 <= h && x >= pl && x - pl + 4 <= w;
        let (i0, i1) = (pt.saturating_sub(y), (h + pt).saturating_sub(y).min(4));
        let (j0, j1) = (pl.saturating_sub(x), (w + pl).saturating_sub(x).min(4));
        let (i1, j1) = (super::opaque(i1), super::opaque(j1));
        for ch in 0..c {
            super::rolled();
            // The window's rows `rows` (those the pass's rows of `Bt` read), the
            // padding zeros.
            let mut d = [[0.0; 4]; 4];
            if inside {
                let corner = ch * plane + (y - pt) * w + x - pl;
                for (i, row) in d.iter_mut().enumerate() {
                    if rows & (1 << i) != 0 {
                        for (j, v) in row.iter_mut().enumerate() {
                            // Safety: the window lies inside the image (`inside`),
                            // so `corner + i w + j` is below `(ch + 1) plane <=
                            // xn.len()`.
                            *v = unsafe { *xn.get_unchecked(corner + i * w + j) };
                        }
                    }
                }
            } else {
                for i in i0..i1 {
                    for j in j0..j1 {
                        super::rolled();
                        // Safety: `i0 <= i < i1` puts `y + i - pt` in `0..h`,
                        // `j0 <= j < j1` puts `x + j - pl` in `0..w`: the index is
                        // below `(ch + 1) plane <= xn.len()`. (`i, j < 4`: the
                        // masks only drop the bounds checks.)
                        d[i & 3][j & 3] = unsafe {
                            *xn.get_unchecked(ch * plane + (y + i - pt) * w + x + j - pl)
                        };
                    }
                }
            }
            // Row a of Bt over the window's rows, then every row of Bt over
            // columns.
            let at = (p * c + ch) * NR + l;
            for k in 0..R {
                let s: [f32; 4] = core::array::from_fn(|j| match A0 + k {
                    0 => d[0][j] - d[2][j],
                    1 => d[1][j] + d[2][j],
                    2 => d[2][j] - d[1][j],
                    _ => d[1][j] - d[3][j],
                });
                let elements = [s[0] - s[2], s[1] + s[2], s[2] - s[1], s[1] - s[3]];
                for (e, value) in (4 * k..).zip(elements) {
                    // Safety: `e < 4 R`, `at < panels c NR`, so `e vs + at <
                    // (4 R - 1) vs + panels c NR = v.len()`.
                    unsafe { *v.get_unchecked_mut(e * vs + at) = value };
                }
            }
        }
    });
}

/// The output transform of a block (`outputs` with `BY_LANE`), a tile at a time and,
/// for each tile, an output channel at a time: both output rows' shares from each
/// element row's `t_a = O_a A` in registers (products blocks `os` apart, rows `ors`),
/// combined straight into `yn` (`m` planes of `oh_n x ow_n`). Out of line and its sizes
/// values, as [`tiles_in`].
#[inline(never)]
fn tiles_out<const R: usize, const A0: usize, const RELU: bool>(
    yn: &mut [f32],
    (m, oh_n, ow_n): (usize, usize, usize),
    b: Option<&[f32]>,
    (o, os, ors): (&[f32], usize, usize),
    (t0, tb, tiles_w): Block,
) {
    let (plane, panels) = (span(oh_n, ow_n, 0, 0), tb.div_ceil(NR));
    if m == 0 || panels == 0 {
        return;
    }
    // One bounds check a call for the planes, the biases and the panels' lanes of the
    // 4R product blocks, as in `tiles_in`.
    let yn = &mut yn[..span(m, plane, 0, 0)];
    let b = b.map(|b| &b[..m]);
    let o = &o[..span(4 * R - 1, os, 1, span(m - 1, ors, panels, NR))];
    each_tile((t0, tb, tiles_w), |p, l, (ty, tx)| {
        for mo in 0..m {
            super::rolled();
            let bias = b.map_or(0.0, |b| b[mo]);
            let at = mo * ors + p * NR + l;
            // -0.0 + t is t exactly: a share starts at -0.0.
            let mut shares = [[-0.0; 2]; 2];
            for k in 0..R {
                // Safety: `4 k + q < 4 R`, `at < (m - 1) ors + panels NR`, so the
                // index is below `o.len()`.
                let o = |q: usize| unsafe { *o.get_unchecked((4 * k + q) * os + at) };
                let t = [o(0) + (o(1) + o(2)), (o(1) - o(2)) - o(3)];
                for (ys, coef) in shares.iter_mut().zip(&AT) {
                    for (y, t) in ys.iter_mut().zip(t) {
                        *y = match coef[A0 + k] {
                            1 => *y + t,
                            -1 => *y - t,
                            _ => *y,
                        };
                    }
                }
            }
            for (row, (coef, ys)) in AT.iter().zip(shares).enumerate() {
                let oh = 2 * ty + row;
                if !reached::<R, A0>(coef) || oh >= oh_n {
                    continue;
                }
                for (col, v) in ys.into_iter().enumerate() {
                    let ow = 2 * tx + col;
                    if ow < ow_n {
                        // Safety: `mo < m`, `oh < oh_n` and `ow < ow_n`, so the
                        // index is below `m plane = yn.len()`.
                        let y = unsafe { yn.get_unchecked_mut(mo * plane + oh * ow_n + ow) };
                        combine::<R, A0, RELU>(row, y, v, bias);
                    }
                }
            }
        }
    });
}

/// `a b + c d`, checked: the tile transforms slice to such lengths once and index below
/// them unchecked, so a wrapped length would let an index reach outside its slice.
fn span(a: usize, b: usize, c: usize, d: usize) -> usize {
    a.checked_mul(b)
        .zip(c.checked_mul(d))
        .and_then(|(x, y)| x.checked_add(y))
        .expect("Winograd sizes overflow")
}

/// Calls `f(p, l, (ty, tx))` for each tile of a block (`t0`, `tb` tiles, `tiles_w` a
/// row), in order: its panel `p`, its lane `l` in the panel, its tile row and column.
#[inline(always)]
fn each_tile((t0, tb, tiles_w): Block, mut f: impl FnMut(usize, usize, (usize, usize))) {
    for p in 0..tb.div_ceil(NR) {
        let first = t0 + p * NR;
        for t in 0..NR.min(t0 + tb - first) {
            super::rolled();
            f(
                p,
                TILE_LANE[t],
                ((first + t) / tiles_w, (first + t) % tiles_w),
            );
        }
    }
}

/// Whether a pass over element rows `A0..A0 + R` adds to an output row (`coef`, its row
/// of `At`).
#[inline(always)]
fn reached<const R: usize, const A0: usize>(coef: &[i8; 4]) -> bool {
    (A0..A0 + R).any(|a| coef[a] != 0)
}

/// What a pass over element rows `A0..A0 + R` does to output row `row` with its share
/// `v`: sets it (with the bias) if it holds the row's first element row, else adds to
/// it; clamps it (`RELU`) if it holds the row's last.
#[inline(always)]
fn combine<const R: usize, const A0: usize, const RELU: bool>(
    row: usize,
    d: &mut f32,
    v: f32,
    bias: f32,
) {
    let pass = A0..A0 + R;
    match (pass.contains(&row), RELU && pass.contains(&(row + 2))) {
        (true, false) => *d = v + bias,
        (true, true) => *d = super::math::relu(v + bias),
        (false, false) => *d += v,
        (false, true) => *d = super::math::relu(*d + v),
    }
}

/// [`outputs`] compiled with AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
fn outputs_avx<
    const M: usize,
    const OH: usize,
    const OW: usize,
    const R: usize,
    const A0: usize,
    const RELU: bool,
    const BY_LANE: bool,
>(
    products: Products<'_>,
    b: Option<&[f32]>,
    yn: &mut [f32],
    block: Block,
) {
    outputs::<M, OH, OW, R, A0, RELU, true, BY_LANE>(products, b, yn, block);
}

/// The output transform of a pass over element rows `A0..A0 + R`, one output channel
/// and a panel of tiles at a time, from the products (block `k` at `k * os`, rows `ors`
/// apart): each element row `a` gives `t_a = O_a A` (two values per tile), and output
/// row `p` gets `At[p][a] t_a`, set (with the bias) by the pass holding its first row,
/// added to after, and clamped (with `RELU`) by the pass holding its last. With
/// `BY_LANE`, [`tiles_out`].
#[inline(always)]
fn outputs<
    const M: usize,
    const OH: usize,
    const OW: usize,
    const R: usize,
    const A0: usize,
    const RELU: bool,
    const AVX: bool,
    const BY_LANE: bool,
>(
    (o, (os, ors)): Products<'_>,
    b: Option<&[f32]>,
    yn: &mut [f32],
    (t0, tb, tiles_w): Block,
) {
    if BY_LANE {
        tiles_out::<R, A0, RELU>(yn, (M, OH, OW), b, (o, os, ors), (t0, tb, tiles_w));
        return;
    }
    for m in 0..M {
        let bias = b.map_or(0.0, |b| b[m]);
        let out = &mut yn[m * OH * OW..(m + 1) * OH * OW];
        for p in 0..tb.div_ceil(NR) {
            let first = t0 + p * NR;
            let width = NR.min(t0 + tb - first);
            // Lanes past `width` hold stale values; the stores leave them out.
            let at = m * ors + p * NR;
            let lanes = |k: usize| -> &Lanes {
                o[k * os + at..k * os + at + NR]
                    .try_into()
                    .expect("NR values")
            };
            let tile = (first, width, tiles_w);
            // Output row `row` gets this pass's share `ys`.
            let mut store = |row: usize, ys: &[Lanes; 2]| {
                store_row::<OH, OW, AVX>(out, ys, row, tile, |d, v| {
                    combine::<R, A0, RELU>(row, d, v, bias);
                });
            };
            // The element rows' `t_a = O_a A`, then each row's share.
            let mut ts = [[[0.0; NR]; 2]; R];
            for (k, t) in ts.iter_mut().enumerate() {
                *t = at_row(
                    lanes(4 * k),
                    lanes(4 * k + 1),
                    lanes(4 * k + 2),
                    lanes(4 * k + 3),
                );
            }
            for (row, coef) in AT.iter().enumerate() {
                if !reached::<R, A0>(coef) {
                    continue;
                }
                // -0.0 + t is t exactly: a share starts at -0.0.
                let mut ys = [[-0.0; NR]; 2];
                for (t, &c) in ts.iter().zip(&coef[A0..]) {
                    for (y, t) in ys.iter_mut().zip(t) {
                        *y = match c {
                            1 => add(y, t),
                            -1 => sub(y, t),
                            _ => *y,
                        };
                    }
                }
                store(row, &ys);
            }
        }
    }
}

/// The 4x4 input windows of tiles `first..first + width` of one channel's padded band
/// (padded row `r0` at `padded[base]`, rows `wp` apart), into 16 lanes `d` (`[4 i + j][l]`:
/// row `i`, column `j` of tile `first + LANE_TILE[l]`'s window; lanes of tiles past
/// `width`, and window rows not in the bit set `rows`, zero). Per tile row the panel
/// touches, each window row is one run of columns split into four stride-2 lane
/// vectors; a panel across tile rows merges its runs lane by lane.
#[inline(always)]
fn windows<const AVX: bool>(
    d: &mut [Lanes; 16],
    padded: &[f32],
    (base, r0, wp): (usize, usize, usize),
    (first, width, tiles_w): Block,
    rows: u8,
) {
    *d = [[0.0; NR]; 16];
    let run = |ty: usize, tx: usize, ls: usize, i: usize, j: usize| -> &[f32; 2 * NR] {
        // Lane l's column j is run[2 l]: columns from 2 (tx - ls) + j, which may reach
        // back into the previous row (or the slack) for lanes before `ls`.
        let at = base + (2 * ty + i - r0) * wp + 2 * tx + j - 2 * ls;
        padded[at..at + 2 * NR].try_into().expect("2 NR values")
    };
    let rows = (0..4).filter(move |i| rows & (1 << i) != 0);
    for (ty, tx, ls, le) in segments(first, width, tiles_w) {
        if ls == 0 && le == NR {
            for i in rows.clone() {
                for j in 0..4 {
                    d[4 * i + j] = every_other::<AVX>(run(ty, tx, 0, i, j));
                }
            }
            continue;
        }
        for i in rows.clone() {
            for j in 0..4 {
                let lanes = every_other::<AVX>(run(ty, tx, ls, i, j));
                for (l, (v, new)) in d[4 * i + j].iter_mut().zip(lanes).enumerate() {
                    *v = if LANE_TILE[l] >= ls && LANE_TILE[l] < le {
                        new
                    } else {
                        *v
                    };
                }
            }
        }
    }
}

/// Combines (`f(dst, value)`) output row `p` of tiles `first..first + width` (`ys[q]`:
/// column `q`) into one output plane, leaving out those past the bottom or right edge.
#[inline(always)]
fn store_row<const OH: usize, const OW: usize, const AVX: bool>(
    out: &mut [f32],
    ys: &[Lanes; 2],
    p: usize,
    (first, width, tiles_w): Block,
    f: impl Fn(&mut f32, f32),
) {
    for (ty, tx, ls, le) in segments(first, width, tiles_w) {
        let oh = 2 * ty + p;
        if oh >= OH {
            continue;
        }
        // Lanes ls..le are output columns 2 tx.., clipped at the right edge.
        let cols = (2 * (le - ls)).min(OW - 2 * tx);
        let at = oh * OW + 2 * tx;
        let mut run = [0.0; 2 * NR];
        interleave::<AVX>(&mut run, &ys[0], &ys[1]);
        if cols == 2 * NR {
            let dst: &mut [f32; 2 * NR] = (&mut out[at..at + 2 * NR]).try_into().expect("2 NR");
            for (d, v) in dst.iter_mut().zip(run) {
                f(d, v);
            }
        } else {
            for (d, v) in out[at..at + cols].iter_mut().zip(&run[2 * ls..]) {
                f(d, *v);
            }
        }
    }
}

/// `lanes[l] = src[2 LANE_TILE[l]]`: the even values of a run, in lane order. With `AVX`
/// (the caller is compiled with it) one 256-bit shuffle, else two [`super::evens`].
#[inline(always)]
fn every_other<const AVX: bool>(src: &[f32; 2 * NR]) -> Lanes {
    let mut lanes = [0.0; NR];
    #[cfg(target_arch = "x86_64")]
    if AVX {
        // Safety: `AVX` is only set in code compiled for (and run on) AVX.
        unsafe { super::arch::x86_64::winograd::evens_avx(src, &mut lanes) };
    } else {
        use super::{evens, four};
        lanes[..4].copy_from_slice(&evens(four(src, 0), four(src, 8)));
        lanes[4..].copy_from_slice(&evens(four(src, 4), four(src, 12)));
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (v, t) in lanes.iter_mut().zip(LANE_TILE) {
        *v = src[2 * t];
    }
    lanes
}

/// `dst[2 t] = a[lane of t]`, `dst[2 t + 1] = b[lane of t]` for tiles `t` in order:
/// with `AVX` two 256-bit unpacks, else four SSE ones on x86-64 (stores of single
/// values then wide loads would stall store forwarding).
#[inline(always)]
fn interleave<const AVX: bool>(dst: &mut [f32; 2 * NR], a: &Lanes, b: &Lanes) {
    #[cfg(target_arch = "x86_64")]
    if AVX {
        // Safety: `AVX` is only set in code compiled for (and run on) AVX.
        unsafe { super::arch::x86_64::winograd::interleave_avx(dst, a, b) };
    } else {
        super::arch::x86_64::winograd::interleave_sse(dst, a, b);
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (l, t) in LANE_TILE.into_iter().enumerate() {
        dst[2 * t] = a[l];
        dst[2 * t + 1] = b[l];
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::{BY_LANE, scratch_len, winograd};

    /// The two transform forms on a small convolution, so that Miri runs the
    /// microcontrollers' unchecked loads and stores (the differential suite's shapes
    /// would take it hours): a partial panel (12 tiles), windows over the padding on every side, a
    /// bias and Relu, all 16 elements a pass and one element row a pass. The forms add
    /// in the same order: the same bits.
    #[test]
    fn the_tile_form_matches_the_lane_form() {
        const C: usize = 3;
        const M: usize = 4;
        // Blocks of three panels: an odd count keeps x86-64 off the 512-bit transforms,
        // which both forms would share.
        const TB: usize = 24;
        // Magnitudes over four decades, so that a sum regrouped rounds differently.
        let x: std::vec::Vec<f32> = (0..C * 5 * 7)
            .map(|i| (i as f32 * 0.37).sin() * [0.01, 1.0, 100.0][i % 3])
            .collect();
        let u: std::vec::Vec<f32> = (0..16 * M * C).map(|i| (i as f32 * 0.11).cos()).collect();
        let b = [0.5, -0.25, 0.0, 1.0];
        let run = |tile_form: bool, passes: usize| {
            let mut y = std::vec![f32::NAN; M * 5 * 7];
            let mut scratch = std::vec![f32::NAN; scratch_len(C, M, 5, 7, TB, passes)];
            let args = (&x[..], &u[..], Some(&b[..]));
            match (tile_form == BY_LANE, passes) {
                (true, 4) => winograd::<1, C, 5, 7, M, 5, 7, 1, 1, TB, 4, true, BY_LANE>(
                    args.0,
                    args.1,
                    args.2,
                    &mut y,
                    &mut scratch,
                ),
                (false, 4) => winograd::<1, C, 5, 7, M, 5, 7, 1, 1, TB, 4, true, { !BY_LANE }>(
                    args.0,
                    args.1,
                    args.2,
                    &mut y,
                    &mut scratch,
                ),
                (true, _) => winograd::<1, C, 5, 7, M, 5, 7, 1, 1, TB, 1, true, BY_LANE>(
                    args.0,
                    args.1,
                    args.2,
                    &mut y,
                    &mut scratch,
                ),
                (false, _) => winograd::<1, C, 5, 7, M, 5, 7, 1, 1, TB, 1, true, { !BY_LANE }>(
                    args.0,
                    args.1,
                    args.2,
                    &mut y,
                    &mut scratch,
                ),
            }
            y
        };
        // Every CPU path: with AVX-512 both forms would share its output transform.
        crate::kernels::arch::on_every_path(|path| {
            for passes in [4, 1] {
                let (tiles, lanes) = (run(true, passes), run(false, passes));
                assert!(tiles.iter().all(|v| v.is_finite()), "every output written");
                let same = tiles
                    .iter()
                    .zip(&lanes)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(
                    same,
                    "{passes} element rows a pass on {path:?}: the forms differ"
                );
            }
        });
    }
}
