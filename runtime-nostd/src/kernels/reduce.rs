//! Reductions over any set of axes.

use super::num::{Float, Num};

/// How values combine, and what the total becomes.
pub trait ReduceOp<T> {
    /// The value of an empty reduction.
    fn init() -> T;
    /// Folds one value in.
    fn combine(acc: T, v: T) -> T;
    /// The result from the folded total (the identity for most).
    #[inline(always)]
    fn finish(acc: T) -> T {
        acc
    }
}

macro_rules! reducers {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;
    )*};
}

reducers! {
    /// Sum (and, divided, mean).
    Sum,
    /// Product.
    Prod,
    /// Maximum; NaN propagates.
    Max,
    /// Minimum; NaN propagates.
    Min,
    /// Sum of absolute values (`ReduceL1`).
    SumAbs,
    /// Sum of squares (`ReduceSumSquare`).
    SumSquare,
    /// Square root of the sum of squares (`ReduceL2`).
    L2,
    /// Natural logarithm of the sum (`ReduceLogSum`).
    LogSum,
    /// `ln(sum(e^x))` (`ReduceLogSumExp`), accumulated as a running log-sum so that no
    /// exponential overflows: `l + v` combine as `max + ln(1 + e^-|l - v|)`.
    LogSumExp,
}

impl<T: Num> ReduceOp<T> for Sum {
    #[inline(always)]
    fn init() -> T {
        T::ZERO
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        T::add(acc, v)
    }
}
impl<T: Num> ReduceOp<T> for Prod {
    #[inline(always)]
    fn init() -> T {
        T::ONE
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        T::mul(acc, v)
    }
}
impl<T: Num> ReduceOp<T> for Max {
    #[inline(always)]
    fn init() -> T {
        T::LOWEST
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        if acc.is_nan() || v.is_nan() {
            T::add(acc, v)
        } else if v > acc {
            v
        } else {
            acc
        }
    }
}
impl<T: Num> ReduceOp<T> for Min {
    #[inline(always)]
    fn init() -> T {
        T::HIGHEST
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        if acc.is_nan() || v.is_nan() {
            T::add(acc, v)
        } else if v < acc {
            v
        } else {
            acc
        }
    }
}
impl<T: Num> ReduceOp<T> for SumAbs {
    #[inline(always)]
    fn init() -> T {
        T::ZERO
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        T::add(acc, v.abs())
    }
}
impl<T: Num> ReduceOp<T> for SumSquare {
    #[inline(always)]
    fn init() -> T {
        T::ZERO
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        T::add(acc, T::mul(v, v))
    }
}
impl<T: Float> ReduceOp<T> for L2 {
    #[inline(always)]
    fn init() -> T {
        T::ZERO
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        acc + v * v
    }
    #[inline(always)]
    fn finish(acc: T) -> T {
        acc.sqrt()
    }
}
impl<T: Float> ReduceOp<T> for LogSum {
    #[inline(always)]
    fn init() -> T {
        T::ZERO
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        acc + v
    }
    #[inline(always)]
    fn finish(acc: T) -> T {
        acc.ln()
    }
}
impl<T: Float> ReduceOp<T> for LogSumExp {
    #[inline(always)]
    fn init() -> T {
        T::LOWEST
    }
    #[inline(always)]
    fn combine(acc: T, v: T) -> T {
        let (hi, lo) = if v > acc { (v, acc) } else { (acc, v) };
        if lo == T::LOWEST {
            // e^-inf adds nothing (also to the empty sum, -inf).
            return hi;
        }
        // Two +inf (and NaN) give NaN, as the max-subtracting form does.
        hi + (lo - hi).exp().ln_1p()
    }
}

/// `y[out(i)] = fold(x[i])` over `x` row-major in `shape`, where `out(i)` advances by
/// `out_strides` (0 on the reduced axes); then `y /= divisor` when `divisor > 1` (the
/// mean).
#[inline]
pub fn reduce<O: ReduceOp<T>, T: Num, const R: usize>(
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
    for v in y.iter_mut() {
        *v = O::finish(*v);
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
