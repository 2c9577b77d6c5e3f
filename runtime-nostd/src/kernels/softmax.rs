//! `Softmax` along one axis of a tensor viewed as `[OUTER, N, INNER]`.

use super::num::Float;

/// Softmax in place along the middle axis: `exp(x - max) / sum(exp(x - max))`, or
/// with `LOG` its logarithm `x - max - log(sum(exp(x - max)))`.
#[inline]
pub fn softmax_inplace<
    T: Float,
    const OUTER: usize,
    const N: usize,
    const INNER: usize,
    const LOG: bool,
>(
    y: &mut [T],
) {
    let y = &mut y[..OUTER * N * INNER];
    if INNER == 1 && !LOG && N > 0 {
        for row in y.chunks_exact_mut(row_len::<OUTER>(N)) {
            let max = row_max::<T, OUTER>(row);
            for v in row.iter_mut() {
                rolled::<OUTER>();
                *v = *v - max;
            }
        }
        normalize_rows::<T, OUTER, N>(y);
        return;
    }
    strided::<T, OUTER, N, INNER, LOG>(y);
}

/// [`softmax_inplace`] of `x` into `y`. The contiguous rows read `x` in their first pass,
/// where a copy first took a `memcpy` call (and on RISC-V the 392 bytes of
/// `compiler_builtins`' `memcpy`, for a classifier's ten values).
#[inline]
pub fn softmax<
    T: Float,
    const OUTER: usize,
    const N: usize,
    const INNER: usize,
    const LOG: bool,
>(
    x: &[T],
    y: &mut [T],
) {
    let (x, y) = (&x[..OUTER * N * INNER], &mut y[..OUTER * N * INNER]);
    if INNER == 1 && !LOG && N > 0 {
        let n = row_len::<OUTER>(N);
        for (xr, yr) in x.chunks_exact(n).zip(y.chunks_exact_mut(n)) {
            let max = row_max::<T, OUTER>(xr);
            for (d, &v) in yr.iter_mut().zip(xr) {
                rolled::<OUTER>();
                *d = v - max;
            }
        }
        normalize_rows::<T, OUTER, N>(y);
        return;
    }
    super::copy::copy(y, x);
    strided::<T, OUTER, N, INNER, LOG>(y);
}

// Contiguous rows: each row shifted by its max, then every exponential of the tensor in
// one loop the compiler vectorizes (rows are often shorter than a few vectors: ten keys
// of attention), then sums in eight independent chains. On the microcontrollers that
// loop is kept a loop (`exp_each`): over a constant row of ten classes LLVM inlined the
// exponential ten times, 1.2 KB of flash. On the microcontrollers, several rows are not
// unrolled either (`opaque`, `rolled`): the attention's forty rows of ten took 950
// bytes. One row (a classifier's) stays as the compiler lays it out: it is small, and
// rolled it cost the digits MLP 6 % of its instructions.

/// The row length as the loops see it: hidden from the optimizer for several rows, or
/// on the RISC-V cores without an FPU (see [`rolled`]).
#[inline(always)]
fn row_len<const OUTER: usize>(n: usize) -> usize {
    if OUTER > 1 || ROLL_ONE_ROW {
        super::opaque(n)
    } else {
        n
    }
}

/// Whether one row is kept rolled too: on the RISC-V cores without an FPU, where each
/// step is library calls anyway (a classifier's row of ten unrolled was 660 B there; on
/// the Cortex-M3 rolled took more flash: the digits pipeline +384 B).
const ROLL_ONE_ROW: bool = cfg!(all(tinyonnx_soft_float, target_arch = "riscv32"));

/// A loop kept rolled when there are several rows (or [`ROLL_ONE_ROW`]).
#[inline(always)]
fn rolled<const OUTER: usize>() {
    if OUTER > 1 || ROLL_ONE_ROW {
        super::rolled();
    }
}

/// The largest value of a non-empty row, starting from its first (NaN, as `>` is
/// false for it, is passed over, or kept when first: either way its row comes out NaN,
/// as `v - max` or the sum is NaN).
#[inline(always)]
fn row_max<T: Float, const OUTER: usize>(row: &[T]) -> T {
    let (&first, rest) = row.split_first().unwrap_or((&T::LOWEST, &[]));
    let mut max = first;
    for &v in rest {
        rolled::<OUTER>();
        if v.greater(max) {
            max = v;
        }
    }
    max
}

