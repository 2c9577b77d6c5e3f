//! Direct convolution with 512-bit fused multiply-adds for x86-64 CPUs with AVX-512F,
//! chosen at run time by [`crate::kernels::conv::conv2d_packed`]: no im2col.
//!
//! The input rows under one output row are kept zero-padded in a ring in the scratch:
//! per channel `NS = (KH - 1) DH + 1` padded rows, slot `p % NS` for padded row `p`
//! (input row `p - PT`). Each slot stores its row split into `SW` phases of `LP` values
//! (phase `r` holds padded columns `r, r + SW, r + 2 SW, ..`), so the input values under
//! consecutive output positions are consecutive for every stride. Moving to the next
//! output row loads only the `SH` rows it adds.
//!
//! A tile is `R` output channels by `16 Z` positions of one output row (of two rows
//! where a row fills at most one register, the ring then holding `SH` more rows): `R Z`
//! accumulator registers a row, starting from the bias; each of the `C KH KW` steps loads `Z`
//! registers of input values (the last one masked at the row's end) and broadcasts one
//! weight per channel from the ONNX layout `[M][C][KH][KW]` (one pointer, the rows a
//! constant `C KH KW` apart). The outputs are stored straight into NCHW.

pub use tinyonnx_layout::direct::{applies, phase_len, ring_len, ring_rows, tile_rows};

#[cfg(target_arch = "x86_64")]
/// Padded row `dst` (`SW` phases of `lp` values) from input row `xrow` (`W` values):
/// padded column `pc` is input column `pc - PL`, zero outside the row.
#[inline(always)]
fn fill_row<const W: usize, const SW: usize, const PL: usize>(
    dst: &mut [f32],
    xrow: &[f32],
    lp: usize,
) {
    let xrow = &xrow[..W];
    if SW == 1 {
        let dst = &mut dst[..lp];
        let lead = PL.min(lp);
        dst[..lead].fill(0.0);
        let end = (PL + W).min(lp);
        if end > lead {
            dst[lead..end].copy_from_slice(&xrow[..end - lead]);
        }
        dst[end.max(lead)..].fill(0.0);
        return;
    }
    for (r, phase) in dst[..SW * lp].chunks_exact_mut(lp).enumerate() {
        // Value `i` of phase `r` is input column `i SW + r - PL`: inside the row for `i`
        // in `lo..hi`.
        let lo = PL.saturating_sub(r).div_ceil(SW).min(lp);
        let hi = (W + PL).saturating_sub(r).div_ceil(SW).clamp(lo, lp);
        phase[..lo].fill(0.0);
        phase[hi..].fill(0.0);
        if hi > lo {
            let first = lo * SW + r - PL;
            let (last, body) = phase[lo..hi].split_last_mut().expect("hi > lo");
            // Whole groups of `SW` columns, the group's first value each (the compiler
            // turns this into shuffles), then the last value alone.
            for (v, group) in body.iter_mut().zip(xrow[first..].chunks_exact(SW)) {
                *v = group[0];
            }
            *last = xrow[first + (hi - lo - 1) * SW];
        }
    }
}

