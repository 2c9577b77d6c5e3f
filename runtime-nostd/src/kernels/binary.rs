//! Element-wise binary operators with numpy broadcasting.

/// A scalar binary function.
pub trait BinaryOp {
    /// Applies the operator to one pair.
    fn apply(a: f32, b: f32) -> f32;
}

/// `a + b`.
#[derive(Debug)]
pub struct Add;
/// `a - b`.
#[derive(Debug)]
pub struct Sub;
/// `a * b`.
#[derive(Debug)]
pub struct Mul;
/// `a / b`.
#[derive(Debug)]
pub struct Div;
/// `a ^ b` (libm's `powf`).
#[derive(Debug)]
pub struct Pow;
/// The smaller; NaN if either is NaN.
#[derive(Debug)]
pub struct Min;
/// The larger; NaN if either is NaN.
#[derive(Debug)]
pub struct Max;

impl BinaryOp for Pow {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        libm::powf(a, b)
    }
}
impl BinaryOp for Min {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if b < a {
            b
        } else {
            a
        }
    }
}
impl BinaryOp for Max {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if b > a {
            b
        } else {
            a
        }
    }
}

impl BinaryOp for Add {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a + b
    }
}
impl BinaryOp for Sub {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a - b
    }
}
impl BinaryOp for Mul {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a * b
    }
}
impl BinaryOp for Div {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a / b
    }
}

/// Both operands already have the output's shape.
#[inline]
pub fn binary_same<O: BinaryOp>(a: &[f32], b: &[f32], y: &mut [f32]) {
    for ((out, &x), &z) in y.iter_mut().zip(a).zip(b) {
        *out = O::apply(x, z);
    }
}

/// General broadcasting: `a` and `b` are read with strides (0 on broadcast axes) over
/// the output `shape`.
#[inline]
pub fn binary<O: BinaryOp, const R: usize>(
    a: &[f32],
    a_strides: &[usize; R],
    b: &[f32],
    b_strides: &[usize; R],
    y: &mut [f32],
    shape: &[usize; R],
) {
    let mut idx = [0usize; R];
    let (mut ia, mut ib) = (0usize, 0usize);
    for out in y.iter_mut() {
        *out = O::apply(a[ia], b[ib]);
        super::step2(&mut idx, shape, a_strides, b_strides, &mut ia, &mut ib);
    }
}

/// `y = y (op) b`, `y` having the output's shape and `b` broadcast with strides.
#[inline]
pub fn binary_inplace<O: BinaryOp, const R: usize>(
    y: &mut [f32],
    b: &[f32],
    b_strides: &[usize; R],
    shape: &[usize; R],
) {
    let zeros = [0usize; R];
    let mut idx = [0usize; R];
    let (mut unused, mut ib) = (0usize, 0usize);
    for out in y.iter_mut() {
        *out = O::apply(*out, b[ib]);
        super::step2(&mut idx, shape, &zeros, b_strides, &mut unused, &mut ib);
    }
}
