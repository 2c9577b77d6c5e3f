//! Element-wise binary operators with numpy broadcasting, for every element type:
//! arithmetic (`Add`, `Sub`, `Mul`, `Div`, `Min`, `Max` on [`Num`] types, `Pow` on
//! f32 and f64), comparisons (to bool), logic (bool), `Mod`, `PRelu` and the bitwise
//! operators on integers.

use super::num::Num;

/// A scalar binary function from two `T` to `Out`.
pub trait BinaryOp<T> {
    /// The result type (`T` for arithmetic, `bool` for comparisons).
    type Out;
    /// Applies the operator to one pair.
    fn apply(a: T, b: T) -> Self::Out;
    /// Float arithmetic: library calls on the cores without an FPU, where every short
    /// run stays a loop ([`super::rolled_from`]); other runs do from nine values (the
    /// dtype zoo's integer runs, as loops, took 2-3 % more instructions there).
    const FLOAT: bool = false;
    /// A library call on every core (`Pow`, `Fmod`): its short runs stay loops too, as
    /// [`Self::FLOAT`]'s without an FPU (MathZoo's `Pow` over 6 rows of 4 was 24 calls
    /// written out on the Cortex-M4F).
    const CALL: bool = false;
}

/// The cores without an FPU.
const SOFT: bool = cfg!(tinyonnx_soft_float);

/// Whether `O`'s runs are heavy for [`super::rolled_from`] and [`super::short_run`]: a
/// library call a value.
const fn heavy<O: BinaryOp<T>, T>() -> bool {
    (SOFT && O::FLOAT) || O::CALL
}

macro_rules! ops {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;
    )*};
}

ops! {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (integers: toward zero, 0 for a zero divisor).
    Div,
    /// `a ^ b` (libm's `powf`, `pow` for f64).
    Pow,
    /// The smaller; NaN if either is NaN.
    Min,
    /// The larger; NaN if either is NaN.
    Max,
    /// `a == b`.
    Equal,
    /// `a < b`.
    Less,
    /// `a > b`.
    Greater,
    /// `a <= b`.
    LessOrEqual,
    /// `a >= b`.
    GreaterOrEqual,
    /// `a && b`.
    And,
    /// `a || b`.
    Or,
    /// `a != b` on bools.
    Xor,
    /// The remainder with the divisor's sign (`Mod`, `fmod = 0`; integers, 0 for a zero
    /// divisor).
    Mod,
    /// The remainder with the dividend's sign (`Mod`, `fmod = 1`; C's `fmod`).
    Fmod,
    /// `a << b`; 0 when `b` is the width or more (`BitShift`, unsigned).
    ShiftLeft,
    /// `a >> b`; 0 when `b` is the width or more.
    ShiftRight,
    /// `a & b` on integers.
    BitwiseAnd,
    /// `a | b` on integers.
    BitwiseOr,
    /// `a ^ b` on integers.
    BitwiseXor,
    /// `a` if not negative, else `a * b` (`PRelu`, `b` the slope).
    PRelu,
}

/// `max(a + b, 0)` on f32 (as `unary::Relu`, NaN gives 0): a `Relu` fused into the
/// `Add` before it.
#[derive(Debug)]
pub struct AddRelu;

impl BinaryOp<f32> for AddRelu {
    type Out = f32;
    const FLOAT: bool = true;
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        let s = a + b;
        if s > 0.0 { s } else { 0.0 }
    }
}

macro_rules! arith {
    ($($op:ident => |$a:ident, $b:ident| $e:expr;)*) => {$(
        impl<T: Num> BinaryOp<T> for $op {
            type Out = T;
            const FLOAT: bool = T::FLOAT;
            #[inline(always)]
            fn apply($a: T, $b: T) -> T {
                $e
            }
        }
    )*};
}

arith! {
    Add => |a, b| T::add(a, b);
    Sub => |a, b| T::sub(a, b);
    Mul => |a, b| T::mul(a, b);
    Div => |a, b| T::div(a, b);
    Min => |a, b| if a.is_nan() || b.is_nan() { T::add(a, b) } else if b < a { b } else { a };
    Max => |a, b| if a.is_nan() || b.is_nan() { T::add(a, b) } else if b > a { b } else { a };
}

