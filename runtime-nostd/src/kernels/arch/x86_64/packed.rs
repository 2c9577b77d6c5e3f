//! The matrix-product tiles of [`crate::kernels::packed`] written with AVX, FMA and
//! AVX-512 intrinsics, and the AVX-512 product over pairs of panels the Winograd
//! convolution uses. The portable `packed::block` and `packed::tile` dispatch here.

use tinyonnx_layout::NR;

use crate::kernels::last_index;

/// `R` rows of `A` times `Z` pairs of panels with 512-bit fused multiply-adds: each
/// accumulator row of a pair (16 values, both panels) is one register, each step of `k`
/// joins the two panels' rows into one register (with `PAIRED`, the pair is stored as
/// `[k][2 NR]` and each row is one load) and broadcasts one value of `A` per row. The
/// accumulators start at zero or from `start` (`(values, row stride, per column)`: 16 Z
/// values a row, or one value a row broadcast) and end at `out` (16 Z values a row,
/// `out_rs` apart), clamped at zero when `relu`.
///
/// # Safety
/// Row `r < R` of `a` must have `k` values at `r * a_rs`, `panels` `2 Z` panels of
/// `k * NR`; `start` and `out` must be valid for the reads and writes above; the CPU
/// must have AVX-512F.
#[target_feature(enable = "avx512f,avx,fma")]
pub(crate) unsafe fn tile_avx512<const R: usize, const Z: usize, const PAIRED: bool>(
    k: usize,
    (a, a_rs): (*const f32, usize),
    panels: &[f32],
    start: Option<(*const f32, usize, bool)>,
    (out, out_rs): (*mut f32, usize),
    relu: bool,
) {
    use core::arch::x86_64::{
        __m512, _mm256_castps_pd, _mm256_loadu_ps, _mm512_castpd_ps, _mm512_castps_pd,
        _mm512_castps256_ps512, _mm512_fmadd_ps, _mm512_insertf64x4, _mm512_loadu_ps,
        _mm512_max_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_storeu_ps,
    };
    const { assert!(NR == 8) };
    // Values of `B` a step of `k` moves by within a panel (or a pair of them).
    const fn row_len(paired: bool) -> usize {
        if paired { 2 * NR } else { NR }
    }
    let b = panels.as_ptr();
    // Safety: the caller's contract: `start` and `out` hold `R` rows of `16 Z` values,
    // `panels` `2 Z` panels of `k * NR`, row `r` of `a` has `k` values at `r * a_rs`.
    unsafe {
        let mut v: [[__m512; Z]; R] = core::array::from_fn(|r| {
            core::array::from_fn(|z| match start {
                None => _mm512_setzero_ps(),
                Some((c, rs, true)) => _mm512_loadu_ps(c.add(r * rs + 16 * z)),
                Some((c, rs, false)) => _mm512_set1_ps(*c.add(r * rs)),
            })
        });
        // One step of `k` from row pointers `rows` (plus `u`) and panel rows at `bk`.
        let step = |v: &mut [[__m512; Z]; R], rows: &[*const f32; R], bk: *const f32, u: usize| {
            let bv: [__m512; Z] = core::array::from_fn(|z| {
                if PAIRED {
                    return _mm512_loadu_ps(bk.add((z * k + u) * 2 * NR));
                }
                let lo = _mm512_castps256_ps512(_mm256_loadu_ps(bk.add((2 * z * k + u) * NR)));
                let hi = _mm256_castps_pd(_mm256_loadu_ps(bk.add(((2 * z + 1) * k + u) * NR)));
                _mm512_castpd_ps(_mm512_insertf64x4::<1>(_mm512_castps_pd(lo), hi))
            });
            for (x, row) in v.iter_mut().zip(rows) {
                let av = _mm512_set1_ps(*row.add(u));
                for (x, bv) in x.iter_mut().zip(&bv) {
                    *x = _mm512_fmadd_ps(av, *bv, *x);
                }
            }
        };
        // Four steps per set of row pointers: the addresses cost one add a row per four
        // steps rather than per step (they compete with the FMAs for ports).
        let mut kk = 0;
        while kk + 4 <= k {
            let rows: [*const f32; R] = core::array::from_fn(|r| a.add(r * a_rs + kk));
            let bk = b.add(kk * row_len(PAIRED));
            for u in 0..4 {
                step(&mut v, &rows, bk, u);
            }
            kk += 4;
        }
        while kk < k {
            let rows: [*const f32; R] = core::array::from_fn(|r| a.add(r * a_rs + kk));
            step(&mut v, &rows, b.add(kk * row_len(PAIRED)), 0);
            kk += 1;
        }
        for (r, x) in v.iter().enumerate() {
            for (z, x) in x.iter().enumerate() {
                let x = if relu {
                    _mm512_max_ps(_mm512_setzero_ps(), *x)
                } else {
                    *x
                };
                _mm512_storeu_ps(out.add(r * out_rs + 16 * z), x);
            }
        }
    }
}

