//! Storage formats narrower than the runtime's element types: 16- and 8-bit floats,
//! the 4-bit float and the 4- and 2-bit integers of ONNX. tinyonnx carries a value of
//! one in a wider element type (floats in `f32`, `INT4`/`INT2` in `i8`, the unsigned
//! ones in `u8`) holding
//! exactly a value the format can represent, so `Cast` to such a format is a rounding
//! to its grid. The compiler (folding a cast, reading a tensor of the format) and the
//! kernel (casting on the device) both use the functions here.
//!
//! Rounding follows the ONNX reference (which is ml_dtypes): to nearest, ties to even;
//! with `saturate` (the float 8 formats' default) values beyond the largest finite one,
//! infinities included, become that largest value; without it they become infinity
//! where the format has one and NaN otherwise. `FLOAT4E2M1` always saturates and takes
//! NaN to -0. The integers truncate toward zero and keep the low bits (two's complement
//! for the signed ones), as ONNX casts between integer types do.

/// A narrow storage format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Narrow {
    /// IEEE binary16 (`FLOAT16`).
    F16,
    /// bfloat16 (`BFLOAT16`).
    Bf16,
    /// `FLOAT8E4M3FN`: no infinity, one NaN pattern per sign, largest 448.
    F8E4M3Fn,
    /// `FLOAT8E4M3FNUZ`: no infinity, no negative zero, NaN is `0x80`, largest 240.
    F8E4M3Fnuz,
    /// `FLOAT8E5M2`: IEEE-like, largest 57344.
    F8E5M2,
    /// `FLOAT8E5M2FNUZ`: no infinity, no negative zero, largest 57344.
    F8E5M2Fnuz,
    /// `FLOAT4E2M1`: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
    F4E2M1,
    /// `INT4`: -8 to 7, carried in `i8`.
    I4,
    /// `UINT4`: 0 to 15, carried in `u8`.
    U4,
    /// `INT2`: -2 to 1, carried in `i8`.
    I2,
    /// `UINT2`: 0 to 3, carried in `u8`.
    U2,
}

/// What a float format can hold: mantissa bits, exponent bias, the largest finite value
/// and how it spells infinity and NaN.
#[derive(Debug, Clone, Copy)]
struct Float {
    exp_bits: u32,
    man_bits: u32,
    bias: i32,
    max: f64,
    /// All-ones exponent means infinity (mantissa 0) or NaN, as in IEEE 754.
    ieee: bool,
    /// No negative zero; the pattern `1000...` is the only NaN.
    fnuz: bool,
}

impl Narrow {
    /// Every format, in the order of their ONNX codes.
    pub const ALL: [Narrow; 11] = [
        Narrow::F16,
        Narrow::Bf16,
        Narrow::F8E4M3Fn,
        Narrow::F8E4M3Fnuz,
        Narrow::F8E5M2,
        Narrow::F8E5M2Fnuz,
        Narrow::I4,
        Narrow::U4,
        Narrow::F4E2M1,
        Narrow::U2,
        Narrow::I2,
    ];

    /// `TensorProto.DataType` of the format.
    pub const fn onnx_code(self) -> i32 {
        match self {
            Narrow::F16 => 10,
            Narrow::Bf16 => 16,
            Narrow::F8E4M3Fn => 17,
            Narrow::F8E4M3Fnuz => 18,
            Narrow::F8E5M2 => 19,
            Narrow::F8E5M2Fnuz => 20,
            Narrow::U4 => 21,
            Narrow::I4 => 22,
            Narrow::F4E2M1 => 23,
            Narrow::U2 => 25,
            Narrow::I2 => 26,
        }
    }

