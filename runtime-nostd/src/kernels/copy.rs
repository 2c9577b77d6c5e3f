//! Data movement: `Transpose` and `Concat`.

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
    let mut idx = [0usize; R];
    let (mut ix, mut unused) = (0usize, 0usize);
    for out in y.iter_mut() {
        *out = x[ix];
        super::step2(&mut idx, shape, strides, &zeros, &mut ix, &mut unused);
    }
}

/// Copies `OUTER` chunks of `CHUNK` values of `x` into `y`, whose chunks are `OUT_CHUNK`
/// long, at `OFFSET` within each.
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
        y[o * OUT_CHUNK + OFFSET..o * OUT_CHUNK + OFFSET + CHUNK]
            .copy_from_slice(&x[o * CHUNK..(o + 1) * CHUNK]);
    }
}