/// `Conv` (one group, NCHW) as direct tiles: `y = act(b + w * x)` with the geometry of
/// [`crate::kernels::conv::conv2d`]; `scratch` holds at least [`ring_len`] values.
///
/// # Safety
/// The CPU must have AVX-512F, AVX and FMA (see [`super::cpu::avx512`]).
///
/// # Panics
/// When a slice is shorter than the sizes need (a bug in generated code).
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx,fma")]
pub unsafe fn conv2d_avx512<
    const N: usize,
    const C: usize,
    const H: usize,
    const W: usize,
    const M: usize,
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
    scratch: &mut [f32],
) {
    let lp = phase_len(OW, KW, SW, DW);
    let rl = SW * lp;
    let ns = ring_rows(KH, DH, SH, OW);
    let k = C * KH * KW;
    let positions = OH * OW;
    let x = &x[..N * C * H * W];
    let w = &w[..M * k];
    let b = b.map(|b| &b[..M]);
    let y = &mut y[..N * M * positions];
    let ring = &mut crate::kernels::cache_aligned(scratch)[..C * ns * rl];
    for n in 0..N {
        let xn = &x[n * C * H * W..(n + 1) * C * H * W];
        let yn = &mut y[n * M * positions..(n + 1) * M * positions];
        // Padded rows `..loaded` are in the ring.
        let mut loaded = 0;
        let mut oy = 0;
        while oy < OH {
            let first = oy * SH;
            for p in loaded.max(first)..first + ns {
                let ih = p.wrapping_sub(PT);
                for c in 0..C {
                    let dst = &mut ring[(c * ns + p % ns) * rl..(c * ns + p % ns + 1) * rl];
                    if ih < H {
                        let row = &xn[(c * H + ih) * W..(c * H + ih + 1) * W];
                        fill_row::<W, SW, PL>(dst, row, lp);
                    } else {
                        dst.fill(0.0);
                    }
                }
            }
            loaded = first + ns;
            // Ring offsets of the kernel rows under output rows `oy` and `oy + 1`.
            let slots: [[usize; KH]; 4] = core::array::from_fn(|t| {
                core::array::from_fn(|ky| (first + t * SH + ky * DH) % ns * rl)
            });
            let yrow = yn[oy * OW..].as_mut_ptr();
            // Safety: the CPU's features are the caller's contract; every tile reads
            // rows `m0..m0 + R` of `w` (checked length `M k`), ring values up to
            // `(C - 1) ns rl + (ns - 1) rl + (SW - 1) lp + LP` (the last phase's end, the
            // masked lanes not read) and writes `R` rows of outputs inside `yn` (the
            // second output row only when `oy + 1 < OH`).
            unsafe {
                if tile_rows(OW) == 4 && oy + 3 < OH {
                    channels::<0, 2, C, KH, KW, OW, SW, SH, DH, DW, RELU>(
                        w, b, ring, &slots, yrow, positions,
                    );
                    oy += 4;
                } else if tile_rows(OW) >= 2 && oy + 1 < OH {
                    if OW == 8 {
                        channels::<0, 1, C, KH, KW, OW, SW, SH, DH, DW, RELU>(
                            w, b, ring, &slots, yrow, positions,
                        );
                    } else {
                        channels::<2, 0, C, KH, KW, OW, SW, SH, DH, DW, RELU>(
                            w, b, ring, &slots, yrow, positions,
                        );
                    }
                    oy += 2;
                } else {
                    channels::<1, 0, C, KH, KW, OW, SW, SH, DH, DW, RELU>(
                        w, b, ring, &slots, yrow, positions,
                    );
                    oy += 1;
                }
            }
        }
    }
}

/// Every output channel of `T` output rows, or with `P > 0` of `2 P` rows of 8
/// positions in pairs (`yrow` the first's first position), in blocks of 12, 8, 4 and 1
/// channels.
///
/// # Safety
/// As in [`conv2d_avx512`].
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn channels<
    const T: usize,
    const P: usize,
    const C: usize,
    const KH: usize,
    const KW: usize,
    const OW: usize,
    const SW: usize,
    const SH: usize,
    const DH: usize,
    const DW: usize,
    const RELU: bool,
>(
    w: &[f32],
    b: Option<&[f32]>,
    ring: &[f32],
    slots: &[[usize; KH]; 4],
    yrow: *mut f32,
    positions: usize,
) {
    let (m, k) = (w.len() / (C * KH * KW), C * KH * KW);
    let mut m0 = 0;
    // Safety: the caller's contract.
    unsafe {
        while m0 < m {
            let (a, bias) = (w.as_ptr().add(m0 * k), b.map(|b| b.as_ptr().add(m0)));
            let out = yrow.add(m0 * positions);
            let args = (a, ring.as_ptr(), slots, bias, out);
            m0 += match m - m0 {
                12.. => row_block::<12, T, P, C, KH, KW, OW, SW, SH, DH, DW, RELU>(args, positions),
                8.. => row_block::<8, T, P, C, KH, KW, OW, SW, SH, DH, DW, RELU>(args, positions),
                4.. => row_block::<4, T, P, C, KH, KW, OW, SW, SH, DH, DW, RELU>(args, positions),
                _ => row_block::<1, T, P, C, KH, KW, OW, SW, SH, DH, DW, RELU>(args, positions),
            };
        }
    }
}

