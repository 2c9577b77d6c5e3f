//! Matrix products with few output columns against a constant right-hand side.
//!
//! With fewer columns than a panel holds, [`super::packed`] would multiply zeros in the
//! padding (7 of 8 products for a single output). Here `B[K, N]` is stored transposed,
//! `N` rows of `K` values, so each output is one dot product; `K` is a const parameter,
//! so for the small models this path exists for the loop unrolls into straight code.

use super::last_index;
use super::packed::Strided;

/// `y[r * n + j] = act(init(r, j) + sum_k a[r * K + k] * bt[j * K + k])` for `r < m`,
/// `j < n`: `bt` is `B` transposed (`N` rows of `K`), `init` zero when absent, `act` a
/// Relu when `relu`.
///
/// # Panics
/// When a slice is shorter than the sizes need (a bug in generated code).
#[inline(always)]
pub fn gemm_dot<const K: usize>(
    (m, n): (usize, usize),
    a: &[f32],
    bt: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    relu: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    // Whole rows only, counted without multiplying (no overflow for any argument).
    let rows_of = |len: usize, width: usize| len.checked_div(width).unwrap_or(usize::MAX);
    assert!(rows_of(a.len(), K) >= m, "gemm_dot: A too short");
    assert!(rows_of(bt.len(), K) >= n, "gemm_dot: B too short");
    assert!(rows_of(y.len(), n) >= m, "gemm_dot: Y too short");
    if let Some(c) = init {
        assert!(
            last_index((m, c.rows), (n, c.cols)).is_some_and(|i| i < c.values.len()),
            "gemm_dot: init too short"
        );
    }
    // On the microcontrollers several rows stay a loop, each row's products straight
    // code (ShapeZoo's batched MatMul on the riscv32f: 1,812 B less flash, 1.6 % fewer
    // instructions); not where each output is the Cortex-M4F's `dot_vmla` call, whose
    // copies are small (there the loop took 64 B more).
    let roll = m > 1 && !cfg!(all(feature = "fma-vfp4", target_arch = "arm"));
    // On the RISC-V cores with an FPU, `B` read from flash: where its values are known
    // the optimizer builds each in registers instead, three instructions a weight
    // against one load (LinearRegression through `run`: 66 -> 52 instructions). Not on
    // the cores without one, where the constants go to library calls (the riscv32's
    // and Cortex-M3's models took 16-72 B more for 0.1-0.6 % fewer instructions).
    let bt = if cfg!(all(target_arch = "riscv32", not(tinyonnx_soft_float))) {
        super::read_from_memory(bt)
    } else {
        bt
    };
    let rows = if roll { super::opaque(m) } else { m };
    for r in 0..rows.min(m) {
        if roll {
            super::rolled();
        }
        // In bounds by the checks above: `r * K + K <= m * K <= a.len()`.
        let row: &[f32; K] = a[r * K..r * K + K].try_into().expect("K values");
        for j in 0..n {
            let col: &[f32; K] = bt[j * K..j * K + K].try_into().expect("K values");
            let mut acc = match init {
                // Not beyond the last index checked above.
                Some(c) => c.values[r * c.rows + j * c.cols],
                None => 0.0,
            };
            #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
            {
                acc = super::arch::arm::dot_vmla(row, col, acc);
            }
            // Fused on RISC-V F, one instruction a product instead of two
            // (LinearRegression through `run`: 52 -> 44 instructions).
            #[cfg(not(all(feature = "fma-vfp4", target_arch = "arm")))]
            for kk in 0..K {
                acc = super::math::mul_add(row[kk], col[kk], acc);
            }
            y[r * n + j] = if relu { super::math::relu(acc) } else { acc };
        }
    }
}

/// Columns `j0..j0 + R` of `y[m, n]` (row-major): `y[r * n + j0 + j] = act(init(r, j0 +
/// j) + sum_k a[r * k + kk] * b[kk * R + j])`, `b` the last columns of a constant `B` as
/// one block `[k][R]` (`tinyonnx_layout::narrow_cols`) that its other columns' panels
/// leave: `R` accumulators in registers, each value of `a` loaded once for all `R`.
///
/// # Panics
/// When a slice is shorter than the sizes need (a bug in generated code).
///
/// The checks are inlined into the caller, where generated code's constant sizes fold
/// them away (out of line with the loop they took about a hundred instructions a call,
/// more than the digits MLP's two-column product itself).
#[inline(always)]
pub fn gemm_narrow<const R: usize>(
    (m, k, n, j0): (usize, usize, usize, usize),
    a: &[f32],
    b: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    relu: bool,
) {
    if m == 0 || R == 0 {
        return;
    }
    let rows_of = |len: usize, width: usize| len.checked_div(width).unwrap_or(usize::MAX);
    assert!(
        j0.checked_add(R).is_some_and(|e| e <= n),
        "gemm_narrow: columns past N"
    );
    assert!(
        k == 0 || rows_of(a.len(), k) >= m,
        "gemm_narrow: A too short"
    );
    assert!(rows_of(b.len(), R) >= k, "gemm_narrow: B too short");
    assert!(rows_of(y.len(), n) >= m, "gemm_narrow: Y too short");
    if let Some(c) = init {
        assert!(
            last_index((m, c.rows), (n, c.cols)).is_some_and(|i| i < c.values.len()),
            "gemm_narrow: init too short"
        );
    }
    // One row (a batch-1 layer) on the Arm FPU cores: the routine called from here.
    #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
    if m == 1 && R <= 4 {
        narrow_row::<R>((k, n, j0), a, b, init, y, relu, 0);
        return;
    }
    narrow_rows::<R>((m, k, n, j0), a, b, init, y, relu);
}

