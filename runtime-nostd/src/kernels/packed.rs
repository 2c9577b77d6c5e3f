//! Matrix products against a right-hand side the macro packed at compile time.
//!
//! `B[K, N]` is stored as `ceil(N / NR)` panels of `NR` columns, each panel `[K][NR]`
//! row-major, the last one padded with zeros. A tile of `MR` rows of `A` times one
//! panel then keeps `MR x NR` accumulators in registers and reads `B` contiguously, once
//! per row block. Used by `Gemm` and `MatMul` with a constant `B`, by `Conv` (after
//! im2col into planned scratch) and by the `LSTM` gate products.

pub use tinyonnx_layout::{NR, packed_len};

#[cfg(test)]
pub(crate) use super::arch::without_avx512;
#[cfg(target_arch = "x86_64")]
pub use super::arch::x86_64::cpu::{avx_fma, avx512};

/// Rows of `A` and panels of `B` one host tile multiplies at once: enough independent
/// accumulator chains to hide the add latency without running out of vector
/// registers (16 with SSE or AVX, 32 with AVX-512).
#[cfg(target_feature = "avx512f")]
const MR: usize = 8;
#[cfg(not(target_feature = "avx512f"))]
const MR: usize = 4;
#[cfg(target_feature = "avx")]
const QR: usize = 2;
#[cfg(not(target_feature = "avx"))]
const QR: usize = 1;

/// [`packed_len`], or `None` where it overflows.
const fn packed_len_checked(k: usize, n: usize) -> Option<usize> {
    match n.div_ceil(NR).checked_mul(NR) {
        Some(cols) => cols.checked_mul(k),
        None => None,
    }
}

/// The largest index `(r - 1) rs + (c - 1) cs` of an `r x c` strided view (`r`, `c` at
/// least 1), or `None` where it overflows.
fn last_index((r, rs): (usize, usize), (c, cs): (usize, usize)) -> Option<usize> {
    (r - 1)
        .checked_mul(rs)?
        .checked_add((c - 1).checked_mul(cs)?)
}

/// A strided matrix view: element `(r, j)` is `values[r * rows + j * cols]`.
#[derive(Debug, Clone, Copy)]
pub struct Strided<'a> {
    /// The elements.
    pub values: &'a [f32],
    /// Stride between rows (0 broadcasts one row).
    pub rows: usize,
    /// Stride between columns (0 broadcasts one column).
    pub cols: usize,
}

/// `y(r, j) = act(init(r, j) + sum_k a[r * a_rs + k] * B(k, j))` for `r < m`, `j < n`,
/// with `B` packed (see the module docs), `init` zero when absent, `act` a Relu when
/// `relu`, and `y(r, j)` stored at `y[r * y_rs + j * y_cs]`.
///
/// The length checks are inlined into the caller, where generated code's constant
/// sizes and slice lengths fold them away; the product itself is one shared function.
///
/// # Panics
/// When a slice is shorter than the sizes and strides need (a bug in generated code).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn gemm_packed(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    a_rs: usize,
    bp: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    (y_rs, y_cs): (usize, usize),
    relu: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    // The tiles read and write through raw pointers after these checks, so each is
    // computed without overflow: a wrapped index would pass and reach outside a slice.
    assert!(
        k == 0 || last_index((m, a_rs), (k, 1)).is_some_and(|i| i < a.len()),
        "gemm_packed: A too short"
    );
    assert!(
        packed_len_checked(k, n).is_some_and(|l| l <= bp.len()),
        "gemm_packed: B too short"
    );
    assert!(
        last_index((m, y_rs), (n, y_cs)).is_some_and(|i| i < y.len()),
        "gemm_packed: Y too short"
    );
    if let Some(c) = init {
        assert!(
            last_index((m, c.rows), (n, c.cols)).is_some_and(|i| i < c.values.len()),
            "gemm_packed: init too short"
        );
    }
    // Safety: the checks above are the function's contract.
    unsafe { gemm_checked((m, k, n), a, a_rs, bp, init, y, (y_rs, y_cs), relu) }
}