/// `y = a b` (`[m, k]` rows `a_rs` apart times `[k, n]`, rows of `y` `y_rs` apart)
/// with `B` packed in pairs of panels, `[k][2 NR]` each (panels `2 q` and `2 q + 1` side
/// by side, `n` rounded up to whole pairs), so that each step of `k` loads a pair as one
/// 512-bit register; [`crate::kernels::packed::gemm_packed`] joins two 256-bit panel rows instead, which takes
/// the shuffle port the fused multiply-adds also use. Whole pairs of columns are
/// stored: `y` rows hold `n` rounded up to `2 NR`.
///
/// # Safety
/// The CPU must have AVX-512F (see [`super::cpu::avx512`]).
///
/// # Panics
/// When a slice is shorter than the sizes need.
#[target_feature(enable = "avx512f,avx,fma")]
pub unsafe fn gemm_pairs(
    (m, k, n): (usize, usize, usize),
    (a, a_rs): (&[f32], usize),
    bp: &[f32],
    (y, y_rs): (&mut [f32], usize),
) {
    const W: usize = 2 * NR;
    let pairs = n.div_ceil(W);
    if m == 0 || pairs == 0 {
        return;
    }
    // Checked as in `gemm_packed`: the tiles use raw pointers after these.
    assert!(
        k == 0 || last_index((m, a_rs), (k, 1)).is_some_and(|i| i < a.len()),
        "gemm_pairs: A too short"
    );
    assert!(
        pairs
            .checked_mul(W)
            .and_then(|c| c.checked_mul(k))
            .is_some_and(|l| l <= bp.len()),
        "gemm_pairs: B too short"
    );
    assert!(
        pairs
            .checked_mul(W)
            .and_then(|cols| last_index((m, y_rs), (cols, 1)))
            .is_some_and(|i| i < y.len()),
        "gemm_pairs: Y too short"
    );
    /// Rows `r0..r0 + R` against every pair, two at a time.
    ///
    /// # Safety
    /// As `gemm_pairs`, with its asserts; `r0 + R <= m`.
    #[inline(always)]
    unsafe fn rows<const R: usize>(
        r0: usize,
        (k, pairs): (usize, usize),
        (a, a_rs): (*const f32, usize),
        bp: *const f32,
        (y, y_rs): (*mut f32, usize),
    ) {
        let (a, y) = (a.wrapping_add(r0 * a_rs), y.wrapping_add(r0 * y_rs));
        let mut q = 0;
        // Safety: the caller's contract: rows `r0..r0 + R` of `a` and `y`, pairs
        // `q..q + Z` of `bp`.
        unsafe {
            let panels =
                |q: usize, z: usize| core::slice::from_raw_parts(bp.add(q * k * W), z * k * W);
            while q + 2 <= pairs {
                tile_avx512::<R, 2, true>(
                    k,
                    (a, a_rs),
                    panels(q, 2),
                    None,
                    (y.add(q * W), y_rs),
                    false,
                );
                q += 2;
            }
            if q < pairs {
                tile_avx512::<R, 1, true>(
                    k,
                    (a, a_rs),
                    panels(q, 1),
                    None,
                    (y.add(q * W), y_rs),
                    false,
                );
            }
        }
    }
    let dims = (k, pairs);
    let (a, bp, y) = ((a.as_ptr(), a_rs), bp.as_ptr(), (y.as_mut_ptr(), y_rs));
    let mut r0 = 0;
    // Safety: the asserts above bound every row block and pair.
    unsafe {
        while r0 + 12 <= m {
            rows::<12>(r0, dims, a, bp, y);
            r0 += 12;
        }
        if r0 + 8 <= m {
            rows::<8>(r0, dims, a, bp, y);
            r0 += 8;
        }
        while r0 + 4 <= m {
            rows::<4>(r0, dims, a, bp, y);
            r0 += 4;
        }
        while r0 < m {
            rows::<1>(r0, dims, a, bp, y);
            r0 += 1;
        }
    }
}

