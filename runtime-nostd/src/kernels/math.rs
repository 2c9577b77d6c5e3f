//! Branch-free single-precision `exp`, `sigmoid` and `tanh` that the compiler can
//! vectorize (libm's are scalar calls with branches, which dominated the LSTM). Range
//! reduction `x = n ln2 + r` with `|r| <= ln2 / 2`, a degree-7 polynomial for `e^r`
//! (the Cephes `expf` coefficients) and the exponent set from bits. Accuracy against
//! libm is pinned by the tests below: relative 3e-7 for `exp`, absolute 3e-7 for
//! `sigmoid` and `tanh`.

const LOG2E: f32 = core::f32::consts::LOG2_E;
/// ln 2 split in two so `n * LN2_HI` is exact for the `n` that occur.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// 1.5 * 2^23: adding it rounds a float of magnitude below 2^22 to an integer.
const ROUND: f32 = 12_582_912.0;

/// `e^x`. Inputs below -87.3 give about 1.2e-38 instead of a subnormal; above 88.3 the
/// result saturates at about 2e38 (f32 overflows at 88.72); NaN gives NaN.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.3, 88.3);
    let t = x * LOG2E + ROUND;
    let n = t - ROUND;
    let bits = t.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = ((((1.987_569_1e-4 * r + 1.398_2e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5;
    let e = p * r * r + r + 1.0;
    // 2^n for n in -126..=127 (the clamp keeps it there).
    e * f32::from_bits(((bits + 127) as u32) << 23)
}

/// `1 / (1 + e^-x)`.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// `tanh(x)`: an odd polynomial below 0.625 in magnitude (the Cephes `tanhf`
/// coefficients), `1 - 2 / (e^2|x| + 1)` with the sign of `x` above.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let small =
        ((((-5.704_988_7e-3 * z + 2.063_909e-2) * z - 5.373_971_6e-2) * z + 1.333_144_2e-1) * z
            - 3.333_328e-1)
            * z
            * x
            + x;
    let large = 1.0 - 2.0 / (exp(2.0 * a.min(9.1)) + 1.0);
    let large = if x < 0.0 { -large } else { large };
    // NaN fails both comparisons and comes back as itself, as in ONNX Runtime.
    if a < 0.625 {
        small
    } else if a >= 0.625 {
        large
    } else {
        x
    }
}

/// `max(x, 0)` that keeps NaN (ONNX Runtime's Relu; `f32::max` would give 0): the
/// one Relu of the unary kernel and of every fused epilogue.
#[inline(always)]
pub fn relu(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// `max(m, v)` that propagates NaN and keeps it: the max of MaxPool's windows (the ONNX
/// reference's max; ONNX Runtime's MaxPool gives NaN or not depending on where it is in
/// the window).
#[inline(always)]
pub fn max_nan(m: f32, v: f32) -> f32 {
    if v > m || v.is_nan() { v } else { m }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// A sweep of `count` points over `[lo, hi]`.
    fn sweep(lo: f32, hi: f32, count: usize) -> impl Iterator<Item = f32> {
        (0..=count).map(move |i| lo + (hi - lo) * i as f32 / count as f32)
    }

    #[test]
    fn exp_matches_libm() {
        let mut worst = 0.0f32;
        for x in sweep(-87.0, 88.0, 400_000) {
            let want = libm::expf(x);
            worst = worst.max(((exp(x) - want) / want).abs());
        }
        std::eprintln!("exp: worst relative error {worst:e}");
        assert!(worst < 3e-7, "relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(f32::NAN).is_nan());
        assert!(exp(-1000.0) < 2e-38 && exp(-1000.0) >= 0.0);
        assert!(exp(1000.0).is_finite() && exp(1000.0) > 1e38);
    }

    #[test]
    fn sigmoid_and_tanh_match_libm() {
        let (mut ws, mut wt, mut wt_rel) = (0.0f32, 0.0f32, 0.0f32);
        for x in sweep(-30.0, 30.0, 600_000) {
            ws = ws.max((sigmoid(x) - 1.0 / (1.0 + libm::expf(-x))).abs());
            let want = libm::tanhf(x);
            wt = wt.max((tanh(x) - want).abs());
            if x.abs() < 0.625 && want != 0.0 {
                wt_rel = wt_rel.max(((tanh(x) - want) / want).abs());
            }
        }
        std::eprintln!(
            "sigmoid: {ws:e} absolute; tanh: {wt:e} absolute, {wt_rel:e} relative near 0"
        );
        assert!(ws < 3e-7, "sigmoid absolute error {ws}");
        assert!(wt < 3e-7, "tanh absolute error {wt}");
        // Near zero the polynomial keeps relative accuracy too.
        assert!(wt_rel < 3e-7, "tanh relative error near 0: {wt_rel}");
        assert_eq!(tanh(1e-30), 1e-30);
        assert_eq!(tanh(100.0), 1.0);
        assert_eq!(tanh(-100.0), -1.0);
    }
}
