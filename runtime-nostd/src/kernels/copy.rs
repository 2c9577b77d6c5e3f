//! Data movement: `Transpose`, `Concat`, strided views (`Slice`, `Expand`, `Tile`),
//! `Pad` and `Gather`.

/// `y = x`, a tensor copied whole (a view that cannot alias, `Identity`, `Dropout`): on
/// the microcontrollers a copy of 64 bytes or more is a loop of one value a step
/// ([`copy_rolled`]), not a `memcpy` call, whose library code (886 B on the Cortex-M4F)
/// a model may need for nothing else. Smaller ones stay `copy_from_slice`, which LLVM
/// forwards and folds (as calls, DtypeZoo's small copies took 1.2 KB more); hosts call
/// `memcpy`.
#[inline(always)]
pub fn copy<T: Copy>(y: &mut [T], x: &[T]) {
    debug_assert_eq!(y.len(), x.len(), "a copy's lengths are planned equal");
    if cfg!(target_os = "none") && size_of_val(y) >= 64 {
        copy_rolled::<T, 1>(y, x);
    } else {
        y.copy_from_slice(x);
    }
}

/// `dst.copy_from_slice(src)` for the runs a recurrent kernel copies every step
/// (slices of equal length, constant where the kernel's sizes are): on the
/// microcontrollers with an FPU, runs of up to 32 bytes as the copy, which LLVM makes a
/// few loads and stores; else [`copy_run_dyn`].
#[inline(always)]
pub(crate) fn copy_run<T: Copy>(dst: &mut [T], src: &[T]) {
    if cfg!(tinyonnx_mcu_fpu) && size_of_val(dst) <= 32 {
        dst.copy_from_slice(src);
    } else {
        copy_run_dyn(dst, src);
    }
}

/// `dst.copy_from_slice(src)` for runs of any length (slices of equal length), never a
/// `memcpy` call on the microcontrollers: its library code (886 B on the Cortex-M4F)
/// was the LSTM's, GRU's and Transformer's only use of it. On the cores without an FPU
/// a loop kept rolled (`memcpy` cost the batch-first LSTM on the riscv32 its 8 KB), on
/// the others [`copy_rolled`] four values a step; elsewhere the copy. For the
/// runs whose length is a value (a transpose's rows), [`copy_run`]'s short branch
/// would be a `memcpy` call.
#[inline(always)]
pub(crate) fn copy_run_dyn<T: Copy>(dst: &mut [T], src: &[T]) {
    if cfg!(tinyonnx_soft_float) {
        for (d, &s) in dst.iter_mut().zip(src) {
            super::rolled();
            *d = s;
        }
    } else if cfg!(target_os = "none") {
        copy_rolled::<T, 4>(dst, src);
    } else {
        dst.copy_from_slice(src);
    }
}

/// A recurrent state: `n` values copied from `init` as a tensor is ([`copy`]: no
/// `memcpy` on the microcontrollers for it, once an inference), or zeros. On the cores
/// without an FPU, where a recurrent kernel may take its sizes as values, the copy is a
/// rolled loop whatever `n` ([`copy_run`]): with `n` unknown, [`copy`] kept its
/// `memcpy` branch.
#[inline]
pub(crate) fn init_state(state: &mut [f32], init: Option<&[f32]>, n: usize) {
    match init {
        Some(init) if cfg!(tinyonnx_soft_float) => copy_run(&mut state[..n], &init[..n]),
        Some(init) => copy(&mut state[..n], &init[..n]),
        // A loop on every microcontroller: RnnZoo's 16 zeros were a `memset` call, whose
        // code (174 B on the Cortex-M4F) nothing else in it needed.
        None if cfg!(target_os = "none") => {
            for v in &mut state[..n] {
                *v = 0.0;
                super::stores_kept();
            }
        }
        None => super::fill_run(&mut state[..n], 0.0),
    }
}