/// [`gemm_narrow`]'s rows after its checks, out of line.
#[inline(never)]
fn narrow_rows<const R: usize>(
    (m, k, n, j0): (usize, usize, usize, usize),
    a: &[f32],
    b: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    relu: bool,
) {
    for r in 0..m {
        #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
        if R <= 4 {
            narrow_row::<R>((k, n, j0), a, b, init, y, relu, r);
            continue;
        }
        let mut acc = start_values::<R>(init, r, j0);
        // `k` values of row `r` (checked by `gemm_narrow`) against the block's rows.
        let row = &a[r * k..r * k + k];
        for (&x, brow) in row.iter().zip(b.chunks_exact(R)) {
            for (v, &w) in acc.iter_mut().zip(brow) {
                *v += x * w;
            }
        }
        let out = &mut y[r * n + j0..r * n + j0 + R];
        for (o, &v) in out.iter_mut().zip(&acc) {
            *o = if relu { super::math::relu(v) } else { v };
        }
    }
}

/// The init's values of row `r`, columns `j0..j0 + R` (zeros without one); inside the
/// init by `gemm_narrow`'s check of its last index (`j0 + j < n`).
#[inline(always)]
fn start_values<const R: usize>(init: Option<Strided<'_>>, r: usize, j0: usize) -> [f32; R] {
    let mut acc = [0.0f32; R];
    if let Some(c) = init {
        for (j, v) in acc.iter_mut().enumerate() {
            *v = c.values[r * c.rows + (j0 + j) * c.cols];
        }
    }
    acc
}

/// Row `r` of [`gemm_narrow`] through the Arm routine for `R` (at most 4) columns: its
/// accumulators start from the init's values, read in place when they are a run.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn narrow_row<const R: usize>(
    (k, n, j0): (usize, usize, usize),
    a: &[f32],
    b: &[f32],
    init: Option<Strided<'_>>,
    y: &mut [f32],
    relu: bool,
    r: usize,
) {
    use super::arch::arm::{
        tinyonnx_narrow1_vfma, tinyonnx_narrow2_vfma, tinyonnx_narrow3_vfma, tinyonnx_narrow4_vfma,
    };
    let routine = match R {
        1 => tinyonnx_narrow1_vfma,
        2 => tinyonnx_narrow2_vfma,
        3 => tinyonnx_narrow3_vfma,
        _ => tinyonnx_narrow4_vfma,
    };
    let acc;
    let start = match init {
        Some(c) if c.cols == 1 => &c.values[r * c.rows + j0..r * c.rows + j0 + R],
        _ => {
            acc = start_values::<R>(init, r, j0);
            &acc[..]
        }
    };
    let row = &a[r * k..r * k + k];
    let cols = &b[..k * R];
    let out = &mut y[r * n + j0..r * n + j0 + R];
    // Safety: the routine reads the `k` values of `row`, the `k * R` of `cols` and the
    // `R` of `start` (each sliced above, so in bounds), and writes the `R` of `out`.
    unsafe {
        routine(
            row.as_ptr(),
            cols.as_ptr(),
            start.as_ptr(),
            out.as_mut_ptr(),
            k as u32,
            u32::from(relu),
        )
    };
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn short_slices_and_huge_strides_are_refused() {
        let a = [1.0f32; 8];
        let bt = [1.0f32; 8];
        let mut y = [0.0f32; 2];
        let r = std::panic::catch_unwind(|| {
            let mut y = [0.0f32; 2];
            gemm_dot::<4>((3, 1), &a, &bt, None, &mut y, false);
        });
        assert!(r.is_err(), "three rows of A need 12 values");
        let r = std::panic::catch_unwind(|| {
            let mut y = [0.0f32; 2];
            let c = Strided {
                values: &[0.0; 2],
                rows: usize::MAX / 2 + 1,
                cols: 0,
            };
            gemm_dot::<4>((2, 1), &a, &bt, Some(c), &mut y, false);
        });
        assert!(r.is_err(), "a wrapping init stride is refused");
        gemm_dot::<4>((2, 1), &a, &bt, None, &mut y, false);
        assert_eq!(y, [4.0, 4.0]);
    }

    #[test]
    fn narrow_columns_land_beside_the_panels() {
        // y[2, 5]: columns 3 and 4 from a block [3][2], a bias per column, a Relu.
        let a = [1.0f32, 2.0, 3.0, -1.0, -2.0, -3.0];
        let b = [1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0];
        let bias = [0.0f32, 0.0, 0.0, 0.5, -1.0];
        let init = Strided {
            values: &bias,
            rows: 0,
            cols: 1,
        };
        let mut y = [7.0f32; 10];
        gemm_narrow::<2>((2, 3, 5, 3), &a, &b, Some(init), &mut y, true);
        assert_eq!(y, [7.0, 7.0, 7.0, 14.5, 139.0, 7.0, 7.0, 7.0, 0.0, 0.0]);
        let r = std::panic::catch_unwind(|| {
            let mut y = [0.0f32; 10];
            gemm_narrow::<2>((2, 3, 5, 4), &a, &b, None, &mut y, false);
        });
        assert!(r.is_err(), "columns 4 and 5 of a 5-column output");
    }
}
