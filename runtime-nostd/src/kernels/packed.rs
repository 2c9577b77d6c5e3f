//! Matrix products against a right-hand side the macro packed at compile time.
//!
//! `B[K, N]` is stored as `ceil(N / NR)` panels of `NR` columns, each panel `[K][NR]`
//! row-major, the last one padded with zeros. A tile of `MR` rows of `A` times one
//! panel then keeps `MR x NR` accumulators in registers and reads `B` contiguously, once
//! per row block. Used by `Gemm` and `MatMul` with a constant `B`, by `Conv` (after
//! im2col into planned scratch) and by the `LSTM` gate products.

pub use tinyonnx_layout::{NR, packed_len};

#[cfg(target_arch = "x86_64")]
use super::arch::x86_64::packed::{store_columns_avx, tile_fma, tile_wide};
use super::last_index;

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

/// [`gemm_packed`] for a caller whose sizes are values, not constants (the recurrent
/// kernels' sized copies): out of line, where its checks, which do not fold there, are
/// not copied into each call (three a GRU step). `inline` picks `gemm_packed`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn gemm_packed_sized(
    inline: bool,
    mkn: (usize, usize, usize),
    a: &[f32],
    a_rs: usize,
    bp: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    out: (usize, usize),
) {
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn outlined(
        mkn: (usize, usize, usize),
        a: &[f32],
        a_rs: usize,
        bp: &[f32],
        init: Option<Strided<'_>>,
        y: &mut [f32],
        out: (usize, usize),
    ) {
        gemm_packed(mkn, a, a_rs, bp, init, y, out, false);
    }
    if inline {
        gemm_packed(mkn, a, a_rs, bp, init, y, out, false);
    } else {
        outlined(mkn, a, a_rs, bp, init, y, out);
    }
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
    // On the 32-bit cores without the panel routines (Cortex-M3, riscv32), the Relu flag
    // opaque: a constant at every call lets LLVM specialize the shared function once per
    // layer there (five 6 KB copies of it in the Transformer's firmware on the
    // Cortex-M3, more than its 256 KiB of flash; five on the riscv32f before it had the
    // routines). On the other cores it is not specialized, and the opaque value costs
    // stack.
    #[cfg(all(target_pointer_width = "32", not(tinyonnx_fma_rows)))]
    let relu = core::hint::black_box(relu);
    // One init value a row (a convolution's bias), decided here where the caller's
    // init is known: where no call has one, LLVM drops that path from the shared code.
    let row_init = init.is_some_and(|c| c.cols == 0);
    // One row (a batch-1 layer) on the cores with the panel routines: the routine is
    // called from here, with the caller's constants. Through the shared function its
    // arguments and dispatch took about 100 instructions a product, a tenth of the
    // digits MLP.
    #[cfg(tinyonnx_fma_rows)]
    let direct = m == 1;
    #[cfg(not(tinyonnx_fma_rows))]
    let direct = false;
    let (mkn, out, flags) = ((m, k, n), (y_rs, y_cs), (relu, row_init));
    // Safety: the checks above are the contract of both.
    unsafe {
        if direct {
            gemm_rows(mkn, a, a_rs, bp, init, y, out, flags)
        } else {
            gemm_checked(mkn, a, a_rs, bp, init, y, out, flags)
        }
    }
    // On the cores with the panel routines, the columns they leave (a last partial
    // panel, or all of them for an output not in rows) go to the portable tile, in a
    // function of its own: decided here, where the caller's sizes are constants, a
    // model whose products all end on whole panels (the Transformer's) links none of
    // it.
    #[cfg(tinyonnx_fma_rows)]
    {
        let p0 = routine_panels(n, init, y_cs, row_init);
        if p0 * NR < n {
            // Safety: the checks above, and `p0` whole panels of `n` columns.
            unsafe { gemm_tail((m, k, n), a, a_rs, bp, init, y, (y_rs, y_cs), (relu, p0)) }
        }
    }
}

/// Tells the compiler what [`gemm_packed`] checked, so that the loops after it drop
/// their own entry tests and overflow paths.
///
/// # Safety
/// `m`, `n` > 0 and the last output index, computed without overflow, is below `y_len`.
#[inline(always)]
unsafe fn assume_checked((m, n): (usize, usize), y_len: usize, (y_rs, y_cs): (usize, usize)) {
    // Safety: the contract above.
    unsafe {
        core::hint::assert_unchecked(m > 0 && n > 0);
        core::hint::assert_unchecked(last_index((m, y_rs), (n, y_cs)).is_some_and(|i| i < y_len));
    }
}

