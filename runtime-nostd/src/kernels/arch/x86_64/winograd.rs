//! The Winograd kernel's input and output transforms with AVX-512 (one channel and two
//! panels of tiles a 512-bit register, masked loads for the padding), chosen by
//! [`crate::kernels::winograd`] where its blocks are laid out in pairs of panels.

use tinyonnx_layout::NR;

use crate::kernels::winograd::lanes::{
    AT, Block, LANE_TILE, Lanes, Products, segments, window_rows,
};

/// [`inputs`] for a block laid out in pairs of panels (see [`paired`]), one channel
/// and two panels (16 tiles) a 512-bit register (lanes 8-15 the second panel, each half
/// in `LANE_TILE` order), read from the image `xn` (`[C, H, W]`) itself: two masked
/// loads take a window column's run of 32 values, the lanes outside the image zero (the
/// padding), one two-source permute picks the tiles' 16 values, and each element is one
/// store. The masks depend on the tiles only and are worked out once per pair.
///
/// # Safety
/// The CPU must have AVX-512F.
#[target_feature(enable = "avx512f,avx,fma")]
pub(crate) fn inputs_avx512<
    const C: usize,
    const H: usize,
    const W: usize,
    const PT: usize,
    const PL: usize,
    const R: usize,
    const A0: usize,