/// `y = x` by a loop of `STEP` values a step, out of line (one function a type and
/// step): one for a tensor's copy, once an inference, where the smallest loop does;
/// four for the runs a kernel copies every step or row ([`copy_run_dyn`]), where
/// one a step took 0.7-1.3 % more of the LSTMs' instructions. The length hidden: with
/// one caller the optimizer passed its constant in and copied the loop's body whole
/// (ShapeZoo's 36 values: 198 B on the Cortex-M4F).
#[inline(never)]
pub(crate) fn copy_rolled<T: Copy, const STEP: usize>(y: &mut [T], x: &[T]) {
    let n = super::opaque(y.len());
    let (y_steps, y_rest) = y[..n].as_chunks_mut::<STEP>();
    let (x_steps, x_rest) = x[..n].as_chunks::<STEP>();
    for (d, s) in y_steps.iter_mut().zip(x_steps) {
        *d = *s;
        super::stores_kept();
    }
    for (d, &s) in y_rest.iter_mut().zip(x_rest) {
        *d = s;
        super::stores_kept();
    }
}

/// `y` (row-major over `shape`) from `x` read with `strides` (the input strides of the
/// permuted axes).
#[inline]
pub fn transpose<T: Copy, const R: usize>(
    x: &[T],
    y: &mut [T],
    shape: &[usize; R],
    strides: &[usize; R],
) {
    let zeros = [0usize; R];
    if R > 0 && !y.is_empty() {
        // Row by row: the last output axis is a copy when it stays innermost in `x`,
        // a strided gather otherwise.
        let (n, s) = (shape[R - 1], strides[R - 1]);
        super::for_rows2(shape, strides, &zeros, |row, ix, _| {
            let out = &mut y[row * n..(row + 1) * n];
            if s == 1 {
                copy_run_dyn(out, &x[ix..ix + n]);
            } else {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = x[ix + j * s];
                }
            }
        });
        return;
    }
    let mut idx = [0usize; R];
    let (mut ix, mut unused) = (0usize, 0usize);
    for out in y.iter_mut() {
        *out = x[ix];
        super::step2(&mut idx, shape, strides, &zeros, &mut ix, &mut unused);
    }
}

/// Copies `OUTER` chunks of `CHUNK` values of `x` into `y`, whose chunks are `OUT_CHUNK`
/// long, at `OFFSET` within each (each chunk as a tensor's [`copy`]: no `memcpy` on the
/// microcontrollers).
#[inline]
pub fn concat_part<
    T: Copy,
    const OUTER: usize,
    const CHUNK: usize,
    const OUT_CHUNK: usize,
    const OFFSET: usize,
>(
    x: &[T],
    y: &mut [T],
) {
    for o in 0..OUTER {
        copy(
            &mut y[o * OUT_CHUNK + OFFSET..o * OUT_CHUNK + OFFSET + CHUNK],
            &x[o * CHUNK..(o + 1) * CHUNK],
        );
    }
}

/// `y` (row-major over `shape`) from `x` at `offset + sum(idx[d] * strides[d])`, strides
/// signed (a negative `Slice` step walks backwards, 0 repeats: `Expand`, `Tile`).
#[inline]
pub fn strided<T: Copy, const R: usize>(
    x: &[T],
    y: &mut [T],
    shape: &[usize; R],
    offset: usize,
    strides: &[isize; R],
) {
    let n: usize = shape.iter().product();
    let mut idx = [0usize; R];
    let mut ix = offset as isize;
    for out in y[..n].iter_mut() {
        *out = x[ix as usize];
        let mut d = R;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            ix += strides[d];
            if idx[d] < shape[d] {
                break;
            }
            ix -= strides[d] * shape[d] as isize;
            idx[d] = 0;
        }
    }
}

/// How `Pad` fills positions outside the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PadMode {
    /// A constant value.
    Constant,
    /// The nearest edge value.
    Edge,
    /// Mirrored about the edge, the edge not repeated.
    Reflect,
    /// Wrapped around (periodic).
    Wrap,
}

