//! Reductions over any set of axes.

use super::num::Num;

/// How values combine.
pub trait ReduceOp {
    /// The value of an empty reduction.
    fn init<T: Num>() -> T;
    /// Folds one value in.
    fn combine<T: Num>(acc: T, v: T) -> T;
}

/// Sum (and, divided, mean).
#[derive(Debug)]
pub struct Sum;
/// Product.
#[derive(Debug)]
pub struct Prod;
/// Maximum; NaN propagates.
#[derive(Debug)]
pub struct Max;
/// Minimum; NaN propagates.
#[derive(Debug)]
pub struct Min;

impl ReduceOp for Sum {
    #[inline(always)]
    fn init<T: Num>() -> T {
        T::ZERO
    }
    #[inline(always)]
    fn combine<T: Num>(acc: T, v: T) -> T {
        T::add(acc, v)
    }
}
impl ReduceOp for Prod {
    #[inline(always)]
    fn init<T: Num>() -> T {
        T::ONE
    }
    #[inline(always)]
    fn combine<T: Num>(acc: T, v: T) -> T {
        T::mul(acc, v)
    }
}
impl ReduceOp for Max {
    #[inline(always)]
    fn init<T: Num>() -> T {
        T::LOWEST
    }
    #[inline(always)]
    fn combine<T: Num>(acc: T, v: T) -> T {
        if acc.is_nan() || v.is_nan() {
            T::add(acc, v)
        } else if v > acc {
            v
        } else {
            acc
        }
    }
}
impl ReduceOp for Min {
    #[inline(always)]
    fn init<T: Num>() -> T {
        T::HIGHEST
    }
    #[inline(always)]
    fn combine<T: Num>(acc: T, v: T) -> T {
        if acc.is_nan() || v.is_nan() {
            T::add(acc, v)
        } else if v < acc {
            v
        } else {
            acc
        }
    }
}

/// `y[out(i)] = fold(x[i])` over `x` row-major in `shape`, where `out(i)` advances by
/// `out_strides` (0 on the reduced axes); then `y /= divisor` when `divisor > 1` (the
/// mean).
#[inline]
pub fn reduce<O: ReduceOp, T: Num, const R: usize>(
    x: &[T],
    y: &mut [T],
    shape: &[usize; R],
    out_strides: &[usize; R],
    divisor: usize,
) {
    let n: usize = shape.iter().product();
    let x = &x[..n];
    y.fill(O::init());
    let zeros = [0usize; R];
    let mut idx = [0usize; R];
    let (mut io, mut unused) = (0usize, 0usize);
    for &v in x {
        y[io] = O::combine(y[io], v);
        super::step2(&mut idx, shape, out_strides, &zeros, &mut io, &mut unused);
    }
    if divisor > 1 {
        let d = T::from_count(divisor);
        for v in y.iter_mut() {
            *v = T::div(*v, d);
        }
    }
}

/// `ArgMax` (`max`) or `ArgMin` of `x` viewed as `[OUTER, N, INNER]` along the middle
/// axis: `y[o * INNER + i]` is the index of the extreme, the first on ties or the last
/// with `last`. NaN compares as neither larger nor smaller.
#[inline]
pub fn arg_extreme<T: Copy + PartialOrd, const OUTER: usize, const N: usize, const INNER: usize>(
    x: &[T],
    y: &mut [i64],
    max: bool,
    last: bool,
) {
    let (x, y) = (&x[..OUTER * N * INNER], &mut y[..OUTER * INNER]);
    for o in 0..OUTER {
        for i in 0..INNER {
            let at = |k: usize| x[(o * N + k) * INNER + i];
            let mut best = 0;
            for k in 1..N {
                let (v, b) = (at(k), at(best));
                let better = if max { v > b } else { v < b };
                if better || (last && v == b) {
                    best = k;
                }
            }
            y[o * INNER + i] = best as i64;
        }
    }
}