impl BinaryOp<f32> for Pow {
    type Out = f32;
    const FLOAT: bool = true;
    const CALL: bool = true;
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        libm::powf(a, b)
    }
}
impl BinaryOp<f64> for Pow {
    type Out = f64;
    const FLOAT: bool = true;
    const CALL: bool = true;
    #[inline(always)]
    fn apply(a: f64, b: f64) -> f64 {
        libm::pow(a, b)
    }
}

// Integer powers as ONNX Runtime computes them: in f64, converted back as its casts
// do (a negative exponent gives 0 unless the base is 1 or -1; a result out of range,
// or 0 to a negative power, gives the type's minimum).
macro_rules! int_pow {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Pow {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                super::num::CastTo::<$t>::cast(libm::pow(a as f64, b as f64))
            }
        }
    )*};
}
int_pow!(i32, i64);

macro_rules! compare {
    ($($op:ident => $cmp:tt;)*) => {$(
        impl<T: PartialOrd> BinaryOp<T> for $op {
            type Out = bool;
            #[inline(always)]
            #[allow(clippy::float_cmp)]
            fn apply(a: T, b: T) -> bool {
                a $cmp b
            }
        }
    )*};
}

compare! {
    Equal => ==;
    Less => <;
    Greater => >;
    LessOrEqual => <=;
    GreaterOrEqual => >=;
}

impl<T: Num> BinaryOp<T> for PRelu {
    type Out = T;
    const FLOAT: bool = T::FLOAT;
    #[inline(always)]
    fn apply(a: T, b: T) -> T {
        if a < T::ZERO { T::mul(a, b) } else { a }
    }
}

impl BinaryOp<f32> for Fmod {
    type Out = f32;
    const FLOAT: bool = true;
    const CALL: bool = true;
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        libm::fmodf(a, b)
    }
}
impl BinaryOp<f64> for Fmod {
    type Out = f64;
    const FLOAT: bool = true;
    const CALL: bool = true;
    #[inline(always)]
    fn apply(a: f64, b: f64) -> f64 {
        libm::fmod(a, b)
    }
}

// The integer operators of every width; a zero divisor gives 0 (ONNX leaves it
// undefined; ONNX Runtime traps).
macro_rules! int_bits {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Fmod {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                if b == 0 { 0 } else { a.wrapping_rem(b) }
            }
        }
        impl BinaryOp<$t> for ShiftLeft {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                u32::try_from(b).ok().and_then(|b| a.checked_shl(b)).unwrap_or(0)
            }
        }
        impl BinaryOp<$t> for ShiftRight {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                u32::try_from(b).ok().and_then(|b| a.checked_shr(b)).unwrap_or(0)
            }
        }
        impl BinaryOp<$t> for BitwiseAnd {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                a & b
            }
        }
        impl BinaryOp<$t> for BitwiseOr {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                a | b
            }
        }
        impl BinaryOp<$t> for BitwiseXor {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                a ^ b
            }
        }
    )*};
}
int_bits!(i64, i32, i16, i8, u64, u32, u16, u8);

macro_rules! signed_mod {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Mod {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                let r = <Fmod as BinaryOp<$t>>::apply(a, b);
                if r != 0 && ((r < 0) != (b < 0)) { r.wrapping_add(b) } else { r }
            }
        }
    )*};
}
signed_mod!(i64, i32, i16, i8);

macro_rules! unsigned_mod {
    ($($t:ty),*) => {$(
        impl BinaryOp<$t> for Mod {
            type Out = $t;
            #[inline(always)]
            fn apply(a: $t, b: $t) -> $t {
                <Fmod as BinaryOp<$t>>::apply(a, b)
            }
        }
    )*};
}
unsigned_mod!(u64, u32, u16, u8);

macro_rules! logic {
    ($($op:ident => $e:tt;)*) => {$(
        impl BinaryOp<bool> for $op {
            type Out = bool;
            #[inline(always)]
            fn apply(a: bool, b: bool) -> bool {
                a $e b
            }
        }
    )*};
}

logic! {
    And => &;
    Or => |;
    Xor => ^;
}