>(
    xn: &[f32],
    v: &mut [f32],
    vs: usize,
    (t0, tb, tiles_w): Block,
) {
    use core::arch::x86_64::{
        _mm512_add_ps, _mm512_mask_mov_ps, _mm512_maskz_loadu_ps, _mm512_permutex2var_ps,
        _mm512_setr_epi32, _mm512_setzero_ps, _mm512_storeu_ps, _mm512_sub_ps,
    };
    const { assert!(NR == 8) };
    const PAIR: usize = 2 * NR;
    let rows = const { window_rows(A0, R) };
    let plane = H * W;
    let src = xn[..C * plane].as_ptr();
    // Lane l: value 2 t of the run, t = 8 (l / 8) + LANE_TILE[l % 8] its tile (bit 4:
    // the second source, values 16..32).
    let idx = _mm512_setr_epi32(0, 2, 8, 10, 4, 6, 12, 14, 16, 18, 24, 26, 20, 22, 28, 30);
    for q in 0..tb.div_ceil(PAIR) {
        let first = t0 + q * PAIR;
        let width = PAIR.min(t0 + tb - first);
        // Per tile row the pair touches: the offset (in a channel's plane, possibly
        // outside it) of the run under window row 0, column 0, the lanes it fills, and
        // per window row `i` and column `j` the values of each half of the run inside
        // the image (none for rows the pass does not read).
        let mut runs = [(0isize, 0u16, [[[0u16; 2]; 4]; 4]); PAIR];
        let mut count = 0;
        for (ty, tx, ls, le) in segments(first, width, tiles_w) {
            let mut lanes = 0u16;
            for l in 0..PAIR {
                let t = l / NR * NR + LANE_TILE[l % NR];
                if t >= ls && t < le {
                    lanes |= 1 << l;
                }
            }
            // The run starts `2 ls` columns before the segment's first tile.
            let (r0, c0) = (
                (2 * ty) as isize - PT as isize,
                (2 * tx) as isize - (2 * ls) as isize - PL as isize,
            );
            let mut inside = [[[0u16; 2]; 4]; 4];
            for (i, row) in inside.iter_mut().enumerate() {
                let r = r0 + i as isize;
                if rows & (1 << i) == 0 || r < 0 || r >= H as isize {
                    continue;
                }
                for (j, halves) in row.iter_mut().enumerate() {
                    for (h, m) in halves.iter_mut().enumerate() {
                        for l in 0..PAIR {
                            let col = c0 + (j + h * PAIR + l) as isize;
                            if col >= 0 && col < W as isize {
                                *m |= 1 << l;
                            }
                        }
                    }
                }
            }
            runs[count] = (r0 * W as isize + c0, lanes, inside);
            count += 1;
        }
        let runs = &runs[..count];
        let at_v = q * C * PAIR;
        assert!(
            at_v + C * PAIR + (4 * R - 1) * vs <= v.len(),
            "block too short"
        );
        for c in 0..C {
            // Whole-register indices only (the loops unroll), so `d` stays in
            // registers.
            let mut d = [_mm512_setzero_ps(); 16];
            // Safety: the loads read only lanes inside rows `0..H`, columns `0..W` of
            // channel `c < C` (the masks), so inside `xn[..C plane]`; the CPU has
            // AVX-512F.
            unsafe {
                let load = |at: *const f32, inside: [u16; 2]| {
                    _mm512_permutex2var_ps(
                        _mm512_maskz_loadu_ps(inside[0], at),
                        idx,
                        _mm512_maskz_loadu_ps(inside[1], at.wrapping_add(PAIR)),
                    )
                };
                let channel = src.wrapping_add(c * plane);
                // One tile row: no merging (lanes past `width` may hold other values of
                // the image; no output takes them).
                if let [(off, _, inside)] = runs {
                    let base = channel.wrapping_offset(*off);
                    for i in 0..4 {
                        if rows & (1 << i) != 0 {
                            for j in 0..4 {
                                d[4 * i + j] = load(base.wrapping_add(i * W + j), inside[i][j]);
                            }
                        }
                    }
                } else {
                    for &(off, lanes, inside) in runs {
                        let base = channel.wrapping_offset(off);
                        for i in 0..4 {
                            if rows & (1 << i) != 0 {
                                for j in 0..4 {
                                    let run = load(base.wrapping_add(i * W + j), inside[i][j]);
                                    d[4 * i + j] = _mm512_mask_mov_ps(d[4 * i + j], lanes, run);
                                }
                            }
                        }
                    }
                }
            }
            let at = at_v + c * PAIR;
            for k in 0..R {
                // Row a of Bt over the window's rows, then every row of Bt over columns.
                // (A loop, not `array::from_fn`: its closure would not inherit the
                // target features, and every call would go through memory.)
                let mut s = [_mm512_setzero_ps(); 4];
                for (j, s) in s.iter_mut().enumerate() {
                    *s = match A0 + k {
                        0 => _mm512_sub_ps(d[j], d[8 + j]),
                        1 => _mm512_add_ps(d[4 + j], d[8 + j]),
                        2 => _mm512_sub_ps(d[8 + j], d[4 + j]),
                        _ => _mm512_sub_ps(d[4 + j], d[12 + j]),
                    };
                }
                let elements = [
                    _mm512_sub_ps(s[0], s[2]),
                    _mm512_add_ps(s[1], s[2]),
                    _mm512_sub_ps(s[2], s[1]),
                    _mm512_sub_ps(s[1], s[3]),
                ];
                for (e, x) in (4 * k..).zip(elements) {
                    // Safety: inside `v` (asserted above); the CPU has AVX-512F.
                    unsafe { _mm512_storeu_ps(v.as_mut_ptr().add(e * vs + at), x) };
                }
            }
        }
    }
}

/// [`outputs`] with 512-bit registers: one output channel and two panels of tiles a
/// register (lanes 8-15 the second panel, in `LANE_TILE` order), so each element is
/// one load. The tile rows the panels cross, and the output edges, become the masks
/// of the stores (and of the loads of outputs a later pass adds to), worked out once
/// per pair of panels for every channel.
///
/// # Safety
/// The CPU must have AVX-512F.
#[target_feature(enable = "avx512f,avx,fma")]
pub(crate) fn outputs_avx512<
    const M: usize,
    const OH: usize,
    const OW: usize,
    const R: usize,
    const A0: usize,
    const RELU: bool,