/// The operands of a block of rows: weights of its first channel, the ring, the ring
/// offsets of the kernel rows under each output row (per channel), the bias of its
/// first channel, its first output.
#[cfg(target_arch = "x86_64")]
type Block<'a, const KH: usize> = (
    *const f32,
    *const f32,
    &'a [[usize; KH]; 4],
    Option<*const f32>,
    *mut f32,
);

/// `R` output channels of `T` output rows, in tiles of 32 positions a row (16 at the end
/// when at most 16 remain), or with `P > 0` of `2 P` rows of 8 positions in one tile of
/// [`tile_pairs`]; returns `R`.
///
/// # Safety
/// As in [`conv2d_avx512`]; `out` rows are `out_rs` apart.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx,fma")]
unsafe fn row_block<
    const R: usize,
    const T: usize,
    const P: usize,
    const C: usize,
    const KH: usize,
    const KW: usize,
    const OW: usize,
    const SW: usize,
    const SH: usize,
    const DH: usize,
    const DW: usize,
    const RELU: bool,
>(
    (a, ring, slots, bias, out): Block<'_, KH>,
    out_rs: usize,
) -> usize {
    if P > 0 {
        // Safety: the caller's contract.
        unsafe {
            tile_pairs::<R, P, C, KH, KW, SW, SH, DH, DW, RELU>(
                a,
                ring,
                slots,
                bias,
                (out, out_rs),
            );
        }
        return R;
    }
    let mut ox = 0;
    while ox < OW {
        let left = OW - ox;
        // Safety: the caller's contract; positions `ox..ox + 16 Z` past `OW` are masked.
        unsafe {
            let (ring, out) = (ring.add(ox), out.add(ox));
            if left > 16 {
                let mask = if left >= 32 {
                    u16::MAX
                } else {
                    (1u16 << (left - 16)) - 1
                };
                tile::<R, T, 2, C, KH, KW, OW, SW, SH, DH, DW, RELU>(
                    a,
                    ring,
                    slots,
                    bias,
                    (out, out_rs),
                    mask,
                );
                ox += 32;
            } else {
                let mask = if left >= 16 {
                    u16::MAX
                } else {
                    (1u16 << left) - 1
                };
                tile::<R, T, 1, C, KH, KW, OW, SW, SH, DH, DW, RELU>(
                    a,
                    ring,
                    slots,
                    bias,
                    (out, out_rs),
                    mask,
                );
                ox += 16;
            }
        }
    }
    R
}

/// One tile: `R` channels by `16 Z` positions (the last register's lanes in `mask`).
///
/// # Safety
/// As in [`row_block`], `ring` and `out` advanced to the tile's first position.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx,fma")]
unsafe fn tile<
    const R: usize,
    const T: usize,
    const Z: usize,
    const C: usize,
    const KH: usize,
    const KW: usize,
    const OW: usize,
    const SW: usize,
    const SH: usize,
    const DH: usize,
    const DW: usize,
    const RELU: bool,
>(
    a: *const f32,
    ring: *const f32,
    slots: &[[usize; KH]; 4],
    bias: Option<*const f32>,
    (out, out_rs): (*mut f32, usize),
    mask: u16,
) {
    use core::arch::x86_64::{
        __m512, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps,
        _mm512_max_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_storeu_ps,
    };
    let k = C * KH * KW;
    let lp = phase_len(OW, KW, SW, DW);
    let channel = ring_rows(KH, DH, SH, OW) * SW * lp;
    // Safety: the caller's contract (see `conv2d_avx512`).
    unsafe {
        let mut v: [[[__m512; Z]; T]; R] = core::array::from_fn(|r| {
            let start = bias.map_or(_mm512_setzero_ps(), |b| _mm512_set1_ps(*b.add(r)));
            [[start; Z]; T]
        });
        let mut ak = a;
        for c in 0..C {
            let plane = ring.add(c * channel);
            for ky in 0..KH {
                let rows: [*const f32; T] = core::array::from_fn(|t| plane.add(slots[t][ky]));
                for kx in 0..KW {
                    let at = (kx * DW) % SW * lp + kx * DW / SW;
                    let bv: [[__m512; Z]; T] = core::array::from_fn(|t| {
                        let p = rows[t].add(at);
                        core::array::from_fn(|z| {
                            if z + 1 == Z {
                                _mm512_maskz_loadu_ps(mask, p.add(16 * z))
                            } else {
                                _mm512_loadu_ps(p.add(16 * z))
                            }
                        })
                    });
                    for (r, x) in v.iter_mut().enumerate() {
                        let av = _mm512_set1_ps(*ak.add(r * k));
                        for (x, bv) in x.iter_mut().zip(&bv) {
                            for (x, bv) in x.iter_mut().zip(bv) {
                                *x = _mm512_fmadd_ps(av, *bv, *x);
                            }
                        }
                    }
                    ak = ak.add(1);
                }
            }
        }
        for (r, x) in v.iter().enumerate() {
            for (t, x) in x.iter().enumerate() {
                for (z, x) in x.iter().enumerate() {
                    let x = if RELU {
                        _mm512_max_ps(_mm512_setzero_ps(), *x)
                    } else {
                        *x
                    };
                    let o = out.add(r * out_rs + t * OW + 16 * z);
                    if z + 1 == Z {
                        _mm512_mask_storeu_ps(o, mask, x);
                    } else {
                        _mm512_storeu_ps(o, x);
                    }
                }
            }
        }
    }
}