/// The whole panels of `n` columns the panel routines compute (`rows_fma`): all of
/// them where each output row is a run and the init one row of values, one value a row
/// (`row_init`) or none; none otherwise.
#[cfg(tinyonnx_fma_rows)]
#[inline(always)]
fn routine_panels(n: usize, init: Option<Strided<'_>>, y_cs: usize, row_init: bool) -> usize {
    match init {
        _ if y_cs != 1 => 0,
        None => n / NR,
        Some(c) if (c.rows == 0 && c.cols == 1) || row_init => n / NR,
        Some(_) => 0,
    }
}

/// Whether [`gemm_tail`] takes two rows at a time before the last, loading each B value
/// once for both. Not on Arm, where the two-row copy took about 1 KB of flash for
/// little speed (SugarZoo on the Cortex-M33: 8,200 -> 6,708 B, +0.04 % instructions;
/// Silero VAD +0.2 %). On the riscv32f one row at a time made Silero VAD 28 % slower
/// and saved 400 B.
#[cfg(tinyonnx_fma_rows)]
const TAIL_PAIRS: bool = !cfg!(target_arch = "arm");

/// The columns from panel `p0` on, through the portable tile: two rows at a time where
/// [`TAIL_PAIRS`], then one.
///
/// # Safety
/// As [`gemm_rows`].
#[cfg(tinyonnx_fma_rows)]
#[allow(clippy::too_many_arguments)]
#[inline(never)]
unsafe fn gemm_tail(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    a_rs: usize,
    bp: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    out: (usize, usize),
    (relu, p0): (bool, usize),
) {
    // Safety: this function's contract.
    unsafe { assume_checked((m, n), y.len(), out) };
    let args = (k, n, a, a_rs, bp, init);
    if !TAIL_PAIRS {
        for r0 in 0..m {
            rows_from::<1, 1>(r0, p0, args, y, out, relu);
        }
        return;
    }
    let mut r0 = 0;
    while r0 + 2 <= m {
        rows_from::<2, 1>(r0, p0, args, y, out, relu);
        r0 += 2;
    }
    if r0 < m {
        rows_from::<1, 1>(r0, p0, args, y, out, relu);
    }
}

/// [`gemm_packed`] after its checks: [`gemm_rows`] out of line, the product every call
/// of a firmware shares.
///
/// # Safety
/// As [`gemm_rows`].
#[allow(clippy::too_many_arguments)]
#[inline(never)]
unsafe fn gemm_checked(
    mkn: (usize, usize, usize),
    a: &[f32],
    a_rs: usize,
    bp: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    out: (usize, usize),
    flags: (bool, bool),
) {
    // Safety: this function's contract.
    unsafe { gemm_rows(mkn, a, a_rs, bp, init, y, out, flags) }
}