>(
    (o, (os, ors)): Products<'_>,
    b: Option<&[f32]>,
    yn: &mut [f32],
    (t0, tb, tiles_w): Block,
) {
    use core::arch::x86_64::{
        __m512, _mm512_add_ps, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_max_ps,
        _mm512_set1_ps, _mm512_setzero_ps, _mm512_shuffle_f32x4, _mm512_sub_ps, _mm512_unpackhi_ps,
        _mm512_unpacklo_ps,
    };
    const { assert!(NR == 8) };
    let pass = A0..A0 + R;
    // Which output rows `p` of a tile this pass adds to (a nonzero `At[p][a]` for one of
    // its element rows), sets (it holds row `p`'s first element row, `p`) and finishes
    // with the activation (it holds its last, `p + 2`).
    let touches = |p: usize| pass.clone().any(|a| AT[p][a] != 0);
    let (sets, finishes) = (
        |p: usize| pass.contains(&p),
        |p: usize| pass.contains(&(p + 2)),
    );
    let panels = tb.div_ceil(NR);
    let plane = OH * OW;
    // Every load reads 16 values (8 for a last, odd panel) at
    // `k os + m ors + q NR` for `k < 4 R`, `m < M`, `q + 1 < panels`.
    assert!(
        (4 * R - 1) * os + (M - 1) * ors + panels * NR <= o.len(),
        "products too short"
    );
    assert!(M * plane <= yn.len(), "output too short");
    let lanes = |lo: usize, hi: usize| -> u16 {
        if hi > lo {
            (((1u32 << (hi - lo)) - 1) << lo) as u16
        } else {
            0
        }
    };
    for q in (0..panels).step_by(2) {
        let first = t0 + q * NR;
        let width = (2 * NR).min(t0 + tb - first);
        let load_mask = if q + 1 < panels { u16::MAX } else { 0xff };
        // Per tile row and output row `p` of the tiles this pass touches: where in a
        // channel's plane the run of 32 output values (2 per tile) starts, `p`, and the
        // lanes of each half of the run that land inside the row.
        let mut stores = [(0usize, 0usize, 0u16, 0u16); 2 * (2 * NR + 2)];
        let mut count = 0;
        for (ty, tx, ls, le) in segments(first, width, tiles_w) {
            for p in 0..2 {
                let oh = 2 * ty + p;
                if oh >= OH || !touches(p) {
                    continue;
                }
                let (lo, hi) = (2 * ls, 2 * ls + (2 * (le - ls)).min(OW - 2 * tx));
                let masks = (
                    lanes(lo.min(16), hi.min(16)),
                    lanes(lo.max(16) - 16, hi.max(16) - 16),
                );
                // (Lane `lo` lands on column `2 tx`; the lanes before it are masked.)
                stores[count] = ((oh * OW + 2 * tx).wrapping_sub(lo), p, masks.0, masks.1);
                count += 1;
            }
        }
        let stores = &stores[..count];
        for m in 0..M {
            let bias = _mm512_set1_ps(b.map_or(0.0, |b| b[m]));
            // Safety: the loads stay inside `o` (asserted above, masked lanes not
            // read); the stores (and the loads of `y`) touch only lanes inside output
            // rows of channel `m` (`M plane <= yn.len()`), masked lanes not touched.
            unsafe {
                let base = o.as_ptr().add(m * ors + q * NR);
                // t_a = O_a A for the pass's element rows `a` (product block `4 (a - A0)
                // + b`): columns r0 + r1 + r2 and r1 - r2 - r3.
                let mut t = [[_mm512_setzero_ps(); 2]; 4];
                for (a, t) in t.iter_mut().enumerate().skip(A0).take(R) {
                    let at = |b: usize| {
                        _mm512_maskz_loadu_ps(load_mask, base.add((4 * (a - A0) + b) * os))
                    };
                    let (r0, r1, r2, r3) = (at(0), at(1), at(2), at(3));
                    *t = [
                        _mm512_add_ps(r0, _mm512_add_ps(r1, r2)),
                        _mm512_sub_ps(_mm512_sub_ps(r1, r2), r3),
                    ];
                }
                let mut runs: [[__m512; 2]; 2] = [[_mm512_setzero_ps(); 2]; 2];
                for (p, run) in runs.iter_mut().enumerate() {
                    if !touches(p) {
                        continue;
                    }
                    // This pass's share of output row p = At[p] t (row 0: t0 + t1 + t2,
                    // row 1: t1 - t2 - t3), per column, with the bias if it sets the row.
                    let mut cols = [_mm512_setzero_ps(); 2];
                    for (c, col) in cols.iter_mut().enumerate() {
                        let mut v = if sets(p) { bias } else { _mm512_setzero_ps() };
                        for a in pass.clone() {
                            v = match AT[p][a] {
                                1 => _mm512_add_ps(v, t[a][c]),
                                -1 => _mm512_sub_ps(v, t[a][c]),
                                _ => v,
                            };
                        }
                        *col = v;
                    }
                    // Per 128-bit lane, unpacking pairs tiles (LANE_TILE order) into
                    // (column 0, column 1) runs: tiles 0-3 and 8-11 in `lo`, 4-7 and
                    // 12-15 in `hi`.
                    let lo = _mm512_unpacklo_ps(cols[0], cols[1]);
                    let hi = _mm512_unpackhi_ps(cols[0], cols[1]);
                    *run = [
                        _mm512_shuffle_f32x4::<0x44>(lo, hi),
                        _mm512_shuffle_f32x4::<0xee>(lo, hi),
                    ];
                }
                let out = yn.as_mut_ptr().add(m * plane);
                for &(at, p, m0, m1) in stores {
                    let dst = out.wrapping_add(at);
                    for (z, mask) in [m0, m1].into_iter().enumerate() {
                        let dst = dst.wrapping_add(16 * z);
                        let mut v = runs[p][z];
                        if !sets(p) {
                            v = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst), v);
                        }
                        if RELU && finishes(p) {
                            v = _mm512_max_ps(_mm512_setzero_ps(), v);
                        }
                        _mm512_mask_storeu_ps(dst, mask, v);
                    }
                }
            }
        }
    }
}

