//! 3x3 stride-1 convolution by Winograd's minimal filtering F(2x2, 3x3) (Lavin and
//! Gray, "Fast Algorithms for Convolutional Neural Networks", 2015): each 2x2 block of
//! outputs ("tile") comes from the 4x4 input window under it through
//! `Y = At [ U (.) (Bt d B) ] A`, with `U = G g Gt` the transformed kernel (computed by
//! the macro at compile time). Per tile and channel pair that is 16 products instead of
//! 36, and the 16 products of all channel pairs are 16 matrix products
//! `O_e[M, T] = U_e[M, C] V_e[C, T]` over a block of `T` tiles, through
//! [`super::packed::gemm_packed`]. The transforms only add and subtract, and
//! `G` holds halves, so the rounding is that of a few more additions per output.
//!
//! The matrices, for correlation as `Conv` computes it:
//! `Bt = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]`,
//! `G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]`,
//! `At = [[1, 1, 1, 0], [0, 1, -1, -1]]`.

use super::packed::{NR, gemm_packed, packed_len};

/// Skew added to the stride between the 16 transformed blocks and the 16 product
/// blocks: at whole pages apart, the 16 streams would share one set of the L1 cache.
const SKEW: usize = 16;

/// Values before and after the padded input band: a panel's window rows start up to
/// `2 NR` columns before its first tile's row and read `2 NR + 4` values.
const SLACK: usize = 2 * NR + 4;

/// The layout of [`conv3x3_winograd`]'s scratch for a `[C, H, W]` input with `th x tw`
/// tiles, `M` output channels and blocks of `tb` tiles: (transformed block stride,
/// product block stride, product row stride, band rows, band columns, total values).
/// The band holds the zero-padded input rows under one block's tiles (`2 tw + 2`
/// columns, at most `2 (ceil(tb / tw) + 1) + 2` rows), per channel.
const fn layout(
    c: usize,
    m: usize,
    oh: usize,
    ow: usize,
    tb: usize,
) -> (usize, usize, usize, usize, usize, usize) {
    let vs = packed_len(c, tb) + SKEW;
    let ors = tb.div_ceil(NR) * NR;
    let os = m * ors + SKEW;
    let (th, tw) = (oh.div_ceil(2), ow.div_ceil(2));
    let band = 2 * (tb.div_ceil(tw) + 1) + 2;
    let (hp, wp) = (
        if band < 2 * th + 2 { band } else { 2 * th + 2 },
        2 * tw + 2,
    );
    (
        vs,
        os,
        ors,
        hp,
        wp,
        16 * (vs + os) + c * hp * wp + 2 * SLACK,
    )
}

/// Scratch values [`conv3x3_winograd`] needs for a `[C, H, W]` input with `OH x OW`
/// outputs per channel, `M` output channels and blocks of `tb` tiles: the 16
/// transformed input blocks (`[C, tb]` in panels), the 16 product blocks (`[M, tb]`,
/// rows padded to whole panels) and the zero-padded input rows of a block.
pub const fn scratch_len(c: usize, m: usize, oh: usize, ow: usize, tb: usize) -> usize {
    layout(c, m, oh, ow, tb).5
}

/// One panel of lanes, one value per tile.
type Lanes = [f32; NR];

/// `y[N, M, OH, OW] = conv(x[N, C, H, W], w) + b` for a 3x3 kernel, stride 1,
/// dilation 1, one group, zero padding `PT`/`PL` at the top/left (bottom/right implied by
/// `OH`/`OW`), then `max(y, 0)` when `RELU`. `u` is the transformed kernel
/// `[16][M][C]` (element `e = 4 a + b` of `G g Gt` for output channel `m` and input
/// channel `c` at `(e * M + m) * C + c`); tiles run in blocks of `TB`.
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
    const RELU: bool,