/// [`gemm_packed`] after its checks.
///
/// # Safety
/// `m`, `n` > 0 and the slices hold what [`gemm_packed`] checks (computed without
/// overflow).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
unsafe fn gemm_checked(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    a_rs: usize,
    bp: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    (y_rs, y_cs): (usize, usize),
    relu: bool,
) {
    // Safety: the caller checked these (the contract above). Said here, they let the
    // compiler drop the loops' own entry tests and overflow paths, as when the checks
    // were in this function.
    unsafe {
        core::hint::assert_unchecked(m > 0 && n > 0);
        core::hint::assert_unchecked(last_index((m, y_rs), (n, y_cs)).is_some_and(|i| i < y.len()));
    }
    let mut r0 = 0;
    if cfg!(all(feature = "fma-vfp4", target_arch = "arm")) {
        // One row at a time through the VFMA routine.
        while r0 < m {
            rows::<1, 1>(r0, (k, n, a, a_rs, bp, init), y, (y_rs, y_cs), relu);
            r0 += 1;
        }
        return;
    }
    // Row blocks of MR, then 4, 2 and 1 rows; with AVX (at compile or run time) two
    // panels a block, or four for two rows: 8 or 16 accumulators of 8 floats.
    #[cfg(target_arch = "x86_64")]
    let avx = avx_fma();
    #[cfg(not(target_arch = "x86_64"))]
    let avx = false;
    let args = (k, n, a, a_rs, bp, init);
    let out = (y_rs, y_cs);
    #[cfg(target_arch = "x86_64")]
    if avx && avx512() {
        // Twelve rows by four panels (two 512-bit registers a row, a panel pair each):
        // 24 accumulators, each step of `k` loading two values of `B` per row of `A`
        // broadcast; then eight and four rows at a time, the last panels in a pair
        // and alone; the rest as below.
        while r0 + 12 <= m {
            rows_avx::<12, 4>(r0, args, y, out, relu);
            r0 += 12;
        }
        if r0 + 8 <= m {
            rows_avx::<8, 4>(r0, args, y, out, relu);
            r0 += 8;
        }
        while r0 + 4 <= m {
            rows_avx::<4, 4>(r0, args, y, out, relu);
            r0 += 4;
        }
    }
    if MR > 4 {
        while r0 + MR <= m {
            rows::<MR, QR>(r0, args, y, out, relu);
            r0 += MR;
        }
    }
    if avx && MR == 4 {
        // Six rows by two panels: twelve accumulators, two panel loads and one
        // broadcast in the sixteen AVX registers.
        while r0 + 6 <= m {
            rows_avx::<6, 2>(r0, args, y, out, relu);
            r0 += 6;
        }
    }
    while r0 + 4 <= m {
        if avx {
            rows_avx::<4, 2>(r0, args, y, out, relu);
        } else {
            rows::<4, 1>(r0, args, y, out, relu);
        }
        r0 += 4;
    }
    if r0 + 2 <= m {
        if avx {
            rows_avx::<2, 4>(r0, args, y, out, relu);
        } else {
            rows::<2, 2>(r0, args, y, out, relu);
        }
        r0 += 2;
    }
    if r0 < m {
        if avx {
            // One row (a batch-1 Gemm, an LSTM step): eight panels for eight independent
            // accumulator chains, as four would leave the FMA units half idle.
            rows_avx::<1, 8>(r0, args, y, out, relu);
        } else {
            rows::<1, 4>(r0, args, y, out, relu);
        }
    }
}

/// The operands every row block shares: `k`, `n`, `A`, its row stride, packed `B` and
/// the accumulator init.
type Args<'a> = (
    usize,
    usize,
    &'a [f32],
    usize,
    &'a [f32],
    Option<Strided<'a>>,
);