/// `lanes[l] = src[2 LANE_TILE[l]]` (the even values of a run in lane order) as one
/// 256-bit shuffle.
///
/// # Safety
/// The CPU must have AVX.
#[target_feature(enable = "avx")]
#[inline]
pub(crate) unsafe fn evens_avx(src: &[f32; 2 * NR], lanes: &mut Lanes) {
    use core::arch::x86_64::{_mm256_loadu_ps, _mm256_shuffle_ps, _mm256_storeu_ps};
    // Safety: the loads read the 16 values of `src`, the store the 8 of `lanes`.
    unsafe {
        let lo = _mm256_loadu_ps(src.as_ptr());
        let hi = _mm256_loadu_ps(src.as_ptr().add(8));
        _mm256_storeu_ps(lanes.as_mut_ptr(), _mm256_shuffle_ps::<0x88>(lo, hi));
    }
}

/// `dst[2 t] = a[lane of t]`, `dst[2 t + 1] = b[lane of t]` as two 256-bit unpacks.
///
/// # Safety
/// The CPU must have AVX.
#[target_feature(enable = "avx")]
#[inline]
pub(crate) unsafe fn interleave_avx(dst: &mut [f32; 2 * NR], a: &Lanes, b: &Lanes) {
    use core::arch::x86_64::{
        _mm256_loadu_ps, _mm256_storeu_ps, _mm256_unpackhi_ps, _mm256_unpacklo_ps,
    };
    // Safety: the loads read the 8 values of `a` and `b`, the stores write the 16 of
    // `dst`.
    unsafe {
        let x = _mm256_loadu_ps(a.as_ptr());
        let y = _mm256_loadu_ps(b.as_ptr());
        _mm256_storeu_ps(dst.as_mut_ptr(), _mm256_unpacklo_ps(x, y));
        _mm256_storeu_ps(dst.as_mut_ptr().add(8), _mm256_unpackhi_ps(x, y));
    }
}

/// [`interleave_avx`] with four SSE unpacks (stores of single values then wide loads
/// would stall store forwarding).
#[inline(always)]
pub(crate) fn interleave_sse(dst: &mut [f32; 2 * NR], a: &Lanes, b: &Lanes) {
    use core::arch::x86_64::{_mm_loadu_ps, _mm_storeu_ps, _mm_unpackhi_ps, _mm_unpacklo_ps};
    // Safety: SSE is part of x86-64; the loads read the 8 values of `a` and `b`, the
    // stores write the 16 of `dst`.
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
