//! The element types the kernels compute on, and the arithmetic ONNX gives them:
//! floats follow IEEE 754; integers wrap on overflow (two's complement, as ONNX Runtime
//! behaves), and an integer division by zero gives 0 instead of trapping.

/// A numeric element type: `f32`, `f64`, or an integer of 8 to 64 bits.
pub trait Num: Copy + PartialOrd + Default {
    /// The additive identity.
    const ZERO: Self;
    /// The multiplicative identity.
    const ONE: Self;
    /// The smallest value (-inf for floats): the identity of `max`.
    const LOWEST: Self;
    /// The largest value (+inf for floats): the identity of `min`.
    const HIGHEST: Self;
    /// A float type (its arithmetic library calls on the cores without an FPU).
    const FLOAT: bool;
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
            const FLOAT: bool = true;
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
            const FLOAT: bool = false;
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
int!(i64, i32, i16, i8, u64, u32, u16, u8);

/// The libm functions of the float types, each under one name for f32 and f64: `(method,
/// f32 function, f64 function, what it computes)`.
macro_rules! float_fns {
    ($(($m:ident, $f32:ident, $f64:ident, $doc:literal)),* $(,)?) => {
        /// The float functions of the element-wise operators, libm's for each width.
        pub trait Float:
            Num
            + core::ops::Add<Output = Self>
            + core::ops::Sub<Output = Self>
            + core::ops::Mul<Output = Self>
            + core::ops::Div<Output = Self>
        {
            /// Not a number.
            const NAN: Self;
            /// `e^x` as the normalizations use it: the vectorizable approximation for f32
            /// (about 1 ulp, [`super::math::exp`]), libm's for f64.
            fn exp_fast(self) -> Self;
            /// [`Float::exp_fast`] of a value at most 0 or NaN (a softmax's values less
            /// their maximum): for f32 without the upper clamp
            /// ([`super::math::exp_nonpositive`]).
            fn exp_nonpositive(self) -> Self;
            /// Square root, correctly rounded (for f32 the FPU's where the core has one,
            /// [`super::math::sqrt`]).
            fn sqrt(self) -> Self;
            /// `self > other` (for f32 on the bits on the cores without an FPU,
            /// [`super::math::gt`]).
            fn greater(self, other: Self) -> bool;
            $(#[doc = $doc] fn $m(self) -> Self;)*
        }

        impl Float for f32 {
            const NAN: Self = f32::NAN;
            #[inline(always)]
            fn exp_fast(self) -> Self {
                super::math::exp(self)
            }
            #[inline(always)]
            fn exp_nonpositive(self) -> Self {
                super::math::exp_nonpositive(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                super::math::sqrt(self)
            }
            #[inline(always)]
            fn greater(self, other: Self) -> bool {
                super::math::gt(self, other)
            }
            $(#[inline(always)] fn $m(self) -> Self { libm::$f32(self) })*
        }

        impl Float for f64 {
            const NAN: Self = f64::NAN;
            #[inline(always)]
            fn exp_fast(self) -> Self {
                libm::exp(self)
            }
            #[inline(always)]
            fn exp_nonpositive(self) -> Self {
                libm::exp(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                libm::sqrt(self)
            }
            #[inline(always)]
            fn greater(self, other: Self) -> bool {
                self > other
            }
            $(#[inline(always)] fn $m(self) -> Self { libm::$f64(self) })*
        }
    };
}

float_fns!(
    (exp, expf, exp, "`e^x`."),
    (expm1, expm1f, expm1, "`e^x - 1`."),
    (ln, logf, log, "Natural logarithm."),
    (ln_1p, log1pf, log1p, "`ln(1 + x)`."),
    (floor, floorf, floor, "Round toward -inf."),
    (ceil, ceilf, ceil, "Round toward +inf."),
    (
        round_even,
        rintf,
        rint,
        "Round to nearest, ties to even (the default rounding mode)."
    ),
    (sin, sinf, sin, "Sine."),
    (cos, cosf, cos, "Cosine."),
    (tan, tanf, tan, "Tangent."),
    (asin, asinf, asin, "Arcsine."),
    (acos, acosf, acos, "Arccosine."),
    (atan, atanf, atan, "Arctangent."),
    (sinh, sinhf, sinh, "Hyperbolic sine."),
    (cosh, coshf, cosh, "Hyperbolic cosine."),
    (tanh, tanhf, tanh, "Hyperbolic tangent."),
    (asinh, asinhf, asinh, "Inverse hyperbolic sine."),
    (acosh, acoshf, acosh, "Inverse hyperbolic cosine."),
    (atanh, atanhf, atanh, "Inverse hyperbolic tangent."),
);

/// Conversion between element types with ONNX `Cast` semantics: float to integer
/// truncates toward zero (out-of-range values saturate, NaN gives 0: ONNX leaves both
/// undefined), integer to integer wraps, anything to bool is `!= 0`, bool is 0 or 1.
pub trait CastTo<U> {
    /// The converted value.
    fn cast(self) -> U;
}

/// Float to integer as ONNX Runtime does on x86-64 (the ONNX spec leaves NaN and values
/// out of range undefined): NaN and values outside the target's range become its
/// minimum for i64 and i32 (what `cvttss2si` gives), i16, i8, u16 and u8 take the low
/// bits of that i32 conversion; u32 and u64 below.
trait FloatToInt: Copy {
    fn to_i64_x86(self) -> i64;
    fn to_i32_x86(self) -> i32;
}

macro_rules! float_to_int {
    ($($t:ty),*) => {$(
        impl FloatToInt for $t {
            #[inline(always)]
            fn to_i64_x86(self) -> i64 {
                // 2^63 is exact in both float types; below it every value converts.
                if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&self) {
                    self as i64
                } else {
                    i64::MIN
                }
            }
            #[inline(always)]
            fn to_i32_x86(self) -> i32 {
                if self > -2_147_483_649.0 && self < 2_147_483_648.0 {
                    self as i32
                } else {
                    i32::MIN
                }
            }
        }
        impl CastTo<i64> for $t {
            #[inline(always)]
            fn cast(self) -> i64 { self.to_i64_x86() }
        }
        impl CastTo<i32> for $t {
            #[inline(always)]
            fn cast(self) -> i32 { self.to_i32_x86() }
        }
        impl CastTo<i8> for $t {
            #[inline(always)]
            fn cast(self) -> i8 { self.to_i32_x86() as i8 }
        }
        impl CastTo<u8> for $t {
            #[inline(always)]
            fn cast(self) -> u8 { self.to_i32_x86() as u8 }
        }
        impl CastTo<i16> for $t {
            #[inline(always)]
            fn cast(self) -> i16 { self.to_i32_x86() as i16 }
        }
        impl CastTo<u16> for $t {
            #[inline(always)]
            fn cast(self) -> u16 { self.to_i32_x86() as u16 }
        }
        // Unsigned 32 and 64 bits as ONNX Runtime computes them on x86-64: values from
        // 2^(w-1) up go through the signed conversion of `x - 2^(w-1)` with the top bit
        // set back, the rest through the signed conversion (so NaN and -inf give
        // 2^(w-1), +inf and values past 2^w give 0, negative values wrap).
        impl CastTo<u32> for $t {
            #[inline(always)]
            fn cast(self) -> u32 {
                if self >= 2_147_483_648.0 {
                    ((self - 2_147_483_648.0).to_i32_x86() as u32) ^ (1 << 31)
                } else {
                    self.to_i32_x86() as u32
                }
            }
        }
        impl CastTo<u64> for $t {
            #[inline(always)]
            fn cast(self) -> u64 {
                if self >= 9_223_372_036_854_775_808.0 {
                    ((self - 9_223_372_036_854_775_808.0).to_i64_x86() as u64) ^ (1 << 63)
                } else {
                    self.to_i64_x86() as u64
                }
            }
        }
        impl CastTo<f32> for $t {
            #[inline(always)]
            fn cast(self) -> f32 { self as f32 }
        }
        impl CastTo<f64> for $t {
            #[inline(always)]
            fn cast(self) -> f64 { self as f64 }
        }
        impl CastTo<bool> for $t {
            #[inline(always)]
            #[allow(clippy::float_cmp)]
            fn cast(self) -> bool { self != 0.0 }
        }
        impl CastTo<$t> for bool {
            #[inline(always)]
            fn cast(self) -> $t { self as u8 as $t }
        }
    )*};
}

float_to_int!(f32, f64);

macro_rules! cast_num {
    ($($from:ty),*) => {$(
        cast_num!(@to $from; f32, f64, i64, i32, i16, i8, u64, u32, u16, u8);
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

cast_num!(i64, i32, i16, i8, u64, u32, u16, u8);

impl CastTo<bool> for bool {
    #[inline(always)]
    fn cast(self) -> bool {
        self
    }
}

/// `y[i] = cast(x[i])`.
#[inline]
pub fn cast<T: CastTo<U> + Copy, U>(x: &[T], y: &mut [U]) {
    for (o, &v) in super::run_mut(y, super::rolled_from(false)).zip(x) {
        *o = v.cast();
    }
}

/// `y[i]` = `x[i]` rounded to the float storage format `to` (ONNX `Cast` to `FLOAT16`,
/// `BFLOAT16`, the float 8 formats or `FLOAT4E2M1`), carried in `f32`: the rounding is
/// done once, from the source's own value in f64, so an f64 source is not rounded twice.
#[inline]
pub fn cast_narrow_float<T: CastTo<f64> + Copy>(
    x: &[T],
    y: &mut [f32],
    to: tinyonnx_layout::narrow::Narrow,
    saturate: bool,
) {
    for (o, &v) in y.iter_mut().zip(x) {
        // Exact: the rounded value is one the narrow format holds, and f32 holds them all.
        *o = to.round(v.cast(), saturate) as f32;
    }
}

/// `y[i]` = `x[i]` cast to the 4-bit integer format `to` (`INT4` carried in `i8`,
/// `UINT4` in `u8`): converted to i64 as [`cast`] does, then its low four bits.
#[inline]
pub fn cast_narrow_int<T: CastTo<i64> + Copy, U>(
    x: &[T],
    y: &mut [U],
    to: tinyonnx_layout::narrow::Narrow,
) where
    i64: CastTo<U>,
{
    for (o, &v) in y.iter_mut().zip(x) {
        *o = to.wrap(v.cast()).cast();
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
        // NaN and out-of-range floats as ONNX Runtime on x86-64.
        assert_eq!(CastTo::<i64>::cast(f32::NAN), i64::MIN);
        assert_eq!(CastTo::<i32>::cast(f32::INFINITY), i32::MIN);
        assert_eq!(CastTo::<i32>::cast(-2_147_483_648.0f64), i32::MIN);
        assert_eq!(CastTo::<i32>::cast(2_147_483_647.0f64), i32::MAX);
        assert_eq!(CastTo::<i8>::cast(f32::INFINITY), 0);
        assert_eq!(CastTo::<u8>::cast(300.0f32), 44);
        assert!(CastTo::<bool>::cast(f32::NAN));
    }

    /// The wider integers, on the values ONNX Runtime 1.31 gave on x86-64 (Cast from
    /// f32): NaN, +inf, -inf, -1, -1.5, 3e9, 5e9, 1.9e19, 70000.5, -70000, 2^31, 1e20.
    #[test]
    fn casts_to_wide_integers_follow_onnx_runtime() {
        let x = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -1.0,
            -1.5,
            3e9,
            5e9,
            1.9e19,
            70000.5,
            -70000.0,
            2_147_483_648.0,
            1e20,
        ];
        let u32s: [u32; 12] = [
            2147483648, 0, 2147483648, 4294967295, 4294967295, 3000000000, 0, 0, 70000, 4294897296,
            2147483648, 0,
        ];
        let u64s: [u64; 12] = [
            9223372036854775808,
            0,
            9223372036854775808,
            u64::MAX,
            u64::MAX,
            3000000000,
            5000000000,
            0,
            70000,
            18446744073709481616,
            2147483648,
            0,
        ];
        let u16s: [u16; 12] = [0, 0, 0, 65535, 65535, 0, 0, 0, 4464, 61072, 0, 0];
        let i16s: [i16; 12] = [0, 0, 0, -1, -1, 0, 0, 0, 4464, -4464, 0, 0];
        for (i, &v) in x.iter().enumerate() {
            assert_eq!(CastTo::<u32>::cast(v), u32s[i], "{v} to u32");
            assert_eq!(CastTo::<u64>::cast(v), u64s[i], "{v} to u64");
            assert_eq!(CastTo::<u16>::cast(v), u16s[i], "{v} to u16");
            assert_eq!(CastTo::<i16>::cast(v), i16s[i], "{v} to i16");
        }
    }
}