/// Both operands already have the output's shape.
#[inline]
pub fn binary_same<O: BinaryOp<T>, T: Copy>(a: &[T], b: &[T], y: &mut [O::Out]) {
    same::<O, T>(a, b, y, super::rolled_from(heavy::<O, T>()));
}

/// [`binary_same`], a run of `from` values or more kept a loop ([`super::run_mut`]).
#[inline(always)]
fn same<O: BinaryOp<T>, T: Copy>(a: &[T], b: &[T], y: &mut [O::Out], from: usize) {
    super::each_from2(y, (a, b), from, O::FLOAT, |o, x, z| *o = O::apply(x, z));
}

/// `y = y (op) b`, `b` having `y`'s size: one flat pass.
#[inline]
pub fn binary_same_inplace<O: BinaryOp<T, Out = T>, T: Copy>(y: &mut [T], b: &[T]) {
    let from = super::rolled_from(heavy::<O, T>());
    super::each_from(y, b, from, O::FLOAT, |o, z| *o = O::apply(*o, z));
}

/// `y = a (op) z` for one value `z`, `a` having `y`'s size: one flat pass, kept rolled on
/// the microcontrollers (the Transformer's attention scale, 400 values: 300 bytes less
/// flash on the Cortex-M4F for 0.17 % more instructions), a short run too
/// ([`scalar_run`]).
#[inline]
pub fn binary_scalar<O: BinaryOp<T>, T: Copy>(a: &[T], z: T, y: &mut [O::Out]) {
    for (o, &x) in scalar_run(y, heavy::<O, T>()).zip(a) {
        super::rolled();
        *o = O::apply(x, z);
    }
}

/// `y = y (op) z` for one value `z`: one flat pass, rolled as [`binary_scalar`].
#[inline]
pub fn binary_scalar_inplace<O: BinaryOp<T, Out = T>, T: Copy>(y: &mut [T], z: T) {
    for o in scalar_run(y, heavy::<O, T>()) {
        super::rolled();
        *o = O::apply(*o, z);
    }
}

/// `y`'s values for the one-value passes, a short run's length hidden from the
/// unroller as [`super::run_mut`] does (a `rolled` step alone leaves a constant count
/// copied whole: ShapeZoo's 40-value product by 0.5 took 802 bytes on the riscv32).
#[inline(always)]
fn scalar_run<T>(y: &mut [T], heavy: bool) -> core::slice::IterMut<'_, T> {
    let short = y.len() >= super::rolled_from(heavy);
    super::short_run(y, short).iter_mut()
}

/// General broadcasting: `a` and `b` are read with strides (0 on broadcast axes) over
/// the output `shape`.
#[inline]
pub fn binary<O: BinaryOp<T>, T: Copy, const R: usize>(
    a: &[T],
    a_strides: &[usize; R],
    b: &[T],
    b_strides: &[usize; R],
    y: &mut [O::Out],
    shape: &[usize; R],
) {
    if R > 0 && !y.is_empty() {
        // Row by row, the last axis as a loop over contiguous or broadcast operands.
        let n = shape[R - 1];
        super::for_rows2(shape, a_strides, b_strides, |row, ia, ib| {
            let out = super::short_run(&mut y[row * n..(row + 1) * n], heavy::<O, T>());
            match (a_strides[R - 1], b_strides[R - 1]) {
                // A row the loop over rows repeats: left to the unroller.
                (1, 1) => same::<O, T>(&a[ia..ia + n], &b[ib..ib + n], out, usize::MAX),
                (1, 0) => {
                    let z = b[ib];
                    for (o, &x) in out.iter_mut().zip(&a[ia..ia + n]) {
                        *o = O::apply(x, z);
                    }
                }
                (0, 1) => {
                    let x = a[ia];
                    for (o, &z) in out.iter_mut().zip(&b[ib..ib + n]) {
                        *o = O::apply(x, z);
                    }
                }
                (sa, sb) => {
                    for (j, o) in out.iter_mut().enumerate() {
                        *o = O::apply(a[ia + j * sa], b[ib + j * sb]);
                    }
                }
            }
        });
        return;
    }
    let mut idx = [0usize; R];
    let (mut ia, mut ib) = (0usize, 0usize);
    for out in y.iter_mut() {
        *out = O::apply(a[ia], b[ib]);
        super::step2(&mut idx, shape, a_strides, b_strides, &mut ia, &mut ib);
    }
}

