//! Reductions over any set of axes.

/// How values combine.
pub trait ReduceOp {
    /// The value of an empty reduction.
    const INIT: f32;
    /// Folds one value in.
    fn combine(acc: f32, v: f32) -> f32;
}

/// Sum (and, scaled, mean).
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
    const INIT: f32 = 0.0;
    #[inline(always)]
    fn combine(acc: f32, v: f32) -> f32 {
        acc + v
    }
}
impl ReduceOp for Prod {
    const INIT: f32 = 1.0;
    #[inline(always)]
    fn combine(acc: f32, v: f32) -> f32 {
        acc * v
    }
}
impl ReduceOp for Max {
    const INIT: f32 = f32::NEG_INFINITY;
    #[inline(always)]
    fn combine(acc: f32, v: f32) -> f32 {
        if acc.is_nan() || v.is_nan() {
            f32::NAN
        } else if v > acc {
            v
        } else {
            acc
        }
    }
}
impl ReduceOp for Min {
    const INIT: f32 = f32::INFINITY;
    #[inline(always)]
    fn combine(acc: f32, v: f32) -> f32 {
        if acc.is_nan() || v.is_nan() {
            f32::NAN
        } else if v < acc {
            v
        } else {
            acc
        }
    }
}

/// `y[out(i)] = fold(x[i])` over `x` row-major in `shape`, where `out(i)` advances by
/// `out_strides` (0 on the reduced axes); then `y *= scale` when `scale != 1`.
#[inline]
pub fn reduce<O: ReduceOp, const R: usize>(
    x: &[f32],
    y: &mut [f32],
    shape: &[usize; R],
    out_strides: &[usize; R],
    scale: f32,
) {
    let n: usize = shape.iter().product();
    let x = &x[..n];
    y.fill(O::INIT);
    let zeros = [0usize; R];
    let mut idx = [0usize; R];
    let (mut io, mut unused) = (0usize, 0usize);
    for &v in x {
        y[io] = O::combine(y[io], v);
        super::step2(&mut idx, shape, out_strides, &zeros, &mut io, &mut unused);
    }
    if scale != 1.0 {
        for v in y.iter_mut() {
            *v *= scale;
        }
    }
}