/// The product after [`gemm_packed`]'s checks, by row blocks.
///
/// # Safety
/// `m`, `n` > 0 and the slices hold what [`gemm_packed`] checks (computed without
/// overflow).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn gemm_rows(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    a_rs: usize,
    bp: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    (y_rs, y_cs): (usize, usize),
    (relu, row_init): (bool, bool),
) {
    // Safety: this function's contract.
    unsafe { assume_checked((m, n), y.len(), (y_rs, y_cs)) };
    #[cfg(tinyonnx_fma_rows)]
    {
        // Safety: this function's contract.
        unsafe {
            rows_fma(
                (m, k, n),
                (a, a_rs),
                bp,
                init,
                y,
                (y_rs, y_cs),
                (relu, row_init),
            )
        };
        return;
    }
    #[cfg(not(tinyonnx_fma_rows))]
    let _ = row_init;
    #[allow(unreachable_code)]
    let mut r0 = 0;
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
    // Cores without an FPU (Cortex-M3, riscv32): each multiply-add is two library
    // calls, next to which the loads a larger tile saves are noise, while each tile
    // shape is one more unrolled copy (3 KB of flash for the three below). One row by
    // one panel: its eight accumulators stay in registers.
    #[cfg(tinyonnx_soft_float)]
    {
        while r0 < m {
            rows::<1, 1>(r0, args, y, out, relu);
            r0 += 1;
        }
        return;
    }
    // Other 32-bit cores without the panel routines (an FPU, no `fma-*` feature): tiles
    // of 16 accumulators, two rows by one panel or one row by two, which few registers
    // hold and a small frame spills (the stack budget of `tinyonnx_layout::stack`).
    #[cfg(all(target_pointer_width = "32", not(tinyonnx_soft_float)))]
    {
        while r0 + 2 <= m {
            rows::<2, 1>(r0, args, y, out, relu);
            r0 += 2;
        }
        if r0 < m {
            rows::<1, 2>(r0, args, y, out, relu);
        }
        return;
    }
    #[allow(unreachable_code)]
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

/// Eight zeros: the start of every panel of a product without an init.
#[cfg(tinyonnx_fma_rows)]
static ZERO_PANEL: [f32; NR] = [0.0; NR];

/// [`gemm_rows`] on a core with the panel routines (`kernels::arch::rows8x2` and
/// `rows8`: VFPv4 on the Cortex-M4F and M33 boards, F on the riscv32f): pairs of rows,
/// then the last odd one. Where the output is row-major and the init is none, one row
/// of values (a Gemm's bias, an LSTM's gates) or one value a row (a convolution's
/// bias), the whole panels go through the routines that loop over panels themselves and
/// store each panel's results as runs, with the Relu if asked (about a dozen
/// instructions a panel besides the products, where a block through [`rows`] costs two
/// hundred); the rest (a partial last panel, a transposed output, any other init)
/// through [`rows`].
///
/// # Safety
/// As [`gemm_rows`].
#[cfg(tinyonnx_fma_rows)]
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn rows_fma(
    (m, k, n): (usize, usize, usize),
    (a, a_rs): (&[f32], usize),
    bp: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    (y_rs, y_cs): (usize, usize),
    (relu, row_init): (bool, bool),
) {
    // The routines' start (and its step in bytes) and the panels they take: the whole
    // ones where each output row is a run and the init one row of values, one value a
    // row (a convolution's bias) or none.
    // With one init value a row (`row_init`: `gemm_packed` found `init`'s columns to
    // step 0) each row starts from its own value, which the routines spread over the
    // panel's accumulators.
    // The columns after them are `gemm_tail`'s.
    let spread = row_init && y_cs == 1;
    let p0 = routine_panels(n, init, y_cs, row_init);
    let (start, step) = match init {
        Some(c) if c.rows == 0 && c.cols == 1 => (c.values.as_ptr(), 4 * NR as u32),
        Some(c) if spread => (c.values.as_ptr(), 0),
        _ => (ZERO_PANEL.as_ptr(), 0),
    };
    let steps = super::arch::steps(relu, spread);
    let row_start = |r: usize| match init {
        // Safety: row `r < m`'s init value, `r * c.rows`, is inside `c.values`
        // (`gemm_packed` asserted the init's last index).
        Some(c) if spread => unsafe { c.values.as_ptr().add(r * c.rows) },
        _ => start,
    };
    // No whole panel: every column is `gemm_tail`'s.
    if p0 == 0 {
        return;
    }
    let ap = a.as_ptr();
    let mut r0 = 0;
    while r0 + 2 <= m {
        let yp = y.as_mut_ptr();
        let (i0, i1) = (row_start(r0), row_start(r0 + 1));
        // Safety: rows `r0`, `r0 + 1 < m` of `a` hold `k` values each; the first
        // `p0 * k * NR` values of `bp` are the whole panels; each start holds
        // `p0 * NR` values when it steps (an init row `gemm_packed` checked), eight
        // when not (`ZERO_PANEL`), one when spread (the row's init value);
        // output rows `r0`, `r0 + 1` hold `p0 * NR <= n` values from their starts
        // (`y_cs` = 1), inside the length `gemm_packed` asserted.
        unsafe {
            super::arch::rows8x2(
                (ap.add(r0 * a_rs), ap.add((r0 + 1) * a_rs)),
                bp.as_ptr(),
                (i0, i1),
                step,
                (yp.add(r0 * y_rs), yp.add((r0 + 1) * y_rs)),
                (k, p0),
                steps,
            )
        };
        r0 += 2;
    }
    if r0 < m {
        let yp = y.as_mut_ptr();
        let i0 = row_start(r0);
        // Safety: as above, for the one row `r0 < m`.
        unsafe {
            super::arch::rows8(
                ap.add(r0 * a_rs),
                bp.as_ptr(),
                i0,
                step,
                yp.add(r0 * y_rs),
                (k, p0),
                steps,
            )
        };
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
    rows_from::<R, Q>(r0, 0, args, y, out, relu);
}

/// [`rows`] from panel `p0` on.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn rows_from<const R: usize, const Q: usize>(
    r0: usize,
    p0: usize,
    args: Args<'_>,
    y: &mut [f32],
    out: (usize, usize),
    relu: bool,
) {
    let panels = args.1.div_ceil(NR);
    let mut p = p0;
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
    // Whole panels take the contiguous paths below; on the 32-bit boards (Cortex-M,
    // RISC-V) they are left out, as they cost more flash (1.8 KB on the M4F's MLP, 3 KB
    // on the riscv32f's) than they save.
    let full = cfg!(target_pointer_width = "64") && (0..Q).all(|q| width(q) == NR);
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
    // The zero from a register on the microcontrollers: a constant, two rows'
    // accumulators are cleared by a `memset` call, whose 174 B of library code a model
    // may need for nothing else.
    let zero = f32::from_bits(super::in_register(0));
    let mut acc = [[[zero; NR]; Q]; R];
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
        // Strided reads without a bounds test each (a third of a small product's time
        // on a Cortex-M, where this is the only path).
        for (r, row) in acc.iter_mut().enumerate() {
            for (q, part) in row.iter_mut().enumerate() {
                let mut at = (r0 + r) * c.rows + (p0 + q) * NR * c.cols;
                for v in part[..width(q)].iter_mut() {
                    // Safety: row `r0 + r < m` and column `< n`: inside the length
                    // `gemm_packed` asserted of `init`.
                    *v = unsafe { *c.values.get_unchecked(at) };
                    at += c.cols;
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
                    *d = if relu { super::math::relu(v) } else { v };
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
    if relu {
        acc.iter_mut()
            .flatten()
            .flatten()
            .for_each(|v| *v = super::math::relu(*v));
    }
    for q in 0..Q {
        let w = width(q);
        for (r, row) in acc.iter().enumerate() {
            let mut at = (r0 + r) * y_rs + (p0 + q) * NR * y_cs;
            for &v in &row[q][..w] {
                // Safety: row `r0 + r < m`, column `< n`: inside the length `gemm_packed`
                // asserted.
                unsafe { *yp.add(at) = v };
                at += y_cs;
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
    #[cfg(tinyonnx_fma_rows)]
    if R == 2 && Q == 1 {
        // One panel of the two-row routine, each row of `acc` its start and its
        // destination.
        let acc: *mut f32 = acc.as_mut_ptr().cast();
        // Safety: as this function's contract (rows 0 and 1 of `a` hold `k` values
        // each); the routine reads `k * NR` floats of `panels` and reads and writes the
        // `2 * NR` accumulators, row 0's then row 1's, as `acc` lays them out.
        unsafe {
            super::arch::rows8x2(
                (a, a.add(a_rs)),
                panels.as_ptr(),
                (acc, acc.add(NR)),
                0,
                (acc, acc.add(NR)),
                (k, 1),
                super::arch::steps(false, false),
            )
        };
        return;
    }
    #[cfg(tinyonnx_fma_rows)]
    if R == 1 && Q == 1 {
        let acc: *mut f32 = acc.as_mut_ptr().cast();
        // Safety: as this function's contract; the routine reads `k` floats of `a`,
        // `k * NR` of `panels`, reads and writes the `NR` accumulators.
        unsafe {
            super::arch::rows8(
                a,
                panels.as_ptr(),
                acc,
                0,
                acc,
                (k, 1),
                super::arch::steps(false, false),
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
        // Without an FPU each step is 16 library calls: LLVM's Arm unroller would copy
        // it four times over (+1.4 KB on the Cortex-M3) for nothing.
        #[cfg(all(tinyonnx_soft_float, target_arch = "arm"))]
        super::rolled();
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
}