/// `Pad`: `y` over `out` from `x` over `inp`, output index `o` reading input index
/// `o - begin` per axis (`begin` negative crops), outside the input filled by `mode`.
#[inline]
pub fn pad<T: Copy, const R: usize>(
    x: &[T],
    y: &mut [T],
    inp: &[usize; R],
    out: &[usize; R],
    begin: &[isize; R],
    mode: PadMode,
    value: T,
) {
    let mut in_strides = [1usize; R];
    for d in (0..R.saturating_sub(1)).rev() {
        in_strides[d] = in_strides[d + 1] * inp[d + 1];
    }
    let n: usize = out.iter().product();
    let mut idx = [0usize; R];
    for v in y[..n].iter_mut() {
        let mut src = 0usize;
        let mut inside = true;
        for d in 0..R {
            let len = inp[d] as isize;
            let mut i = idx[d] as isize - begin[d];
            if i < 0 || i >= len {
                match mode {
                    PadMode::Constant => inside = false,
                    PadMode::Edge => i = i.clamp(0, len - 1),
                    PadMode::Reflect => {
                        let period = 2 * (len - 1);
                        i = if period == 0 { 0 } else { i.rem_euclid(period) };
                        if i >= len {
                            i = period - i;
                        }
                    }
                    PadMode::Wrap => i = i.rem_euclid(len),
                }
            }
            src += i.max(0) as usize * in_strides[d];
        }
        *v = if inside { x[src] } else { value };
        let mut d = R;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            if idx[d] < out[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// `Gather` along one axis of `x` viewed as `[OUTER, N, INNER]`: for every outer index
/// and every (non-negative, in-range) index `k` of `indices`, the `INNER` values at `k`
/// (each a [`copy`]: no `memcpy` on the microcontrollers).
#[inline]
pub fn gather<T: Copy, const OUTER: usize, const N: usize, const INNER: usize, const K: usize>(
    x: &[T],
    y: &mut [T],
    indices: &[usize; K],
) {
    let x = &x[..OUTER * N * INNER];
    let y = &mut y[..OUTER * K * INNER];
    for o in 0..OUTER {
        for (j, &k) in indices.iter().enumerate() {
            let src = &x[(o * N + k) * INNER..(o * N + k + 1) * INNER];
            copy(&mut y[(o * K + j) * INNER..(o * K + j + 1) * INNER], src);
        }
    }
}

/// `Gather` with indices known only when the model runs (int64 or int32), `x` viewed as
/// `[OUTER, N, INNER]` and `K` indices: a negative index counts from the end; one outside
/// `-N..N` (an error in ONNX Runtime) gives `INNER` default values (zeros, false), never
/// a read out of bounds. The values taken are a [`copy`], as in [`gather`].
#[inline]
pub fn gather_dyn<
    T: Copy + Default,
    I: Copy + Into<i64>,
    const OUTER: usize,
    const N: usize,
    const INNER: usize,
    const K: usize,
>(
    x: &[T],
    y: &mut [T],
    indices: &[I],
) {
    let x = &x[..OUTER * N * INNER];
    let y = &mut y[..OUTER * K * INNER];
    let indices = &indices[..K];
    for o in 0..OUTER {
        for (j, &i) in indices.iter().enumerate() {
            let i: i64 = i.into();
            let k = if i < 0 { i + N as i64 } else { i };
            let dst = &mut y[(o * K + j) * INNER..(o * K + j + 1) * INNER];
            match usize::try_from(k).ok().filter(|&k| k < N) {
                Some(k) => copy(dst, &x[(o * N + k) * INNER..(o * N + k + 1) * INNER]),
                None => dst.fill(T::default()),
            }
        }
    }
}

/// One output of `Split`: `OUTER` chunks of `CHUNK` values taken from `x`, whose chunks
/// are `IN_CHUNK` long, at `OFFSET` within each (each chunk a [`copy`]).
#[inline]
pub fn split_part<
    T: Copy,
    const OUTER: usize,
    const IN_CHUNK: usize,
    const CHUNK: usize,
    const OFFSET: usize,
>(
    x: &[T],
    y: &mut [T],
) {
    for o in 0..OUTER {
        copy(
            &mut y[o * CHUNK..(o + 1) * CHUNK],
            &x[o * IN_CHUNK + OFFSET..o * IN_CHUNK + OFFSET + CHUNK],
        );
    }
}

/// `y[n] = x[map[n]]`: `GatherElements` with its index map worked out at compile time.
#[inline]
pub fn gather_map<T: Copy>(x: &[T], y: &mut [T], map: &[i64]) {
    for (out, &i) in y.iter_mut().zip(map) {
        *out = x[i as usize];
    }
}

/// How `ScatterElements` combines an update with the value already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// The update replaces the value.
    None,
    /// Sum.
    Add,
    /// Product.
    Mul,
    /// The larger.
    Max,
    /// The smaller.
    Min,
}

impl Reduction {
    /// `v` combined with the update `u` (a NaN update wins max and min).
    #[inline(always)]
    pub fn combine<T: super::num::Num>(self, v: T, u: T) -> T {
        match self {
            Reduction::None => u,
            Reduction::Add => T::add(v, u),
            Reduction::Mul => T::mul(v, u),
            Reduction::Max => {
                if u > v || u.is_nan() {
                    u
                } else {
                    v
                }
            }
            Reduction::Min => {
                if u < v || u.is_nan() {
                    u
                } else {
                    v
                }
            }
        }
    }
}

/// `ScatterElements`: `y = x`, then for every update `n`, `y[map[n]]` combined with
/// `updates[n]` by `reduction`, in order.
#[inline]
pub fn scatter_map(x: &[f32], updates: &[f32], y: &mut [f32], map: &[i64], reduction: Reduction) {
    let n = y.len();
    copy(y, &x[..n]);
    for (&i, &u) in map.iter().zip(updates) {
        let v = &mut y[i as usize];
        *v = reduction.combine(*v, u);
    }
}

/// `Trilu`: `y = x` on matrices of `rows x cols` (the last two axes), with every element
/// outside the kept triangle zero: kept are `j - i >= k` (`upper`) or `j - i <= k`.
#[inline]
pub fn trilu<T: Copy + Default>(
    x: &[T],
    y: &mut [T],
    rows: usize,
    cols: usize,
    k: i64,
    upper: bool,
) {
    let size = (rows * cols).max(1);
    for (xm, ym) in x.chunks_exact(size).zip(y.chunks_exact_mut(size)) {
        for i in 0..rows {
            for j in 0..cols {
                let d = j as i64 - i as i64;
                let keep = if upper { d >= k } else { d <= k };
                ym[i * cols + j] = if keep { xm[i * cols + j] } else { T::default() };
            }
        }
    }
}

/// `EyeLike`: `y` (`rows x cols`) zero except ones on the diagonal `j = i + k`.
#[inline]
pub fn eye<T: Copy>(y: &mut [T], cols: usize, k: i64, zero: T, one: T) {
    y.fill(zero);
    for (i, row) in y.chunks_exact_mut(cols.max(1)).enumerate() {
        let j = i as i64 + k;
        if let Ok(j) = usize::try_from(j)
            && j < cols
        {
            row[j] = one;
        }
    }
}

/// `ReverseSequence` on `x` viewed as `[outer, time, mid, batch, inner]` (or with batch
/// before time: `batch_first`): the first `lens[b]` steps of each batch entry reversed,
/// the rest copied. A length outside `0..=time` is clamped (ONNX leaves it undefined).
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn reverse_sequence<T: Copy>(
    x: &[T],
    y: &mut [T],
    lens: &[i64],
    time: usize,
    batch: usize,
    time_stride: usize,
    batch_stride: usize,
    inner: usize,
) {
    copy(y, &x[..y.len()]);
    for (b, &len) in lens.iter().enumerate().take(batch) {
        let len = len.clamp(0, time as i64) as usize;
        for t in 0..len {
            let (dst, src) = (
                b * batch_stride + t * time_stride,
                b * batch_stride + (len - 1 - t) * time_stride,
            );
            y[dst..dst + inner].copy_from_slice(&x[src..src + inner]);
        }
    }
}

/// An index read at run time into `0..n`: negative ones count from the end, and one out of
/// range is clamped (ONNX leaves it undefined; ONNX Runtime fails the run).
#[inline(always)]
fn index_in(i: i64, n: usize) -> usize {
    let i = if i < 0 { i + n as i64 } else { i };
    i.clamp(0, n.saturating_sub(1) as i64) as usize
}

/// The offset of the slice an index tuple `tuple` (over the leading axes `dims` of one
/// batch entry) selects, in elements, each axis's index adjusted by [`index_in`].
#[inline(always)]
fn tuple_offset(tuple: &[i64], dims: &[usize], slice: usize) -> usize {
    let mut at = 0usize;
    for (d, (&i, &n)) in tuple.iter().zip(dims).enumerate() {
        let stride: usize = dims[d + 1..].iter().product::<usize>() * slice;
        at += index_in(i, n) * stride;
    }
    at
}

/// `GatherND`: `data` holds `batch` entries of `dims` then `slice` values each; `indices`
/// holds `batch` groups of `count` tuples of `dims.len()` indices; each tuple copies one
/// slice into `y`.
#[inline]
pub fn gather_nd<T: Copy>(
    data: &[T],
    indices: &[i64],
    y: &mut [T],
    batch: usize,
    count: usize,
    dims: &[usize],
    slice: usize,
) {
    let q = dims.len();
    let entry: usize = dims.iter().product::<usize>() * slice;
    for b in 0..batch {
        for t in 0..count {
            let tuple = &indices[(b * count + t) * q..(b * count + t + 1) * q];
            let src = b * entry + tuple_offset(tuple, dims, slice);
            let dst = (b * count + t) * slice;
            y[dst..dst + slice].copy_from_slice(&data[src..src + slice]);
        }
    }
}

/// `ScatterND`: `y = data`, then each of the `count` tuples of `dims.len()` indices
/// combines its slice of `updates` into the slice of `y` it selects, in order.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn scatter_nd<T: super::num::Num>(
    data: &[T],
    indices: &[i64],
    updates: &[T],
    y: &mut [T],
    count: usize,
    dims: &[usize],
    slice: usize,
    reduction: Reduction,
) {
    copy(y, &data[..y.len()]);
    let q = dims.len();
    for t in 0..count {
        let at = tuple_offset(&indices[t * q..(t + 1) * q], dims, slice);
        for (o, &u) in y[at..at + slice]
            .iter_mut()
            .zip(&updates[t * slice..(t + 1) * slice])
        {
            *o = reduction.combine(*o, u);
        }
    }
}

/// `OneHot`: `y` viewed as `[outer, depth, inner]` is `off`, and `on` at each position
/// `(o, indices[o * inner + i], i)` whose index (truncated; negative counting from the
/// end) lies in `0..depth`.
#[inline]
pub fn one_hot<I: Copy + super::num::CastTo<f64>, T: Copy>(
    indices: &[I],
    y: &mut [T],
    depth: usize,
    inner: usize,
    off: T,
    on: T,
) {
    y.fill(off);
    for (k, &v) in indices.iter().enumerate() {
        // Toward zero first, as ONNX Runtime casts a float index.
        let v: f64 = libm::trunc(v.cast());
        let v = if v < 0.0 { v + depth as f64 } else { v };
        if v >= 0.0 && v < depth as f64 {
            let (o, i) = (k / inner, k % inner);
            y[(o * depth + v as usize) * inner + i] = on;
        }
    }
}

/// `MaxUnpool`: `y` zero, then `x[k]` placed at flat index `indices[k]` of a tensor of
/// dims `unpooled`, which sits at the start of every axis of `y` (dims `out`, at least as
/// large). An index out of range is dropped.
#[inline]
pub fn unpool<T: Copy + Default, const R: usize>(
    x: &[T],
    indices: &[i64],
    y: &mut [T],
    unpooled: &[usize; R],
    out: &[usize; R],
) {
    y.fill(T::default());
    let total: usize = unpooled.iter().product();
    for (&v, &i) in x.iter().zip(indices) {
        let Some(mut rest) = usize::try_from(i).ok().filter(|&i| i < total) else {
            continue;
        };
        // The index over `unpooled`, re-linearized over `out`.
        let (mut at, mut stride) = (0usize, 1usize);
        for d in (0..R).rev() {
            at += (rest % unpooled[d]) * stride;
            rest /= unpooled[d];
            stride *= out[d];
        }
        if let Some(o) = y.get_mut(at) {
            *o = v;
        }
    }
}

/// `Col2Im`: `y` (`nc` images of `R` spatial axes) zero, then every column value of `x`
/// (`[nc, prod(block), prod(grid)]`) added at its image position; `g` per axis is
/// `[image, block, grid, stride, dilation, pad_begin]`. Rare, so the geometry is read
/// at run time.
#[inline(never)]
pub fn col2im<const R: usize>(x: &[f32], y: &mut [f32], nc: usize, g: &[[usize; 6]; R]) {
    let image: usize = g.iter().map(|a| a[0]).product();
    let blocks: usize = g.iter().map(|a| a[1]).product();
    let grid: usize = g.iter().map(|a| a[2]).product();
    let (x, y) = (&x[..nc * blocks * grid], &mut y[..nc * image]);
    y.fill(0.0);
    for p in 0..nc {
        for k in 0..blocks {
            for l in 0..grid {
                // Axis by axis from the last: the block and grid indices, the image one.
                let (mut kr, mut lr, mut at, mut stride, mut inside) = (k, l, 0usize, 1usize, true);
                for a in g.iter().rev() {
                    let (ki, li) = (kr % a[1], lr % a[2]);
                    kr /= a[1];
                    lr /= a[2];
                    let pos = (li * a[3] + ki * a[4]) as isize - a[5] as isize;
                    inside &= pos >= 0 && (pos as usize) < a[0];
                    at += pos.max(0) as usize * stride;
                    stride *= a[0];
                }
                if inside {
                    y[p * image + at] += x[(p * blocks + k) * grid + l];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run-time indices: negative ones count from the end; out of range gives zeros
    /// instead of reading past the data (ONNX Runtime refuses such an index).
    #[test]
    fn gather_dyn_counts_from_the_end_and_never_reads_out_of_bounds() {
        let x = [1, 2, 3, 4, 5, 6];
        let mut y = [9; 10];
        gather_dyn::<i32, i64, 1, 3, 2, 5>(&x, &mut y, &[2i64, -1, 3, -4, 0]);
        assert_eq!(y, [5, 6, 5, 6, 0, 0, 0, 0, 1, 2]);
        let mut z = [9u8; 2];
        gather_dyn::<u8, i32, 2, 2, 1, 1>(&[7, 8, 9, 10], &mut z, &[i32::MIN]);
        assert_eq!(z, [0, 0]);
    }

    /// The microcontrollers' copy loop, one and four values a step, over every length
    /// up to three steps and a remainder: each value lands once, nothing past the end.
    #[test]
    fn copy_rolled_copies_every_length() {
        let all: [u16; 13] = core::array::from_fn(|i| i as u16 + 1);
        for n in 0..=13 {
            let x = &all[..n];
            let (mut one, mut four) = ([0u16; 14], [0u16; 14]);
            copy_rolled::<u16, 1>(&mut one[..n], x);
            copy_rolled::<u16, 4>(&mut four[..n], x);
            assert_eq!((&one[..n], one[n]), (x, 0), "one a step, n = {n}");
            assert_eq!((&four[..n], four[n]), (x, 0), "four a step, n = {n}");
        }
    }
}