/// Rows of `N` already shifted by their max: their exponentials, divided by their sum.
#[inline(always)]
fn normalize_rows<T: Float, const OUTER: usize, const N: usize>(y: &mut [T]) {
    exp_each(y);
    for row in y.chunks_exact_mut(row_len::<OUTER>(N)) {
        let mut acc = [T::ZERO; 8];
        let chunks = row.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            rolled::<OUTER>();
            for (a, &v) in acc.iter_mut().zip(c) {
                *a = *a + v;
            }
        }
        let mut sum =
            ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for &v in rest {
            rolled::<OUTER>();
            sum = sum + v;
        }
        let inv = T::ONE / sum;
        for v in row.iter_mut() {
            rolled::<OUTER>();
            *v = *v * inv;
        }
    }
}

/// The general case, one position of the inner axes at a time: its column of `N`
/// values, `INNER` apart. On the microcontrollers the loops over blocks and positions
/// stay loops ([`super::short_run`], [`super::rolled`]), each column's passes compiled
/// once: ShapeZoo's softmax over [2, 4, 5] along axis 1, unrolled for its ten columns,
/// took 1,818 bytes on the riscv32 and 1,330 on the Cortex-M3.
#[inline(always)]
fn strided<T: Float, const OUTER: usize, const N: usize, const INNER: usize, const LOG: bool>(
    y: &mut [T],
) {
    if N == 0 || INNER == 0 {
        return;
    }
    for block in super::short_run(y, true).chunks_exact_mut(N * INNER) {
        super::rolled();
        let mut col: &mut [T] = block;
        for _ in 0..super::opaque(INNER) {
            super::rolled();
            column::<T, INNER, LOG>(col);
            col = match core::mem::take(&mut col).split_first_mut() {
                Some((_, rest)) => rest,
                None => break,
            };
        }
    }
}

/// Softmax (or LogSoftmax) of the values `STEP` apart from the first of `col`, each
/// pass a loop on the microcontrollers (unrolled by the runtime count, the Cortex-M3's
/// four exponentials took 1.6 KB more).
#[inline(always)]
fn column<T: Float, const STEP: usize, const LOG: bool>(col: &mut [T]) {
    let mut max = T::LOWEST;
    for &v in col.iter().step_by(STEP) {
        super::rolled();
        if v.greater(max) {
            max = v;
        }
    }
    let mut sum = T::ZERO;
    for v in col.iter_mut().step_by(STEP) {
        super::rolled();
        let e = exp_one(*v - max);
        if !LOG {
            *v = e;
        }
        sum = sum + e;
    }
    if LOG {
        let shift = max + sum.ln();
        for v in col.iter_mut().step_by(STEP) {
            super::rolled();
            *v = *v - shift;
        }
    } else {
        let inv = T::ONE / sum;
        for v in col.iter_mut().step_by(STEP) {
            super::rolled();
            *v = *v * inv;
        }
    }
}

/// `e^x` of every value, each at most 0 or NaN (shifted by its row's maximum). On the
/// microcontrollers out of line and not unrolled: the opaque use of each result is an
/// inline `asm` statement, which LLVM's Arm and RISC-V unrolling preferences treat as a
/// call (no partial or runtime unrolling), and a constant length is not unrolled fully
/// either.
#[cfg_attr(target_pointer_width = "32", inline(never))]
#[cfg_attr(not(target_pointer_width = "32"), inline(always))]
fn exp_each<T: Float>(y: &mut [T]) {
    // Without an FPU the length hidden too: with [`exp_one`] a call, LLVM copied the
    // body of a constant run of 40 whole (528 bytes on the riscv32).
    for v in super::short_run(y, cfg!(tinyonnx_soft_float)).iter_mut() {
        super::rolled();
        *v = exp_one(*v);
    }
}

/// `e^x` of one value at most 0 or NaN: out of line on the cores without an FPU, whose
/// exponential is library calls that dwarf a call, so that the contiguous and the
/// strided paths share one copy (ShapeZoo has both: 400 bytes on the riscv32).
#[cfg_attr(all(target_os = "none", tinyonnx_soft_float), inline(never))]
#[cfg_attr(not(all(target_os = "none", tinyonnx_soft_float)), inline(always))]
fn exp_one<T: Float>(x: T) -> T {
    x.exp_nonpositive()
}
