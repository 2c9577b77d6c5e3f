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

/// `CumSum` of `x` viewed as `[outer, n, inner]` along the middle axis; `exclusive`
/// leaves out each element itself, `reverse` sums from the end.
#[inline]
pub fn cumsum<T: Num>(
    x: &[T],
    y: &mut [T],
    outer: usize,
    n: usize,
    inner: usize,
    exclusive: bool,
    reverse: bool,
) {
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = T::ZERO;
            for s in 0..n {
                let k = if reverse { n - 1 - s } else { s };
                let at = (o * n + k) * inner + i;
                let v = x[at];
                if exclusive {
                    y[at] = acc;
                    acc = T::add(acc, v);
                } else {
                    acc = T::add(acc, v);
                    y[at] = acc;
                }
            }
        }
    }
}

/// `Hardmax` of `x` viewed as `[outer, n, inner]`: 1 at the first largest element along
/// the middle axis, 0 elsewhere. The first NaN counts as the largest, as in the ONNX
/// reference (numpy's argmax); ONNX Runtime's choice depends on where the NaN is.
#[inline]
pub fn hardmax<T: Num>(x: &[T], y: &mut [T], outer: usize, n: usize, inner: usize) {
    y.fill(T::ZERO);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let mut best = 0;
            for k in 1..n {
                let (v, b) = (x[at(k)], x[at(best)]);
                if !b.is_nan() && (v.is_nan() || v > b) {
                    best = k;
                }
            }
            if n > 0 {
                y[at(best)] = T::ONE;
            }
        }
    }
}

/// `LpNormalization` of `x` viewed as `[outer, n, inner]`: each vector along the middle
/// axis divided by its L1 (`p = 1`) or L2 norm; a zero vector stays zero.
#[inline]
pub fn lp_normalize<T: Float>(x: &[T], y: &mut [T], outer: usize, n: usize, inner: usize, p: u8) {
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let mut norm = T::ZERO;
            for k in 0..n {
                let v = x[at(k)];
                norm = if p == 1 { norm + v.abs() } else { norm + v * v };
            }
            if p != 1 {
                norm = norm.sqrt();
            }
            for k in 0..n {
                y[at(k)] = if norm == T::ZERO {
                    T::ZERO
                } else {
                    x[at(k)] / norm
                };
            }
        }
    }
}

/// `TopK` of `x` viewed as `[outer, n, inner]` along the middle axis: the `k` largest
/// (`largest`) or smallest values and their indices, in order (ties: the lower index
/// first), into `values` and `indices` viewed as `[outer, k, inner]`.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn top_k<T: Num>(
    x: &[T],
    values: &mut [T],
    indices: &mut [i64],
    outer: usize,
    n: usize,
    inner: usize,
    k: usize,
    largest: bool,
) {
    // `a` comes before `b`: larger (smaller) first, the lower index on ties; NaN orders
    // above every number, as in the ONNX reference (numpy's sort); ONNX Runtime's order
    // depends on where the NaN is.
    let before = |a: T, ia: usize, b: T, ib: usize| {
        let (an, bn) = (a.is_nan(), b.is_nan());
        if an || bn {
            return if an == bn { ia < ib } else { an == largest };
        }
        if a == b {
            ia < ib
        } else if largest {
            a > b
        } else {
            a < b
        }
    };
    for o in 0..outer {
        for i in 0..inner {
            let out = |j: usize| (o * k + j) * inner + i;
            // Insertion into the sorted first `filled` slots of this output column.
            let mut filled = 0;
            for s in 0..n {
                let v = x[(o * n + s) * inner + i];
                let mut pos = filled;
                while pos > 0 && before(v, s, values[out(pos - 1)], indices[out(pos - 1)] as usize)
                {
                    pos -= 1;
                }
                if pos >= k {
                    continue;
                }
                let last = filled.min(k - 1);
                let mut j = last;
                while j > pos {
                    values[out(j)] = values[out(j - 1)];
                    indices[out(j)] = indices[out(j - 1)];
                    j -= 1;
                }
                values[out(pos)] = v;
                indices[out(pos)] = s as i64;
                filled = (filled + 1).min(k);
            }
        }
    }
}
