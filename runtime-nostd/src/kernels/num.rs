//! The element types the kernels compute on, and the arithmetic ONNX gives them:
//! floats follow IEEE 754; integers wrap on overflow (two's complement, as ONNX Runtime
//! behaves), and an integer division by zero gives 0 instead of trapping.

/// A numeric element type: `f32`, `f64`, `i64`, `i32`, `i8` or `u8`.
pub trait Num: Copy + PartialOrd + Default {
    /// The additive identity.
    const ZERO: Self;
    /// The multiplicative identity.
    const ONE: Self;
    /// The smallest value (-inf for floats): the identity of `max`.
    const LOWEST: Self;
    /// The largest value (+inf for floats): the identity of `min`.
    const HIGHEST: Self;
    /// `a + b`.
    fn add(a: Self, b: Self) -> Self;
    /// `a - b`.
    fn sub(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn mul(a: Self, b: Self) -> Self;
    /// `a / b` (integers: truncated toward zero; 0 when `b` is 0).
    fn div(a: Self, b: Self) -> Self;
    /// Whether the value is NaN (never for integers).
    fn is_nan(self) -> bool;
    /// `|a|` (wrapping for the most negative integer).
    fn abs(self) -> Self;
    /// `-a` (wrapping for integers).
    fn neg(self) -> Self;
    /// The count `n` in this type (the divisor of a mean).
    fn from_count(n: usize) -> Self;
}

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a + b }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self { a - b }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a * b }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self { a / b }
            #[inline(always)]
            fn is_nan(self) -> bool { self != self }
            #[inline(always)]
            fn abs(self) -> Self { if self < 0.0 { -self } else if self == 0.0 { 0.0 } else { self } }
            #[inline(always)]
            fn neg(self) -> Self { -self }
            #[inline(always)]
            fn from_count(n: usize) -> Self { n as $t }
        }
    )*};
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a.wrapping_div(b) } }
            #[inline(always)]
            fn is_nan(self) -> bool { false }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn abs(self) -> Self { if self < 0 { (0 as $t).wrapping_sub(self) } else { self } }
            #[inline(always)]
            fn neg(self) -> Self { (0 as $t).wrapping_sub(self) }
            #[inline(always)]
            fn from_count(n: usize) -> Self { n as $t }
        }
    )*};
}

float!(f32, f64);
int!(i64, i32, i8, u8);

/// The float functions of the element-wise operators, libm's for each width.
pub trait Float:
    Num
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
{
    /// `e^x` as the normalizations use it: the vectorizable approximation for f32
    /// (about 1 ulp, [`super::math::exp`]), libm's for f64.
    fn exp_fast(self) -> Self;
    /// `e^x`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Round toward -inf.
    fn floor(self) -> Self;
    /// Round toward +inf.
    fn ceil(self) -> Self;
}

impl Float for f32 {
    #[inline(always)]
    fn exp_fast(self) -> Self {
        super::math::exp(self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        libm::expf(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        libm::logf(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        libm::sqrtf(self)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        libm::floorf(self)
    }
    #[inline(always)]
    fn ceil(self) -> Self {
        libm::ceilf(self)
    }
}

impl Float for f64 {
    #[inline(always)]
    fn exp_fast(self) -> Self {
        libm::exp(self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        libm::exp(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        libm::log(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        libm::sqrt(self)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        libm::floor(self)
    }
    #[inline(always)]
    fn ceil(self) -> Self {
        libm::ceil(self)
    }
}

/// Conversion between element types with ONNX `Cast` semantics: float to integer
/// truncates toward zero (out-of-range values saturate, NaN gives 0: ONNX leaves both
/// undefined), integer to integer wraps, anything to bool is `!= 0`, bool is 0 or 1.
pub trait CastTo<U> {
    /// The converted value.
    fn cast(self) -> U;
}

macro_rules! cast_num {
    ($($from:ty),*) => {$(
        cast_num!(@to $from; f32, f64, i64, i32, i8, u8);
        impl CastTo<bool> for $from {
            #[inline(always)]
            #[allow(clippy::float_cmp)]
            fn cast(self) -> bool { self != (0 as $from) }
        }
        impl CastTo<$from> for bool {
            #[inline(always)]
            fn cast(self) -> $from { self as u8 as $from }
        }
    )*};
    (@to $from:ty; $($to:ty),*) => {$(
        impl CastTo<$to> for $from {
            #[inline(always)]
            fn cast(self) -> $to { self as $to }
        }
    )*};
}

cast_num!(f32, f64, i64, i32, i8, u8);

impl CastTo<bool> for bool {
    #[inline(always)]
    fn cast(self) -> bool {
        self
    }
}

/// `y[i] = cast(x[i])`.
#[inline]
pub fn cast<T: CastTo<U> + Copy, U>(x: &[T], y: &mut [U]) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o = v.cast();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_never_trap() {
        assert_eq!(<i8 as Num>::add(127, 1), -128);
        assert_eq!(<i8 as Num>::abs(-128), -128);
        assert_eq!(<i32 as Num>::div(7, 0), 0);
        assert_eq!(<i32 as Num>::div(i32::MIN, -1), i32::MIN);
        assert_eq!(<i64 as Num>::div(-7, 2), -3);
        assert_eq!(<u8 as Num>::neg(1), 255);
    }

    #[test]
    fn casts_follow_onnx() {
        assert_eq!(CastTo::<i32>::cast(-2.7f32), -2);
        assert_eq!(CastTo::<u8>::cast(300i32), 44);
        assert!(CastTo::<bool>::cast(0.5f64));
        assert!(!CastTo::<bool>::cast(0i8));
        assert_eq!(CastTo::<f32>::cast(true), 1.0);
        assert_eq!(CastTo::<i64>::cast(f32::NAN), 0);
    }
}