/// [`tile_avx512`] for `Q` = 2 or 4 panels: one or two registers a row.
///
/// # Safety
/// As [`tile_avx512`] with `Z = Q / 2`.
#[inline(always)]
pub(crate) unsafe fn tile_wide<const R: usize, const Q: usize>(
    k: usize,
    a: (*const f32, usize),
    panels: &[f32],
    start: Option<(*const f32, usize, bool)>,
    out: (*mut f32, usize),
    relu: bool,
) {
    // Safety: the caller's contract.
    unsafe {
        if Q == 2 {
            tile_avx512::<R, 1, false>(k, a, panels, start, out, relu);
        } else {
            tile_avx512::<R, 2, false>(k, a, panels, start, out, relu);
        }
    }
}

/// `kernels::packed::tile` with 256-bit fused multiply-adds: compiled for AVX and FMA whatever the
/// build's target features, and called only when [`super::cpu::avx_fma`] says the CPU has them.
///
/// # Safety
/// As `kernels::packed::tile`, and the CPU must have AVX and FMA.
#[target_feature(enable = "avx,fma")]
#[inline]
pub(crate) unsafe fn tile_fma<const R: usize, const Q: usize>(
    k: usize,
    a: *const f32,
    a_rs: usize,
    panels: &[f32],
    acc: &mut [[[f32; NR]; Q]; R],
) {
    use core::arch::x86_64::{
        __m256, _mm256_broadcast_ss, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_storeu_ps,
    };
    const { assert!(NR == 8) };
    let b = panels.as_ptr();
    // Safety: the CPU has the features (the caller's contract); loads and stores touch the
    // `NR = 8` floats of one accumulator row or one panel row, inside their arrays.
    unsafe {
        let mut v: [[__m256; Q]; R] =
            core::array::from_fn(|r| core::array::from_fn(|q| _mm256_loadu_ps(acc[r][q].as_ptr())));
        for kk in 0..k {
            let bv: [__m256; Q] =
                core::array::from_fn(|q| _mm256_loadu_ps(b.add((q * k + kk) * NR)));
            for (r, row) in v.iter_mut().enumerate() {
                let av = _mm256_broadcast_ss(&*a.add(r * a_rs + kk));
                for (x, bq) in row.iter_mut().zip(&bv) {
                    *x = _mm256_fmadd_ps(av, *bq, *x);
                }
            }
        }
        for (r, row) in v.iter().enumerate() {
            for (q, x) in row.iter().enumerate() {
                _mm256_storeu_ps(acc[r][q].as_mut_ptr(), *x);
            }
        }
    }
}

/// Stores four accumulator rows of one panel transposed: column `j`'s four values at
/// `y + j * y_cs .. + 4` (a 4 x 8 transpose in registers), with a Relu when `relu`.
///
/// # Safety
/// The CPU must have AVX; `y + j * y_cs + i` must be valid for writes for `j < 8`,
/// `i < 4`.
#[target_feature(enable = "avx")]
pub(crate) unsafe fn store_columns_avx(
    rows: [&[f32; NR]; 4],
    y: *mut f32,
    y_cs: usize,
    relu: bool,
) {
    use core::arch::x86_64::{
        _mm_storeu_ps, _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_loadu_ps,
        _mm256_max_ps, _mm256_setzero_ps, _mm256_shuffle_ps, _mm256_unpackhi_ps,
        _mm256_unpacklo_ps,
    };
    // Safety: the caller's contract (AVX; the 8 x 4 destination values).
    unsafe {
        let mut v = rows.map(|r| _mm256_loadu_ps(r.as_ptr()));
        if relu {
            v = v.map(|x| _mm256_max_ps(_mm256_setzero_ps(), x));
        }
        // t0 = [a0 b0 a1 b1 | a4 b4 a5 b5], t1 = [a2 b2 a3 b3 | a6 b6 a7 b7], ...
        let t0 = _mm256_unpacklo_ps(v[0], v[1]);
        let t1 = _mm256_unpackhi_ps(v[0], v[1]);
        let t2 = _mm256_unpacklo_ps(v[2], v[3]);
        let t3 = _mm256_unpackhi_ps(v[2], v[3]);
        // Columns (0 | 4), (1 | 5), (2 | 6), (3 | 7) of the four rows.
        let cols = [
            _mm256_shuffle_ps::<0x44>(t0, t2),
            _mm256_shuffle_ps::<0xEE>(t0, t2),
            _mm256_shuffle_ps::<0x44>(t1, t3),
            _mm256_shuffle_ps::<0xEE>(t1, t3),
        ];
        for (j, c) in cols.iter().enumerate() {
            _mm_storeu_ps(y.add(j * y_cs), _mm256_castps256_ps128(*c));
            _mm_storeu_ps(y.add((j + 4) * y_cs), _mm256_extractf128_ps::<1>(*c));
        }
    }
}