/// [`rows`] where the CPU has AVX and FMA (the caller checked [`avx_fma`]): compiled
/// with those features so that the tile's accumulators stay in registers from their
/// start (the bias) to their stores. Without them in the caller, the AVX tile could
/// not be inlined and its accumulators would go through memory on every block.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn rows_avx<const R: usize, const Q: usize>(
    r0: usize,
    args: Args<'_>,
    y: &mut [f32],
    out: (usize, usize),
    relu: bool,
) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx,fma")]
        #[allow(clippy::too_many_arguments)]
        fn rows_compiled<const R: usize, const Q: usize>(
            r0: usize,
            args: Args<'_>,
            y: &mut [f32],
            out: (usize, usize),
            relu: bool,
        ) {
            rows::<R, Q>(r0, args, y, out, relu);
        }
        debug_assert!(avx_fma());
        // Safety: only called when `avx_fma()` holds (every call site checks it).
        unsafe { rows_compiled::<R, Q>(r0, args, y, out, relu) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    rows::<R, Q>(r0, args, y, out, relu);
}

/// Rows `r0..r0 + R` against every panel, `Q` panels at a time (then, for `Q` = 4, a
/// pair, then one at a time).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn rows<const R: usize, const Q: usize>(
    r0: usize,
    args: Args<'_>,
    y: &mut [f32],
    out: (usize, usize),
    relu: bool,
) {
    let panels = args.1.div_ceil(NR);
    let mut p = 0;
    while p < panels {
        if p + Q <= panels {
            block::<R, Q>(r0, p, args, y, out, relu);
            p += Q;
        } else if Q == 4 && p + 2 <= panels {
            block::<R, 2>(r0, p, args, y, out, relu);
            p += 2;
        } else {
            block::<R, 1>(r0, p, args, y, out, relu);
            p += 1;
        }
    }
}

