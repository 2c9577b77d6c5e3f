//! Matrix products: `Gemm` and the batched `MatMul`.

/// `y[M, N] = alpha * op(a) @ op(b) + beta * c`, where `op` transposes when `TA`/`TB`
/// and `c` is `(values, row stride, column stride)`, strides 0 on broadcast axes.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn gemm<const M: usize, const K: usize, const N: usize, const TA: bool, const TB: bool>(
    a: &[f32],
    b: &[f32],
    c: Option<(&[f32], usize, usize)>,
    alpha: f32,
    beta: f32,
    y: &mut [f32],
) {
    let a = &a[..M * K];
    let b = &b[..K * N];
    let y = &mut y[..M * N];
    // Without an FPU the products of `op(a) @ b` out of line, one call: unrolled over
    // the rows and `k`, the attention's 26 calls of `axpy` were 530 B on the riscv32.
    let by_rows = !TB && cfg!(tinyonnx_soft_float);
    if by_rows {
        let (row_step, k_step) = if TA { (1, M) } else { (K, 1) };
        accumulate_rows(y, a, (row_step, k_step), b, N);
    }
    for i in 0..M {
        let row = &mut y[i * N..(i + 1) * N];
        let a_at = |k: usize| if TA { a[k * M + i] } else { a[i * K + k] };
        if TB && !TA {
            // Rows of A and of B are both contiguous: a dot product each.
            let arow = &a[i * K..(i + 1) * K];
            for (j, out) in row.iter_mut().enumerate() {
                *out = super::dot(arow, &b[j * K..(j + 1) * K]);
            }
        } else if TB {
            for (j, out) in row.iter_mut().enumerate() {
                let brow = &b[j * K..(j + 1) * K];
                let mut s = 0.0f32;
                for (k, &bk) in brow.iter().enumerate() {
                    s += a_at(k) * bk;
                }
                *out = s;
            }
        } else if !by_rows {
            // (With `by_rows` the products are done above.)
            super::fill_run(row, 0.0);
            for k in 0..K {
                let aik = a_at(k);
                let brow = &b[k * N..(k + 1) * N];
                super::axpy(row, aik, brow);
            }
        }
        match c {
            Some((c, s0, s1)) => {
                for (j, out) in row.iter_mut().enumerate() {
                    *out = alpha * *out + beta * c[i * s0 + j * s1];
                }
            }
            None if alpha != 1.0 => {
                for out in row.iter_mut() {
                    *out *= alpha;
                }
            }
            None => {}
        }
    }
}

/// Each row `i` of `y` (rows of `n` values, as `b`'s) `= sum over k of a[i * row_step +
/// k * k_step] * b[k]`, in the order [`gemm`] adds: each row of `b` by [`super::axpy`].
#[inline(never)]
pub(super) fn accumulate_rows(
    y: &mut [f32],
    a: &[f32],
    (row_step, k_step): (usize, usize),
    b: &[f32],
    n: usize,
) {
    for (i, row) in y.chunks_exact_mut(n.max(1)).enumerate() {
        super::fill_run(row, 0.0);
        let a = a.get(i * row_step..).unwrap_or_default();
        for (&aik, brow) in a
            .iter()
            .step_by(k_step.max(1))
            .zip(b.chunks_exact(row.len()))
        {
            super::axpy(row, aik, brow);
        }
    }
}

/// Numpy `matmul` over broadcast batch dimensions: for every index of `batch`, the
/// `[M, K] @ [K, N]` product of the matrices at the strided offsets of `a` and `b`.
#[inline]
pub fn batched_matmul<const M: usize, const K: usize, const N: usize, const R: usize>(
    a: &[f32],
    b: &[f32],
    y: &mut [f32],
    batch: &[usize; R],
    a_strides: &[usize; R],
    b_strides: &[usize; R],
) {
    let count: usize = batch.iter().product();
    let mut idx = [0usize; R];
    let (mut ia, mut ib) = (0usize, 0usize);
    for n in 0..count {
        gemm::<M, K, N, false, false>(
            &a[ia..ia + M * K],
            &b[ib..ib + K * N],
            None,
            1.0,
            1.0,
            &mut y[n * M * N..(n + 1) * M * N],
        );
        super::step2(&mut idx, batch, a_strides, b_strides, &mut ia, &mut ib);
    }
}

/// `Einsum` over `L` letters of sizes `extents`: `y[Σ i·sy] += a[Σ i·sa] (* b[Σ i·sb])` for
/// every combination of letter indices (a stride 0 where a tensor lacks the letter), `y`
/// zeroed first; f32 or f64.
#[inline(never)]
pub fn einsum<T, const L: usize>(
    a: &[T],
    sa: &[usize; L],
    b: Option<(&[T], &[usize; L])>,
    y: &mut [T],
    sy: &[usize; L],
    extents: &[usize; L],
) where
    T: Copy + Default + core::ops::Add<Output = T> + core::ops::Mul<Output = T>,
{
    y.fill(T::default());
    let total: usize = extents.iter().product();
    let mut idx = [0usize; L];
    let (mut ia, mut ib, mut iy) = (0usize, 0usize, 0usize);
    let zeros = [0usize; L];
    let sb = b.map_or(&zeros, |(_, s)| s);
    for _ in 0..total {
        let v = match b {
            Some((b, _)) => a[ia] * b[ib],
            None => a[ia],
        };
        y[iy] = y[iy] + v;
        let mut d = L;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            ia += sa[d];
            ib += sb[d];
            iy += sy[d];
            if idx[d] < extents[d] {
                break;
            }
            ia -= sa[d] * extents[d];
            ib -= sb[d] * extents[d];
            iy -= sy[d] * extents[d];
            idx[d] = 0;
        }
    }
}