>(
    x: &[f32],
    u: &[f32],
    b: Option<&[f32]>,
    y: &mut [f32],
    scratch: &mut [f32],
) {
    let tiles_w = OW.div_ceil(2);
    let tiles = OH.div_ceil(2) * tiles_w;
    let (vs, os, ors, hp, wp, len) = layout(C, M, OH, OW, TB);
    let x = &x[..N * C * H * W];
    let u = &u[..16 * M * C];
    let y = &mut y[..N * M * OH * OW];
    let (v, rest) = scratch[..len].split_at_mut(16 * vs);
    let (o, padded) = rest.split_at_mut(16 * os);
    #[cfg(target_arch = "x86_64")]
    let avx = super::packed::avx_fma();
    for n in 0..N {
        let xn = &x[n * C * H * W..(n + 1) * C * H * W];
        let yn = &mut y[n * M * OH * OW..(n + 1) * M * OH * OW];
        let mut t0 = 0;
        while t0 < tiles {
            let tiles = (t0, TB.min(tiles - t0), tiles_w);
            // The padded rows under the block's tile rows ty0..=ty1.
            let (ty0, ty1) = (t0 / tiles_w, (t0 + tiles.1 - 1) / tiles_w);
            band::<C, H, W, PT, PL>(xn, padded, (2 * ty0, 2 * (ty1 - ty0) + 4), (hp, wp));
            let geometry = (vs, 2 * ty0, hp, wp);
            #[cfg(target_arch = "x86_64")]
            if avx {
                // Safety: the CPU has AVX and FMA.
                unsafe { inputs_avx::<C>(padded, v, geometry, tiles) };
            } else {
                inputs::<C, false>(padded, v, geometry, tiles);
            }
            #[cfg(not(target_arch = "x86_64"))]
            inputs::<C, false>(padded, v, geometry, tiles);
            // Sixteen products O_e = U_e V_e, over whole panels (a partial panel's
            // tiles are not its first lanes, see `LANE_TILE`).
            for e in 0..16 {
                gemm_packed(
                    (M, C, tiles.1.div_ceil(NR) * NR),
                    &u[e * M * C..(e + 1) * M * C],
                    C,
                    &v[e * vs..(e + 1) * vs],
                    None,
                    &mut o[e * os..(e + 1) * os],
                    (ors, 1),
                    false,
                );
            }
            #[cfg(target_arch = "x86_64")]
            if avx {
                // Safety: the CPU has AVX and FMA.
                unsafe { outputs_avx::<M, OH, OW, RELU>(o, (os, ors), b, yn, tiles) };
            } else {
                outputs::<M, OH, OW, RELU, false>(o, (os, ors), b, yn, tiles);
            }
            #[cfg(not(target_arch = "x86_64"))]
            outputs::<M, OH, OW, RELU, false>(o, (os, ors), b, yn, tiles);
            t0 += TB;
        }
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

/// First tile, tile count and tiles per row of a block.
type Block = (usize, usize, usize);

/// [`inputs`] compiled with AVX and FMA (8 lanes a register).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
fn inputs_avx<const C: usize>(
    padded: &[f32],
    v: &mut [f32],
    geometry: (usize, usize, usize, usize),
    block: Block,
) {
    inputs::<C, true>(padded, v, geometry, block);
}

/// The input transform of a block, a panel of `NR` tiles and one channel at a time:
/// `v[e * vs..]` is element `e` of `Bt d B`, `[C, tiles]` in panels, from the padded
/// input band (`hp x wp` per channel, starting at padded row `r0`).
#[inline(always)]
fn inputs<const C: usize, const AVX: bool>(
    padded: &[f32],
    v: &mut [f32],
    (vs, r0, hp, wp): (usize, usize, usize, usize),
    (t0, tb, tiles_w): Block,
) {
    for p in 0..tb.div_ceil(NR) {
        let first = t0 + p * NR;
        let width = NR.min(t0 + tb - first);
        for c in 0..C {
            let base = SLACK + c * hp * wp;
            let d = windows::<AVX>(padded, (base, r0, wp), first, width, tiles_w);
            let at = p * C * NR + c * NR;
            for (e, lanes) in input_transform(&d).iter().enumerate() {
                v[e * vs + at..e * vs + at + NR].copy_from_slice(lanes);
            }
        }
    }
}

/// [`outputs`] compiled with AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
fn outputs_avx<const M: usize, const OH: usize, const OW: usize, const RELU: bool>(
    o: &[f32],
    ors: (usize, usize),
    b: Option<&[f32]>,
    yn: &mut [f32],
    block: Block,
) {
    outputs::<M, OH, OW, RELU, true>(o, ors, b, yn, block);
}

/// The output transform of a block, bias and activation, one output channel and a
/// panel of tiles at a time, from the products `o` (block `e` at `e * os`, rows `ors`
/// apart).
#[inline(always)]
fn outputs<const M: usize, const OH: usize, const OW: usize, const RELU: bool, const AVX: bool>(
    o: &[f32],
    (os, ors): (usize, usize),
    b: Option<&[f32]>,
    yn: &mut [f32],
    (t0, tb, tiles_w): Block,
) {
    for m in 0..M {
        let bias = b.map_or(0.0, |b| b[m]);
        let out = &mut yn[m * OH * OW..(m + 1) * OH * OW];
        for p in 0..tb.div_ceil(NR) {
            let first = t0 + p * NR;
            let width = NR.min(t0 + tb - first);
            // Lanes past `width` hold stale values; `store` leaves them out.
            let at = m * ors + p * NR;
            let lanes = |e: usize| -> &Lanes {
                o[e * os + at..e * os + at + NR]
                    .try_into()
                    .expect("NR values")
            };
            let mut ys = output_transform([
                lanes(0),
                lanes(1),
                lanes(2),
                lanes(3),
                lanes(4),
                lanes(5),
                lanes(6),
                lanes(7),
                lanes(8),
                lanes(9),
                lanes(10),
                lanes(11),
                lanes(12),
                lanes(13),
                lanes(14),
                lanes(15),
            ]);
            for lanes in &mut ys {
                for v in lanes.iter_mut() {
                    *v += bias;
                    if RELU {
                        *v = v.max(0.0);
                    }
                }
            }
            store::<OH, OW, AVX>(out, &ys, first, width, tiles_w);
        }
    }
}

/// The 4x4 input windows of tiles `first..first + width` of one channel's padded band
/// (padded row `r0` at `padded[base]`, rows `wp` apart), as 16 lanes (`[4 i + j][l]`:
/// row `i`, column `j` of tile `first + LANE_TILE[l]`'s window; lanes of tiles past
/// `width` zero). Per tile row the panel touches, each window row is one run of columns
/// split into four stride-2 lane vectors; a panel across tile rows merges its runs lane
/// by lane.
#[inline(always)]
fn windows<const AVX: bool>(
    padded: &[f32],
    (base, r0, wp): (usize, usize, usize),
    first: usize,
    width: usize,
    tiles_w: usize,
) -> [Lanes; 16] {
    let mut d = [[0.0; NR]; 16];
    let run = |ty: usize, tx: usize, ls: usize, i: usize, j: usize| -> &[f32; 2 * NR] {
        // Lane l's column j is run[2 l]: columns from 2 (tx - ls) + j, which may reach
        // back into the previous row (or the slack) for lanes before `ls`.
        let at = base + (2 * ty + i - r0) * wp + 2 * tx + j - 2 * ls;
        padded[at..at + 2 * NR].try_into().expect("2 NR values")
    };
    for (ty, tx, ls, le) in segments(first, width, tiles_w) {
        if ls == 0 && le == NR {
            for i in 0..4 {
                for j in 0..4 {
                    d[4 * i + j] = every_other::<AVX>(run(ty, tx, 0, i, j));
                }
            }
            continue;
        }
        for i in 0..4 {
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
    d
}

/// The tile rows lanes `0..width` of a panel starting at tile `first` fall in: per row
/// `(ty, tx, ls, le)`, lanes `ls..le` holding tiles `(ty, tx..)`.
#[inline(always)]
fn segments(
    first: usize,
    width: usize,
    tiles_w: usize,
) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let mut ls = 0;
    core::iter::from_fn(move || {
        if ls >= width {
            return None;
        }
        let t = first + ls;
        let (ty, tx) = (t / tiles_w, t % tiles_w);
        let le = width.min(ls + tiles_w - tx);
        let seg = (ty, tx, ls, le);
        ls = le;
        Some(seg)
    })
}

/// `a - b`, `a + b` lane by lane (loops the compiler turns into vector operations;
/// `array::from_fn` would stay a call per lane).
#[inline(always)]
fn sub(a: &Lanes, b: &Lanes) -> Lanes {
    let mut r = *a;
    for (r, b) in r.iter_mut().zip(b) {
        *r -= b;
    }
    r
}

#[inline(always)]
fn add(a: &Lanes, b: &Lanes) -> Lanes {
    let mut r = *a;
    for (r, b) in r.iter_mut().zip(b) {
        *r += b;
    }
    r
}

/// A row of `Bt` times four values: `[r0 - r2, r1 + r2, r2 - r1, r1 - r3]`.
#[inline(always)]
fn bt(r0: &Lanes, r1: &Lanes, r2: &Lanes, r3: &Lanes) -> [Lanes; 4] {
    [sub(r0, r2), add(r1, r2), sub(r2, r1), sub(r1, r3)]
}

/// `Bt d B` for every lane: the rows of `Bt` combine window columns, then window rows
/// (`[4 a + b]`).
#[inline(always)]
fn input_transform(d: &[Lanes; 16]) -> [Lanes; 16] {
    let r0 = bt(&d[0], &d[1], &d[2], &d[3]);
    let r1 = bt(&d[4], &d[5], &d[6], &d[7]);
    let r2 = bt(&d[8], &d[9], &d[10], &d[11]);
    let r3 = bt(&d[12], &d[13], &d[14], &d[15]);
    let c0 = bt(&r0[0], &r1[0], &r2[0], &r3[0]);
    let c1 = bt(&r0[1], &r1[1], &r2[1], &r3[1]);
    let c2 = bt(&r0[2], &r1[2], &r2[2], &r3[2]);
    let c3 = bt(&r0[3], &r1[3], &r2[3], &r3[3]);
    [
        c0[0], c1[0], c2[0], c3[0], c0[1], c1[1], c2[1], c3[1], c0[2], c1[2], c2[2], c3[2], c0[3],
        c1[3], c2[3], c3[3],
    ]
}

/// A row of `At` times four values: `[r0 + r1 + r2, r1 - r2 - r3]`.
#[inline(always)]
fn at(r0: &Lanes, r1: &Lanes, r2: &Lanes, r3: &Lanes) -> [Lanes; 2] {
    [add(r0, &add(r1, r2)), sub(&sub(r1, r2), r3)]
}

/// `At O A` for every lane: the four outputs `[2 p + q]` of each tile.
#[inline(always)]
fn output_transform(o: [&Lanes; 16]) -> [Lanes; 4] {
    let c0 = at(o[0], o[4], o[8], o[12]);
    let c1 = at(o[1], o[5], o[9], o[13]);
    let c2 = at(o[2], o[6], o[10], o[14]);
    let c3 = at(o[3], o[7], o[11], o[15]);
    let [y00, y01] = at(&c0[0], &c1[0], &c2[0], &c3[0]);
    let [y10, y11] = at(&c0[1], &c1[1], &c2[1], &c3[1]);
    [y00, y01, y10, y11]
}

/// Writes the 2x2 outputs of tiles `first..first + width` into one output plane,
/// leaving out those past the bottom or right edge.
#[inline(always)]
fn store<const OH: usize, const OW: usize, const AVX: bool>(
    out: &mut [f32],
    ys: &[Lanes; 4],
    first: usize,
    width: usize,
    tiles_w: usize,
) {
    for (ty, tx, ls, le) in segments(first, width, tiles_w) {
        for p in 0..2 {
            let oh = 2 * ty + p;
            if oh >= OH {
                continue;
            }
            // Lanes ls..le are output columns 2 tx.., clipped at the right edge.
            let cols = (2 * (le - ls)).min(OW - 2 * tx);
            let at = oh * OW + 2 * tx;
            if cols == 2 * NR {
                let dst: &mut [f32; 2 * NR] = (&mut out[at..at + 2 * NR]).try_into().expect("2 NR");
                interleave::<AVX>(dst, &ys[2 * p], &ys[2 * p + 1]);
            } else {
                let mut run = [0.0; 2 * NR];
                interleave::<AVX>(&mut run, &ys[2 * p], &ys[2 * p + 1]);
                for (o, v) in out[at..at + cols].iter_mut().zip(&run[2 * ls..]) {
                    *o = *v;
                }
            }
        }
    }
}

/// The tile (offset from the panel's first) each lane holds. Not in order: this order
/// makes the stride-2 split of a window row one AVX shuffle (`every_other`) and the
/// output interleave two AVX unpacks (`interleave`); the products do not care.
const LANE_TILE: [usize; NR] = [0, 1, 4, 5, 2, 3, 6, 7];

/// `lanes[l] = src[2 LANE_TILE[l]]`: the even values of a run, in lane order. With `AVX`
/// (the caller is compiled with it) one 256-bit shuffle, else two [`super::evens`].
#[inline(always)]
fn every_other<const AVX: bool>(src: &[f32; 2 * NR]) -> Lanes {
    let mut lanes = [0.0; NR];
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        if AVX {
            #[target_feature(enable = "avx")]
            #[inline]
            fn split(src: &[f32; 2 * NR], lanes: &mut Lanes) {
                // Safety: the loads read the 16 values of `src`, the store the 8 of `lanes`.
                unsafe {
                    let lo = _mm256_loadu_ps(src.as_ptr());
                    let hi = _mm256_loadu_ps(src.as_ptr().add(8));
                    _mm256_storeu_ps(lanes.as_mut_ptr(), _mm256_shuffle_ps::<0x88>(lo, hi));
                }
            }
            // Safety: `AVX` is only set in code compiled for (and run on) AVX.
            unsafe { split(src, &mut lanes) };
        } else {
            use super::{evens, four};
            lanes[..4].copy_from_slice(&evens(four(src, 0), four(src, 8)));
            lanes[4..].copy_from_slice(&evens(four(src, 4), four(src, 12)));
        }
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
    {
        use core::arch::x86_64::*;
        if AVX {
            #[target_feature(enable = "avx")]
            #[inline]
            fn merge(dst: &mut [f32; 2 * NR], a: &Lanes, b: &Lanes) {
                // Safety: the loads read the 8 values of `a` and `b`, the stores write
                // the 16 of `dst`.
                unsafe {
                    let x = _mm256_loadu_ps(a.as_ptr());
                    let y = _mm256_loadu_ps(b.as_ptr());
                    _mm256_storeu_ps(dst.as_mut_ptr(), _mm256_unpacklo_ps(x, y));
                    _mm256_storeu_ps(dst.as_mut_ptr().add(8), _mm256_unpackhi_ps(x, y));
                }
            }
            // Safety: `AVX` is only set in code compiled for (and run on) AVX.
            unsafe { merge(dst, a, b) };
        } else {
            // Safety: SSE is part of x86-64; the loads read the 8 values of `a` and `b`,
            // the stores write the 16 of `dst`.
            unsafe {
                for half in 0..2 {
                    let x = _mm_loadu_ps(a.as_ptr().add(4 * half));
                    let y = _mm_loadu_ps(b.as_ptr().add(4 * half));
                    // Lanes 4 h.. hold tiles 2 h, 2 h + 1, 2 h + 4, 2 h + 5.
                    _mm_storeu_ps(dst.as_mut_ptr().add(4 * half), _mm_unpacklo_ps(x, y));
                    _mm_storeu_ps(dst.as_mut_ptr().add(4 * half + 8), _mm_unpackhi_ps(x, y));
                }
            }
        }
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
    use super::{conv3x3_winograd, scratch_len};
    use crate::kernels::conv::conv2d;
    use std::vec::Vec;

    /// `U = G g Gt` of each `[M][C][3][3]` kernel as `[16][M][C]`, as two matrix
    /// products (the macro's own transform is checked by the ONNX Runtime cross-checks).
    fn transform_kernel(w: &[f32], m: usize, c: usize) -> Vec<f32> {
        let g = [
            [1.0, 0.0, 0.0],
            [0.5, 0.5, 0.5],
            [0.5, -0.5, 0.5],
            [0.0, 0.0, 1.0],
        ];
        let mut u = std::vec![0.0; 16 * m * c];
        for (mc, k) in w.chunks_exact(9).enumerate() {
            // gk = G k (4x3), then u = gk Gt (4x4).
            let mut gk = [[0.0f32; 3]; 4];
            for (a, row) in gk.iter_mut().enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = (0..3).map(|i| g[a][i] * k[3 * i + j]).sum();
                }
            }
            for e in 0..16 {
                let (a, b) = (e / 4, e % 4);
                u[e * m * c + mc] = (0..3).map(|j| gk[a][j] * g[b][j]).sum();
            }
        }
        u
    }

    /// Against the direct kernel (cross-checked against ONNX Runtime) for one geometry.
    fn agree<
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
    >() {
        let x: Vec<f32> = (0..N * C * H * W)
            .map(|i| (i as f32 * 0.37).sin())
            .collect();
        let w: Vec<f32> = (0..M * C * 9).map(|i| (i as f32 * 0.73).cos()).collect();
        let b: Vec<f32> = (0..M).map(|i| i as f32 * 0.1 - 0.4).collect();
        let u = transform_kernel(&w, M, C);
        let len = N * M * OH * OW;
        let mut want = std::vec![0.0f32; len];
        let mut got = std::vec![f32::NAN; len];
        let mut scratch = std::vec![f32::NAN; scratch_len(C, M, OH, OW, TB)];
        conv2d::<N, C, H, W, M, 1, 3, 3, OH, OW, 1, 1, 1, 1, PT, PL, true>(
            &x,
            &w,
            Some(&b),
            &mut want,
        );
        conv3x3_winograd::<N, C, H, W, M, OH, OW, PT, PL, TB, true>(
            &x,
            &u,
            Some(&b),
            &mut got,
            &mut scratch,
        );
        for i in 0..len {
            let tol = 1e-5 * want[i].abs().max(1.0);
            assert!(
                (got[i] - want[i]).abs() <= tol,
                "element {i}: {} vs {}",
                got[i],
                want[i]
            );
        }
    }

    #[test]
    fn winograd_matches_direct() {
        // Pad 1 over rows of 20 tiles wide enough for whole panels and panels across
        // tile rows, two images, two blocks.
        agree::<2, 8, 40, 40, 12, 40, 40, 1, 1, 48>();
        // Odd output sizes (half tiles at the bottom and right), no padding.
        agree::<1, 5, 9, 23, 7, 7, 21, 0, 0, 16>();
        // Asymmetric padding (top 2, left 0, bottom 0, right 1), fewer tiles than a panel.
        agree::<1, 4, 4, 5, 6, 4, 4, 2, 0, 8>();
    }
}