    /// The format whose `TensorProto.DataType` is `code`.
    pub const fn from_onnx(code: i64) -> Option<Narrow> {
        let mut i = 0;
        while i < Narrow::ALL.len() {
            if Narrow::ALL[i].onnx_code() as i64 == code {
                return Some(Narrow::ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// The DSL's name of the format (`Cast(x, to = f8e4m3fn)`).
    pub const fn name(self) -> &'static str {
        match self {
            Narrow::F16 => "f16",
            Narrow::Bf16 => "bf16",
            Narrow::F8E4M3Fn => "f8e4m3fn",
            Narrow::F8E4M3Fnuz => "f8e4m3fnuz",
            Narrow::F8E5M2 => "f8e5m2",
            Narrow::F8E5M2Fnuz => "f8e5m2fnuz",
            Narrow::F4E2M1 => "f4e2m1",
            Narrow::I4 => "i4",
            Narrow::U4 => "u4",
            Narrow::I2 => "i2",
            Narrow::U2 => "u2",
        }
    }

    /// The format the DSL names `name`.
    pub fn from_name(name: &str) -> Option<Narrow> {
        Narrow::ALL.into_iter().find(|n| n.name() == name)
    }

    /// The first opset whose `Cast` takes the format.
    pub const fn since_opset(self) -> i64 {
        match self {
            Narrow::F16 => 1,
            Narrow::Bf16 => 13,
            Narrow::F8E4M3Fn | Narrow::F8E4M3Fnuz | Narrow::F8E5M2 | Narrow::F8E5M2Fnuz => 19,
            Narrow::I4 | Narrow::U4 => 21,
            Narrow::F4E2M1 => 23,
            // ONNX's Cast names INT2 and UINT2 from opset 25, past the opsets tinyonnx
            // emits; the emitted model writes such a cast as integer arithmetic (Mod),
            // which every opset tinyonnx emits has, so the DSL takes them with the 4-bit
            // ones.
            Narrow::I2 | Narrow::U2 => 21,
        }
    }

    /// Bits of one value.
    pub const fn bits(self) -> u32 {
        match self {
            Narrow::F16 | Narrow::Bf16 => 16,
            Narrow::F4E2M1 | Narrow::I4 | Narrow::U4 => 4,
            Narrow::I2 | Narrow::U2 => 2,
            _ => 8,
        }
    }

    /// `INT4`, `UINT4`, `INT2` or `UINT2`.
    pub const fn is_int(self) -> bool {
        matches!(self, Narrow::I4 | Narrow::U4 | Narrow::I2 | Narrow::U2)
    }

    /// An integer format's signedness and range.
    pub const fn int_range(self) -> (i64, i64) {
        match self {
            Narrow::I4 => (-8, 7),
            Narrow::I2 => (-2, 1),
            _ => (0, (1 << self.bits()) - 1),
        }
    }

    /// The float 8 formats, the only ones whose `Cast` has a `saturate` attribute.
    pub const fn is_float8(self) -> bool {
        matches!(
            self,
            Narrow::F8E4M3Fn | Narrow::F8E4M3Fnuz | Narrow::F8E5M2 | Narrow::F8E5M2Fnuz
        )
    }

    const fn float(self) -> Float {
        let (exp_bits, man_bits, bias, max, ieee, fnuz) = match self {
            Narrow::F16 => (5, 10, 15, 65504.0, true, false),
            Narrow::Bf16 => (8, 7, 127, 3.389_531_389_251_535_5e38, true, false),
            Narrow::F8E4M3Fn => (4, 3, 7, 448.0, false, false),
            Narrow::F8E4M3Fnuz => (4, 3, 8, 240.0, false, true),
            Narrow::F8E5M2 => (5, 2, 15, 57344.0, true, false),
            Narrow::F8E5M2Fnuz => (5, 2, 16, 57344.0, false, true),
            // The integers have no float layout; callers branch on `is_int` first.
            _ => (2, 1, 1, 6.0, false, false),
        };
        Float {
            exp_bits,
            man_bits,
            bias,
            max,
            ieee,
            fnuz,
        }
    }

    /// `x` rounded to the float format (the integers: [`Narrow::wrap`] of its truncation).
    pub fn round(self, x: f64, saturate: bool) -> f64 {
        if self.is_int() {
            // `as` saturates and takes NaN to 0; in range it truncates toward zero.
            return self.wrap(x as i64) as f64;
        }
        let f = self.float();
        let always_saturates = self == Narrow::F4E2M1;
        if x.is_nan() {
            return if always_saturates { -0.0 } else { f64::NAN };
        }
        // `saturate` is a float 8 attribute; 16-bit casts overflow to infinity.
        let saturate = always_saturates || (saturate && self.is_float8());
        let a = x.abs();
        let r = if a.is_infinite() {
            a
        } else {
            // The spacing of the format's values around `a`: 2^(e - man_bits) for the
            // binade 2^e of `a`, never finer than the subnormals' spacing.
            let emin = 1 - f.bias;
            let e = ((a.to_bits() >> 52) as i32 - 1023).max(emin);
            let q = pow2(e - f.man_bits as i32);
            round_ties_even(a / q) * q
        };
        let r = if r <= f.max {
            r
        } else if saturate {
            f.max
        } else if f.ieee {
            f64::INFINITY
        } else {
            return f64::NAN;
        };
        if x.is_sign_negative() && !(f.fnuz && r == 0.0) {
            -r
        } else {
            r
        }
    }

    /// An integer reduced to the format's bits: the low 4 (or 2) bits, sign-extended for
    /// `INT4` and `INT2`.
    pub const fn wrap(self, v: i64) -> i64 {
        let mask = (1 << self.bits()) - 1;
        match self {
            Narrow::I4 | Narrow::I2 => {
                let sign = 1 << (self.bits() - 1);
                ((v & mask) ^ sign) - sign
            }
            _ => v & mask,
        }
    }

    /// The value of one stored pattern (the low [`Narrow::bits`] bits of `bits`).
    pub fn decode(self, bits: u32) -> f64 {
        if self.is_int() {
            return self.wrap(i64::from(bits)) as f64;
        }
        let f = self.float();
        let man_mask = (1u32 << f.man_bits) - 1;
        let exp_mask = (1u32 << f.exp_bits) - 1;
        let man = bits & man_mask;
        let exp = (bits >> f.man_bits) & exp_mask;
        let negative = (bits >> (f.man_bits + f.exp_bits)) & 1 == 1;
        let nan_fn = self == Narrow::F8E4M3Fn && exp == exp_mask && man == man_mask;
        if (f.fnuz && negative && exp == 0 && man == 0) || nan_fn {
            return f64::NAN;
        }
        let magnitude = if f.ieee && exp == exp_mask {
            if man == 0 { f64::INFINITY } else { f64::NAN }
        } else if exp == 0 {
            f64::from(man) * pow2(1 - f.bias - f.man_bits as i32)
        } else {
            (1.0 + f64::from(man) / f64::from(1u32 << f.man_bits)) * pow2(exp as i32 - f.bias)
        };
        if negative { -magnitude } else { magnitude }
    }
}

/// 2^e for the exponents the formats reach (well inside f64's normal range).
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `v` (finite, at least 0) to the nearest integer, ties to even, without `std`: adding
/// 2^52 leaves no fraction bits, so the addition itself rounds as IEEE 754 does.
fn round_ties_even(v: f64) -> f64 {
    const TWO52: f64 = 4_503_599_627_370_496.0;
    if v >= TWO52 { v } else { (v + TWO52) - TWO52 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pattern of every 8- and 4-bit float format decodes to a value that rounds
    /// back to itself, and halfway points between neighbours go to the even one.
    #[test]
    fn round_trips_and_ties() {
        for n in Narrow::ALL
            .into_iter()
            .filter(|n| n.bits() < 16 && !n.is_int())
        {
            let mut finite = [0f64; 256];
            let mut count = 0;
            for b in 0..(1u32 << n.bits()) {
                let v = n.decode(b);
                if v.is_finite() {
                    assert_eq!(n.round(v, false), v, "{n:?} {b:#x}");
                    finite[count] = v;
                    count += 1;
                }
            }
            let vals = &mut finite[..count];
            vals.sort_by(f64::total_cmp);
            assert_eq!(vals[count - 1], n.float().max, "{n:?}");
        }
        assert_eq!(Narrow::F8E4M3Fn.round(464.0, false), 448.0);
        assert!(Narrow::F8E4M3Fn.round(480.0, false).is_nan());
        assert_eq!(Narrow::F8E4M3Fn.round(1e6, true), 448.0);
        assert_eq!(Narrow::F8E5M2.round(f64::INFINITY, false), f64::INFINITY);
        assert_eq!(Narrow::F8E5M2.round(-1e6, true), -57344.0);
        assert!(Narrow::F8E5M2Fnuz.round(f64::INFINITY, false).is_nan());
        assert_eq!(Narrow::F16.round(65519.0, true), 65504.0);
        assert_eq!(Narrow::F16.round(65520.0, true), f64::INFINITY);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1.
        assert_eq!(Narrow::F16.round(1.0 + 1.0 / 2048.0, false), 1.0);
        assert_eq!(Narrow::F16.round(2f64.powi(-25), false), 0.0);
        assert_eq!(Narrow::F16.round(2f64.powi(-24), false), 2f64.powi(-24));
        assert_eq!(Narrow::F4E2M1.round(2.5, false), 2.0);
        assert_eq!(Narrow::F4E2M1.round(-3.5, false), -4.0);
        assert_eq!(Narrow::F4E2M1.round(1e9, false), 6.0);
        assert_eq!(Narrow::I4.round(-9.0, true), 7.0);
        assert_eq!(Narrow::I4.round(8.7, true), -8.0);
        assert_eq!(Narrow::U4.round(-1.0, true), 15.0);
        assert_eq!(Narrow::I2.round(2.0, true), -2.0);
        assert_eq!(Narrow::I2.round(-3.9, true), 1.0);
        assert_eq!(Narrow::U2.round(-1.0, true), 3.0);
        assert_eq!(Narrow::U2.decode(0b110), 2.0);
        assert_eq!(Narrow::I2.decode(0b11), -1.0);
        assert_eq!(Narrow::Bf16.decode(0x3f80), 1.0);
        assert_eq!(Narrow::F16.decode(0x7bff), 65504.0);
    }
}
