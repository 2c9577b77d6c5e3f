//! The parameters of an 8-bit `QLinearAdd` (`y = round(a * ra + (b * rb + fixed))`, each
//! multiply-add rounded once to f32, as ONNX Runtime's x86-64 kernel computes it) as
//! integers in units of one power of two, for the cores without a floating-point unit:
//! they compute the same roundings exactly in 64-bit integers. The compiler forms a
//! `QLinearAdd` only when [`units`] exists for its parameters, and the kernels take the
//! units from the same function.

/// `ra`, `rb` and `fixed` as integers times `2^exp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    /// `ra / 2^exp`.
    pub a: i64,
    /// `rb / 2^exp`.
    pub b: i64,
    /// `fixed / 2^exp`.
    pub fixed: i64,
    /// The power of two of one unit.
    pub exp: i32,
}

/// `(significand, exponent)` of a finite `v`, the significand odd (or 0).
const fn split(v: f32) -> Option<(i64, i32)> {
    let bits = v.to_bits();
    let (biased, frac) = (((bits >> 23) & 0xFF) as i32, (bits & 0x7F_FFFF) as i64);
    if biased == 0xFF {
        return None;
    }
    let (mut m, mut e) = if biased == 0 {
        (frac, -149)
    } else {
        (frac | 0x80_0000, biased - 150)
    };
    if m == 0 {
        return Some((0, 0));
    }
    while m & 1 == 0 {
        m >>= 1;
        e += 1;
    }
    Some((if bits >> 31 == 1 { -m } else { m }, e))
}

/// `m * 2^shift`, when it stays below `2^61` in magnitude.
const fn scaled(m: i64, shift: i32) -> Option<i64> {
    if m == 0 {
        return Some(0);
    }
    let bits = 64 - m.unsigned_abs().leading_zeros() as i32;
    if shift < 0 || bits + shift > 61 {
        return None;
    }
    Some(m << shift)
}

/// The units of finite `ra`, `rb` and `fixed`, when every intermediate of an 8-bit sum
/// (`|a|, |b| <= 255`) fits: `255 * (|A| + |B|) + |F| < 2^62`.
pub const fn units(ra: f32, rb: f32, fixed: f32) -> Option<Units> {
    let (Some((ma, ea)), Some((mb, eb)), Some((mf, ef))) = (split(ra), split(rb), split(fixed))
    else {
        return None;
    };
    // The smallest exponent of a nonzero part.
    let mut exp = i32::MAX;
    if ma != 0 && ea < exp {
        exp = ea;
    }
    if mb != 0 && eb < exp {
        exp = eb;
    }
    if mf != 0 && ef < exp {
        exp = ef;
    }
    if exp == i32::MAX {
        exp = 0;
    }
    let (Some(a), Some(b), Some(f)) = (
        scaled(ma, ea - exp),
        scaled(mb, eb - exp),
        scaled(mf, ef - exp),
    ) else {
        return None;
    };
    // Each part is below 2^61, so `|A| + |B|` fits; the rest is checked.
    let Some(ab) = (a.unsigned_abs() + b.unsigned_abs()).checked_mul(255) else {
        return None;
    };
    match ab.checked_add(f.unsigned_abs()) {
        Some(total) if total < 1 << 62 => {}
        _ => return None,
    }
    Some(Units {
        a,
        b,
        fixed: f,
        exp,
    })
}

/// `v * 2^exp` rounded to f32 (to nearest, ties to even), in units of `2^exp`: 24
/// significant bits, or fewer where f32 has no smaller step than `2^-149`.
pub const fn round_f32(v: i64, exp: i32) -> i64 {
    let mag = v.unsigned_abs();
    let bits = 64 - mag.leading_zeros() as i32;
    let mut step = exp + bits - 24;
    if step < -149 {
        step = -149;
    }
    if step <= exp {
        return v;
    }
    let q = shift_even(mag, step - exp) << (step - exp);
    if v < 0 { -(q as i64) } else { q as i64 }
}

/// `v * 2^exp` rounded to an integer, ties to even.
pub const fn round_int(v: i64, exp: i32) -> i64 {
    if exp >= 0 {
        return v << exp;
    }
    let q = shift_even(v.unsigned_abs(), -exp) as i64;
    if v < 0 { -q } else { q }
}

/// `m / 2^s` rounded to nearest, ties to even (`s >= 1`; 0 beyond the width).
const fn shift_even(m: u64, s: i32) -> u64 {
    if s >= 64 {
        return 0;
    }
    let (q, rem) = (m >> s, m & ((1u64 << s) - 1));
    let half = 1u64 << (s - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// One sum: `round(round(a * ra + round(b * rb + fixed)))` exactly, in integers.
pub const fn sum(a: i32, b: i32, u: &Units) -> i64 {
    let t1 = round_f32(b as i64 * u.b + u.fixed, u.exp);
    let t = round_f32(a as i64 * u.a + t1, u.exp);
    round_int(t, u.exp)
}