/// One tile over `2 P` output rows of 8 positions: `R` channels by `P` registers, each
/// holding two consecutive rows (8 lanes each, their ring rows joined per step).
///
/// # Safety
/// As in [`row_block`], `OW` = 8.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx,fma")]
unsafe fn tile_pairs<
    const R: usize,
    const P: usize,
    const C: usize,
    const KH: usize,
    const KW: usize,
    const SW: usize,
    const SH: usize,
    const DH: usize,
    const DW: usize,
    const RELU: bool,
>(
    a: *const f32,
    ring: *const f32,
    slots: &[[usize; KH]; 4],
    bias: Option<*const f32>,
    (out, out_rs): (*mut f32, usize),
) {
    use core::arch::x86_64::{
        __m512, _mm256_castpd_ps, _mm256_castps_pd, _mm256_loadu_ps, _mm256_storeu_ps,
        _mm512_castpd_ps, _mm512_castps_pd, _mm512_castps256_ps512, _mm512_castps512_ps256,
        _mm512_extractf64x4_pd, _mm512_fmadd_ps, _mm512_insertf64x4, _mm512_max_ps, _mm512_set1_ps,
        _mm512_setzero_ps,
    };
    const OW: usize = 8;
    let k = C * KH * KW;
    let lp = phase_len(OW, KW, SW, DW);
    let channel = ring_rows(KH, DH, SH, OW) * SW * lp;
    // Safety: the caller's contract (see `conv2d_avx512`).
    unsafe {
        let mut v: [[__m512; P]; R] = core::array::from_fn(|r| {
            [bias.map_or(_mm512_setzero_ps(), |b| _mm512_set1_ps(*b.add(r))); P]
        });
        let mut ak = a;
        for c in 0..C {
            let plane = ring.add(c * channel);
            for ky in 0..KH {
                let rows: [*const f32; 4] = core::array::from_fn(|t| plane.add(slots[t][ky]));
                for kx in 0..KW {
                    let at = (kx * DW) % SW * lp + kx * DW / SW;
                    let bv: [__m512; P] = core::array::from_fn(|j| {
                        let lo = _mm512_castps256_ps512(_mm256_loadu_ps(rows[2 * j].add(at)));
                        let hi = _mm256_castps_pd(_mm256_loadu_ps(rows[2 * j + 1].add(at)));
                        _mm512_castpd_ps(_mm512_insertf64x4::<1>(_mm512_castps_pd(lo), hi))
                    });
                    for (r, x) in v.iter_mut().enumerate() {
                        let av = _mm512_set1_ps(*ak.add(r * k));
                        for (x, bv) in x.iter_mut().zip(&bv) {
                            *x = _mm512_fmadd_ps(av, *bv, *x);
                        }
                    }
                    ak = ak.add(1);
                }
            }
        }
        for (r, x) in v.iter().enumerate() {
            for (j, x) in x.iter().enumerate() {
                let x = if RELU {
                    _mm512_max_ps(_mm512_setzero_ps(), *x)
                } else {
                    *x
                };
                let o = out.add(r * out_rs + 2 * j * OW);
                _mm256_storeu_ps(o, _mm512_castps512_ps256(x));
                let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(x)));
                _mm256_storeu_ps(o.add(OW), hi);
            }
        }
    }
}