/// `y = y (op) b`, `y` having the output's shape and `b` broadcast with strides.
#[inline]
pub fn binary_inplace<O: BinaryOp<T, Out = T>, T: Copy, const R: usize>(
    y: &mut [T],
    b: &[T],
    b_strides: &[usize; R],
    shape: &[usize; R],
) {
    let zeros = [0usize; R];
    if R > 0 && !y.is_empty() {
        // Row by row, the last axis as a loop over a contiguous or broadcast `b`.
        let n = shape[R - 1];
        super::for_rows2(shape, &zeros, b_strides, |row, _, ib| {
            let out = super::short_run(&mut y[row * n..(row + 1) * n], heavy::<O, T>());
            match b_strides[R - 1] {
                0 => {
                    let z = b[ib];
                    for o in out.iter_mut() {
                        *o = O::apply(*o, z);
                    }
                }
                1 => {
                    for (o, &z) in out.iter_mut().zip(&b[ib..ib + n]) {
                        *o = O::apply(*o, z);
                    }
                }
                sb => {
                    for (j, o) in out.iter_mut().enumerate() {
                        *o = O::apply(*o, b[ib + j * sb]);
                    }
                }
            }
        });
        return;
    }
    let mut idx = [0usize; R];
    let (mut unused, mut ib) = (0usize, 0usize);
    for out in y.iter_mut() {
        *out = O::apply(*out, b[ib]);
        super::step2(&mut idx, shape, &zeros, b_strides, &mut unused, &mut ib);
    }
}

/// `Where`: `y = cond ? x : z`, all three read with strides over the output `shape`.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn select<T: Copy, const R: usize>(
    cond: &[bool],
    c_strides: &[usize; R],
    x: &[T],
    x_strides: &[usize; R],
    z: &[T],
    z_strides: &[usize; R],
    y: &mut [T],
    shape: &[usize; R],
) {
    let zeros = [0usize; R];
    let (mut idx, mut idx2) = ([0usize; R], [0usize; R]);
    let (mut ic, mut ix, mut iz, mut unused) = (0usize, 0usize, 0usize, 0usize);
    for out in y.iter_mut() {
        *out = if cond[ic] { x[ix] } else { z[iz] };
        super::step2(&mut idx, shape, c_strides, x_strides, &mut ic, &mut ix);
        super::step2(&mut idx2, shape, z_strides, &zeros, &mut iz, &mut unused);
    }
}

/// `Where` in place: `y` holds X (already at the output's shape); `y = cond ? y : z`.
#[inline]
pub fn select_inplace<T: Copy, const R: usize>(
    cond: &[bool],
    c_strides: &[usize; R],
    z: &[T],
    z_strides: &[usize; R],
    y: &mut [T],
    shape: &[usize; R],
) {
    let mut idx = [0usize; R];
    let (mut ic, mut iz) = (0usize, 0usize);
    for out in y.iter_mut() {
        if !cond[ic] {
            *out = z[iz];
        }
        super::step2(&mut idx, shape, c_strides, z_strides, &mut ic, &mut iz);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values ONNX Runtime 1.31 gave for Pow on int32 (x86-64).
    #[test]
    fn integer_powers_follow_onnx_runtime() {
        let a = [2, 3, -2, 0, 1, -1, 5, 8, 2, 3, 0, 7];
        let b = [3, -1, 3, 0, -5, -3, 2, 8, 31, 21, -2, 12];
        let ort = [
            8,
            0,
            -8,
            1,
            1,
            -1,
            25,
            16_777_216,
            i32::MIN,
            i32::MIN,
            i32::MIN,
            i32::MIN,
        ];
        for k in 0..a.len() {
            assert_eq!(
                <Pow as BinaryOp<i32>>::apply(a[k], b[k]),
                ort[k],
                "{}^{}",
                a[k],
                b[k]
            );
        }
    }
}
