//! Element-wise unary operators. Transcendentals use `libm` (accurate, no_std).

/// A scalar unary function.
pub trait UnaryOp {
    /// Applies the operator to one value.
    fn apply(x: f32) -> f32;
}

/// `max(x, 0)`.
#[derive(Debug)]
pub struct Relu;
/// `1 / (1 + exp(-x))`.
#[derive(Debug)]
pub struct Sigmoid;
/// `tanh(x)`.
#[derive(Debug)]
pub struct Tanh;

impl UnaryOp for Relu {
    #[inline(always)]
    fn apply(x: f32) -> f32 {
        if x > 0.0 { x } else { 0.0 }
    }
}
impl UnaryOp for Sigmoid {
    #[inline(always)]
    fn apply(x: f32) -> f32 {
        1.0 / (1.0 + libm::expf(-x))
    }
}
impl UnaryOp for Tanh {
    #[inline(always)]
    fn apply(x: f32) -> f32 {
        libm::tanhf(x)
    }
}

/// `y = op(x)`.
#[inline]
pub fn unary<O: UnaryOp>(x: &[f32], y: &mut [f32]) {
    for (out, &v) in y.iter_mut().zip(x) {
        *out = O::apply(v);
    }
}

/// `y = op(y)`.
#[inline]
pub fn unary_inplace<O: UnaryOp>(y: &mut [f32]) {
    for v in y.iter_mut() {
        *v = O::apply(*v);
    }
}
