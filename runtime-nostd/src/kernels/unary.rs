//! Element-wise unary operators. `exp`, `sigmoid` and `tanh` come from [`super::math`]
//! (vectorizable, about 1 ulp); `erf` from `libm`.

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
        super::math::relu(x)
    }
}
impl UnaryOp for Sigmoid {
    #[inline(always)]
    fn apply(x: f32) -> f32 {
        super::math::sigmoid(x)
    }
}
impl UnaryOp for Tanh {
    #[inline(always)]
    fn apply(x: f32) -> f32 {
        super::math::tanh(x)
    }
}

/// The shortest run the elementwise loops below keep a loop ([`super::rolled_from`]):
/// the float operations are library calls on the cores without an FPU.
const FROM: usize = super::rolled_from(cfg!(tinyonnx_soft_float));

/// `y = op(x)`.
#[inline]
pub fn unary<O: UnaryOp>(x: &[f32], y: &mut [f32]) {
    map(x, y, O::apply);
}

/// `y = f(x)`, `f` a formula the macro wrote.
#[inline]
pub fn map<T: Copy, U>(x: &[T], y: &mut [U], f: impl Fn(T) -> U) {
    super::each_from(y, x, FROM, true, |o, v| *o = f(v));
}

/// `y = f(y)`.
#[inline]
pub fn map_inplace<T: Copy>(y: &mut [T], f: impl Fn(T) -> T) {
    super::each_mut(y, FROM, true, |o| *o = f(*o));
}

/// `y = op(y)`.
#[inline]
pub fn unary_inplace<O: UnaryOp>(y: &mut [f32]) {
    map_inplace(y, O::apply);
}

/// `0.5 x (1 + erf(x / sqrt(2)))`.
#[derive(Debug)]
pub struct GeluErf;
/// `0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`.
#[derive(Debug)]
pub struct GeluTanh;

impl UnaryOp for GeluErf {
    #[inline(always)]
    fn apply(x: f32) -> f32 {
        0.5 * x * (1.0 + libm::erff(x * core::f32::consts::FRAC_1_SQRT_2))
    }
}
impl UnaryOp for GeluTanh {
    #[inline(always)]
    fn apply(x: f32) -> f32 {
        const K: f32 = 0.797_884_6; // sqrt(2 / pi)
        0.5 * x * (1.0 + super::math::tanh(K * (x + 0.044_715 * x * x * x)))
    }
}