/// Rows `r0..r0 + R` against panels `p0..p0 + Q`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn block<const R: usize, const Q: usize>(
    r0: usize,
    p0: usize,
    (k, n, a, a_rs, bp, init): Args<'_>,
    y: &mut [f32],
    (y_rs, y_cs): (usize, usize),
    relu: bool,
) {
    let width = |q: usize| NR.min(n - (p0 + q) * NR);
    // Whole panels take the contiguous paths below; on Arm (the Cortex-M boards) they
    // are left out, as they cost more flash (1.8 KB on the M4F's MLP) than they save.
    let full = cfg!(not(target_arch = "arm")) && (0..Q).all(|q| width(q) == NR);
    #[cfg(target_arch = "x86_64")]
    if (Q == 2 || Q == 4) && R >= 4 && full && y_cs == 1 && avx512() {
        // Row-major output with whole pairs of panels: the AVX-512 tile starts from the
        // init and stores into `y` itself, its accumulators never in memory.
        let c0 = p0 * NR;
        let start = match init {
            None => Some(None),
            Some(c) if c.rows == 1 && c.cols == 0 => Some(Some((&c.values[r0..r0 + R], 1, false))),
            Some(c) if c.rows == 0 && c.cols == 1 => {
                Some(Some((&c.values[c0..c0 + Q * NR], 0, true)))
            }
            Some(_) => None,
        };
        if let Some(start) = start {
            let at = r0 * y_rs + c0;
            let dst = &mut y[at..at + (R - 1) * y_rs + Q * NR];
            let panels = &bp[p0 * k * NR..(p0 + Q) * k * NR];
            // Safety: the asserts of `gemm_packed` bound the rows of `a`; `panels`, the
            // start values and `dst` (row `r` at `r * y_rs`, `Q * NR` values) are slices
            // holding what the tile reads and writes; the CPU has AVX-512F.
            unsafe {
                tile_wide::<R, Q>(
                    k,
                    (a.as_ptr().add(r0 * a_rs), a_rs),
                    panels,
                    start.map(|(c, rs, cols)| (c.as_ptr(), rs, cols)),
                    (dst.as_mut_ptr(), y_rs),
                    relu,
                )
            };
            return;
        }
    }
    // (Declared after the AVX-512 path, which has no use for it: zeroing `R x Q x NR`
    // values a block was 3.5 % of the ResNet.)
    let mut acc = [[[0.0f32; NR]; Q]; R];
    if let Some(c) = init
        && c.rows == 0
        && c.cols == 1
        && full
    {
        // One bias row for every row: contiguous copies.
        for q in 0..Q {
            let c0 = (p0 + q) * NR;
            let bias: [f32; NR] = c.values[c0..c0 + NR].try_into().expect("NR values");
            for row in acc.iter_mut() {
                row[q] = bias;
            }
        }
    } else if let Some(c) = init
        && c.rows == 1
        && c.cols == 0
        && full
    {
        // One value per row (a convolution's bias): broadcast.
        for (r, row) in acc.iter_mut().enumerate() {
            *row = [[c.values[r0 + r]; NR]; Q];
        }
    } else if let Some(c) = init {
        for (r, row) in acc.iter_mut().enumerate() {
            for (q, part) in row.iter_mut().enumerate() {
                let c0 = (p0 + q) * NR;
                for (j, v) in part[..width(q)].iter_mut().enumerate() {
                    *v = c.values[(r0 + r) * c.rows + (c0 + j) * c.cols];
                }
            }
        }
    }
    let panels = &bp[p0 * k * NR..(p0 + Q) * k * NR];
    // Safety: the asserts of `gemm_packed` bound every index: row `r0 + r < m` starts
    // at `(r0 + r) * a_rs` and has `k` values; `panels` holds `Q` panels of `k * NR`.
    unsafe { tile::<R, Q>(k, a.as_ptr().add(r0 * a_rs), a_rs, panels, &mut acc) };
    // Column by column, rows innermost: when the output is stored transposed
    // (`y_rs = 1`, a convolution's NCHW), consecutive stores are adjacent.
    let yp = y.as_mut_ptr();
    if y_cs == 1 && full {
        // Row-major output: each accumulator row of a panel is eight adjacent values.
        for (r, row) in acc.iter().enumerate() {
            for (q, part) in row.iter().enumerate() {
                let at = (r0 + r) * y_rs + (p0 + q) * NR;
                let dst = &mut y[at..at + NR];
                for (d, &v) in dst.iter_mut().zip(part) {
                    *d = if relu { v.max(0.0) } else { v };
                }
            }
        }
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if y_rs == 1 && R.is_multiple_of(4) && full && avx_fma() {
        for q in 0..Q {
            for r in (0..R).step_by(4) {
                let rows = [&acc[r][q], &acc[r + 1][q], &acc[r + 2][q], &acc[r + 3][q]];
                // Safety: the CPU has AVX (checked); rows `r0 + r .. r0 + r + 4 <= m`,
                // columns `(p0 + q) * NR .. + NR <= n` (full panels): every store is
                // inside the length `gemm_packed` asserted.
                unsafe {
                    store_columns_avx(rows, yp.add((p0 + q) * NR * y_cs + r0 + r), y_cs, relu)
                };
            }
        }
        return;
    }
    for q in 0..Q {
        for j in 0..width(q) {
            let base = (p0 + q) * NR * y_cs + j * y_cs + r0 * y_rs;
            for (r, row) in acc.iter().enumerate() {
                let v = row[q][j];
                // Safety: row `r0 + r < m`, column `(p0 + q) * NR + j < n`: inside the
                // length `gemm_packed` asserted.
                unsafe { *yp.add(base + r * y_rs) = if relu { v.max(0.0) } else { v } };
            }
        }
    }
}

/// `acc[r][q][j] += sum_k a[r * a_rs + k] * panels[(q * k + kk) * NR + j]`.
///
/// # Safety
/// `a` must be valid for reads at `r * a_rs + kk` for `r < R`, `kk < k`, and `panels`
/// must hold `Q * k * NR` values.
#[inline(always)]
unsafe fn tile<const R: usize, const Q: usize>(
    k: usize,
    a: *const f32,
    a_rs: usize,
    panels: &[f32],
    acc: &mut [[[f32; NR]; Q]; R],
) {
    #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
    if R == 1 && Q == 1 {
        // Safety: as this function's contract; the routine reads `k` floats of `a`,
        // `k * NR` of `panels`, reads and writes the `NR` accumulators.
        unsafe {
            super::arch::arm::tinyonnx_panel8_vfma(
                a,
                panels.as_ptr(),
                acc.as_mut_ptr().cast(),
                k as u32,
            )
        };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if (Q == 2 || Q == 4) && R >= 4 && avx512() {
        // The `R x Q x NR` accumulators are `R` rows of `Q * NR`, read and written in
        // place.
        let acc: *mut f32 = acc.as_mut_ptr().cast();
        // Safety: as this function's contract; the CPU has AVX-512F (checked at compile
        // time or by `avx512`).
        unsafe {
            tile_wide::<R, Q>(
                k,
                (a, a_rs),
                panels,
                Some((acc, Q * NR, true)),
                (acc, Q * NR),
                false,
            )
        };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if avx_fma() {
        // Safety: as this function's contract; the CPU has AVX and FMA (checked at
        // compile time or by `avx_fma`).
        unsafe { tile_fma::<R, Q>(k, a, a_rs, panels, acc) };
        return;
    }
    let b = panels.as_ptr();
    for kk in 0..k {
        let mut bv = [[0.0f32; NR]; Q];
        for (q, v) in bv.iter_mut().enumerate() {
            // Safety: `q < Q`, `kk < k`: inside the `Q * k * NR` values.
            *v = unsafe { *b.add((q * k + kk) * NR).cast::<[f32; NR]>() };
        }
        for (r, row) in acc.iter_mut().enumerate() {
            // Safety: the caller's contract.
            let av = unsafe { *a.add(r * a_rs + kk) };
            for (part, bq) in row.iter_mut().zip(&bv) {
                for j in 0..NR {
                    part[j] += av * bq[j];
                }
            }
        }
    }
}

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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx,fma")]
unsafe fn tile_avx512<const R: usize, const Z: usize, const PAIRED: bool>(
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
                    _mm512_max_ps(*x, _mm512_setzero_ps())
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
/// 512-bit register; [`gemm_packed`] joins two 256-bit panel rows instead, which takes
/// the shuffle port the fused multiply-adds also use. Whole pairs of columns are
/// stored: `y` rows hold `n` rounded up to `2 NR`.
///
/// # Safety
/// The CPU must have AVX-512F (see [`avx512`]).
///
/// # Panics
/// When a slice is shorter than the sizes need.
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tile_wide<const R: usize, const Q: usize>(
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

/// [`tile`] with 256-bit fused multiply-adds: compiled for AVX and FMA whatever the
/// build's target features, and called only when [`avx_fma`] says the CPU has them.
///
/// # Safety
/// As [`tile`], and the CPU must have AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
#[inline]
unsafe fn tile_fma<const R: usize, const Q: usize>(
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
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn store_columns_avx(rows: [&[f32; NR]; 4], y: *mut f32, y_cs: usize, relu: bool) {
    use core::arch::x86_64::{
        _mm_storeu_ps, _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_loadu_ps,
        _mm256_max_ps, _mm256_setzero_ps, _mm256_shuffle_ps, _mm256_unpackhi_ps,
        _mm256_unpacklo_ps,
    };
    // Safety: the caller's contract (AVX; the 8 x 4 destination values).
    unsafe {
        let mut v = rows.map(|r| _mm256_loadu_ps(r.as_ptr()));
        if relu {
            v = v.map(|x| _mm256_max_ps(x, _mm256_setzero_ps()));
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

#[cfg(test)]
mod tests {
    use super::*;

    // Strides whose index arithmetic wraps must fail the length checks, not pass them
    // (in release builds the old unchecked products wrapped to small numbers, and the
    // tiles then read and wrote far outside the slices).
    #[test]
    #[should_panic(expected = "gemm_packed: A too short")]
    fn wrapping_a_stride_is_refused() {
        let (a, bp, mut y) = ([1.0f32; 4], [1.0f32; NR * 2], [0.0f32; 3]);
        gemm_packed((3, 2, 1), &a, 1 << 63, &bp, None, &mut y, (1, 0), false);
    }

    #[test]
    #[should_panic(expected = "gemm_packed: Y too short")]
    fn wrapping_y_stride_is_refused() {
        let (a, bp, mut y) = ([1.0f32; 6], [1.0f32; NR * 2], [0.0f32; 3]);
        gemm_packed((3, 2, 1), &a, 2, &bp, None, &mut y, (1 << 63, 0), false);
    }

    #[test]
    #[should_panic(expected = "gemm_packed: init too short")]
    fn wrapping_init_stride_is_refused() {
        let (a, bp, mut y, c) = ([1.0f32; 6], [1.0f32; NR * 2], [0.0f32; 3], [0.0f32; 3]);
        let init = Strided {
            values: &c,
            rows: 1 << 63,
            cols: 0,
        };
        gemm_packed((3, 2, 1), &a, 2, &bp, Some(init), &mut y, (1, 0), false);
    }

    #[test]
    #[should_panic(expected = "gemm_packed: B too short")]
    fn overflowing_b_length_is_refused() {
        let (a, bp, mut y) = ([1.0f32; 4], [1.0f32; NR * 2], [0.0f32; 2]);
        gemm_packed(
            (1, 2, usize::MAX - 3),
            &a,
            0,
            &bp,
            None,
            &mut y,
            (0, 0),
            false,
        );
    }

    const MAXK: usize = 9;
    const MAXM: usize = 25;
    const MAXN: usize = 40;

    fn pack(k: usize, n: usize, b: &[f32]) -> [f32; MAXK * MAXN] {
        let mut out = [0.0; MAXK * MAXN];
        for p in 0..n.div_ceil(NR) {
            for kk in 0..k {
                for j in 0..NR.min(n - p * NR) {
                    out[(p * k + kk) * NR + j] = b[kk * n + p * NR + j];
                }
            }
        }
        out
    }

    /// Every row-block and panel-block path (m from 1 to 25, n from 1 to 40 with
    /// partial panels, k past the AVX-512 tile's four-step unrolling), with and without
    /// init and Relu, stored transposed; in a build without AVX-512 (or AVX) also with
    /// the run-time AVX-512 (and AVX) paths switched off.
    #[test]
    fn matches_naive_product() {
        check_against_naive();
        without_avx512(|| {
            check_against_naive();
            #[cfg(all(
                target_arch = "x86_64",
                not(all(target_feature = "avx", target_feature = "fma"))
            ))]
            {
                use core::sync::atomic::Ordering;
                let state = &crate::kernels::arch::x86_64::cpu::AVX_STATE;
                let avx = state.swap(1, Ordering::Relaxed);
                check_against_naive();
                state.store(avx, Ordering::Relaxed);
            }
        });
    }

    fn check_against_naive() {
        let a: [f32; MAXM * 10] = core::array::from_fn(|i| (i as f32 * 0.37).sin());
        let b: [f32; MAXK * MAXN] = core::array::from_fn(|i| (i as f32 * 0.91).cos());
        let c: [f32; MAXN] = core::array::from_fn(|i| i as f32 * 0.1 - 0.5);
        for m in 1..=MAXM {
            for k in [1, 3, MAXK] {
                for n in 1..=MAXN {
                    let relu = n % 2 == 0;
                    // No init, a bias per column (Gemm) or one per row (Conv).
                    let init = (n % 3 != 0).then(|| Strided {
                        values: &c,
                        rows: n % 3 - 1,
                        cols: 2 - n % 3,
                    });
                    let bp = pack(k, n, &b);
                    // Stored transposed (a convolution's NCHW) and row-major.
                    for (y_rs, y_cs) in [(1, m), (n, 1)] {
                        let mut y = [f32::NAN; MAXM * MAXN];
                        gemm_packed((m, k, n), &a, 10, &bp, init, &mut y, (y_rs, y_cs), relu);
                        for r in 0..m {
                            for j in 0..n {
                                let mut s = init.map_or(0.0, |i| c[r * i.rows + j * i.cols]);
                                for kk in 0..k {
                                    s += a[r * 10 + kk] * b[kk * n + j];
                                }
                                let want = if relu { s.max(0.0) } else { s };
                                let got = y[r * y_rs + j * y_cs];
                                assert!(
                                    (got - want).abs() < 1e-5,
                                    "m={m} k={k} n={n} ({r}, {j}) strides ({y_rs}, {y_cs})"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
