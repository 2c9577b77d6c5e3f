//! Branch-free single-precision `exp`, `sigmoid` and `tanh` that the compiler can
//! vectorize (libm's are scalar calls with branches, which dominated the LSTM). `exp`:
//! range reduction `x = n ln2 + r` with `|r| <= ln2 / 2`, a degree-7 polynomial for
//! `e^r` (the Cephes `expf` coefficients) and the exponent set from bits. `tanh` and
//! `sigmoid`: one rational function. Accuracy against libm is pinned by the tests
//! below.

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
    exp_clamped(x.clamp(-87.3, 88.3))
}

/// [`exp`] of an `x` that is at most 0 or NaN (a softmax's values less their maximum):
/// the same result without the upper clamp, whose compare is four instructions on a
/// Cortex-M4F.
#[inline(always)]
pub fn exp_nonpositive(x: f32) -> f32 {
    exp_clamped(if gt(-87.3, x) { -87.3 } else { x })
}

/// `tanh(x) ~ x P(x^2) / Q(x^2)` on `[-9, 9]` (where `tanh` is 1 in f32): `P` and `Q`
/// from low degree up. The coefficients are a fit made here (relative error of
/// `tanh(x) / x` minimized on `[0, 9]` by least squares with Lawson reweighting;
/// `xtask/fit/tanh.py`).
const TANH_P: [f32; 6] = [
    1.0,
    0.129_224_64,
    2.924_094_4e-3,
    9.295_069_5e-6,
    -1.285_318_5e-8,
    1.841_636_9e-11,
];
const TANH_Q: [f32; 4] = [1.0, 0.462_557_64, 2.377_720_4e-2, 2.285_419_9e-4];

/// The polynomial functions, written once with their multiply-adds as `$fma` (`$fused`
/// saying whether it rounds once): the boards' forms below, and in the tests the fused
/// form on the host too (through `libm::fmaf`). A macro, not a generic: a form generic
/// over the rounding compiled differently on the Arm boards (the Cortex-M33's LSTM took
/// 4 % more instructions).
macro_rules! polynomials {
    ($exp_clamped:ident, $odd_rational:ident, $fma:path, $fused:expr) => {
        /// [`exp`] of an `x` in `[-87.3, 88.3]` or NaN.
        #[inline(always)]
        fn $exp_clamped(x: f32) -> f32 {
            let t = x * LOG2E + ROUND;
            let n = t - ROUND;
            let bits = t.to_bits() as i32 - ROUND.to_bits() as i32;
            let r = x - n * LN2_HI - n * LN2_LO;
            // The polynomial in pairs of terms (Estrin's scheme), not Horner's: on a
            // Cortex-M each Horner step first copies its coefficient into the accumulator,
            // here only each pair's low one is (11 instructions in all where Horner's form
            // took 13).
            let r2 = r * r;
            let low = $fma(1.666_666_5e-1, r, 0.5);
            let mid = $fma(8.333_452e-3, r, 4.166_579_6e-2);
            let high = $fma(1.987_569_1e-4, r, 1.398_2e-3);
            let p = $fma($fma(high, r2, mid), r2, low);
            let e = $fma(p, r2, r) + 1.0;
            // 2^n for n in -126..=127 (the clamp keeps it there).
            e * f32::from_bits(((bits + 127) as u32) << 23)
        }

        /// `tanh`'s `x P(x^2) / Q(x^2)` on `x` clamped to `[-lim, lim]`. The powers of
        /// `x^2` first and then the sums: each term is one multiply-accumulate into the
        /// running sum (on a Cortex-M, Horner's form also has to copy each coefficient
        /// into the accumulator). Comparisons leave NaN as it is. A function of its own
        /// though `tanh` is its one caller: written inline there, the same arithmetic
        /// compiled to 1.3 % more instructions in the Cortex-M4F's LSTM.
        #[inline(always)]
        fn $odd_rational(x: f32, lim: f32, p: &[f32; 6], q: &[f32; 4]) -> f32 {
            let x = if $fused {
                // Rounded once a term, the quotient at the clamp is 1 - 6e-8, not the 1 of
                // the unfused sums; a large input's `tanh` must be exactly 1
                // (Atanh(Tanh(inf)) is inf, Gelu(-inf) NaN, on the host and in ONNX
                // Runtime). So beyond the clamp the value itself, in the branches the
                // clamp takes on RISC-V anyway.
                if x >= lim {
                    return 1.0;
                } else if x <= -lim {
                    return -1.0;
                }
                x
            } else {
                clamp_sym(x, lim)
            };
            let z = x * x;
            let z2 = z * z;
            let z3 = z2 * z;
            let z4 = z2 * z2;
            let z5 = z4 * z;
            let num = $fma(p[1], z, p[0]);
            let num = $fma(
                p[5],
                z5,
                $fma(p[4], z4, $fma(p[3], z3, $fma(p[2], z2, num))),
            );
            let den = $fma(q[3], z3, $fma(q[2], z2, $fma(q[1], z, q[0])));
            x * num / den
        }
    };
}

polynomials!(exp_clamped, odd_rational, mul_add, FUSED);

/// Whether [`mul_add`] rounds once.
const FUSED: bool = cfg!(all(feature = "fma-rvf", target_arch = "riscv32"));

/// `a * b + c` as the polynomials above (and the recurrent cells' short dot products)
/// sum their terms: rounded once on RISC-V F with the `fma-rvf` feature (`FMADD.S`, one
/// instruction for two; the results the feature opts in to), a product and a sum
/// elsewhere (which the Arm FPUs issue as one `VMLA`, rounding both).
#[inline(always)]
pub(crate) fn mul_add(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(all(feature = "fma-rvf", target_arch = "riscv32"))]
    return super::arch::riscv32::fmadd(a, b, c);
    #[cfg(not(all(feature = "fma-rvf", target_arch = "riscv32")))]
    {
        a * b + c
    }
}

/// `t` clamped to `[0, 1]`, NaN left as it is (HardSigmoid, HardSwish). On the Arm cores
/// with an FPU `clamp`: two selects in a row that the Cortex-M4F predicates with `IT`,
/// where an `if .. else if` chain took a branch a value in a loop (MathZoo's
/// HardSigmoid: 15 instructions a value, not 17; MathZoo -0.18 % and 12 B). Elsewhere
/// the chain: the RISC-V cores branch either way (there `clamp` cost MathZoo 0.6 % on
/// the riscv32f), and without an FPU each compare is a library call the chain skips
/// below 0.
#[inline(always)]
#[allow(clippy::manual_clamp)] // the chain on purpose: see above
pub fn unit_clamp(t: f32) -> f32 {
    if cfg!(all(target_arch = "arm", not(tinyonnx_soft_float))) {
        t.clamp(0.0, 1.0)
    } else if t < 0.0 {
        0.0
    } else if t > 1.0 {
        1.0
    } else {
        t
    }
}

/// `1 / (1 + e^-x)`, as `1/2 + tanh(x / 2) / 2`: no exponent bits, one division,
/// absolute error about 2e-7. Below about -16 the result is a multiple of 3e-8 rather
/// than the tiny value itself (as ONNX Runtime's rational logistic). Sharing `tanh`'s
/// coefficients keeps an LSTM cell's five activations in the registers of a Cortex-M
/// (a second set for the sigmoid cost reloads from memory every cell).
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    mul_add(0.5, tanh(0.5 * x), 0.5)
}

/// `tanh(x)`: one rational function and a clamp, no branch else, so the LSTM's five
/// gate activations a cell stay cheap on a Cortex-M. The tests below pin its f32 error:
/// absolute 4.5e-7, relative 4e-7 below 0.625 in magnitude, `|tanh| <= 1 + 3e-7`.
/// On the cores without an FPU one function for every caller: there each of its 15
/// operations is a call of some 40 instructions, so a copy inlined per call site (the
/// RNN's `Tanh` and `Sigmoid`, each unrolled) cost about 1 KB of flash and saved a few
/// instructions a value.
#[cfg_attr(not(tinyonnx_soft_float), inline(always))]
#[cfg_attr(tinyonnx_soft_float, inline(never))]
pub fn tanh(x: f32) -> f32 {
    odd_rational(x, 9.0, &TANH_P, &TANH_Q)
}

/// Square root, correctly rounded: the FPU's instruction on the Cortex-M cores that
/// have one (`fma-vfp4`) and on RISC-V with the F extension, `libm::sqrtf` elsewhere
/// (its software version, with its table, is about 500 bytes of flash).
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
    return super::arch::arm::tinyonnx_sqrt_vfp(x);
    #[cfg(all(target_arch = "riscv32", tinyonnx_riscv_f))]
    return super::arch::riscv32::sqrt(x);
    #[cfg(not(any(
        all(feature = "fma-vfp4", target_arch = "arm"),
        all(target_arch = "riscv32", tinyonnx_riscv_f)
    )))]
    libm::sqrtf(x)
}

/// `max(x, 0)` that keeps NaN (ONNX Runtime's Relu; `f32::max` would give 0): the
/// one Relu of the unary kernel and of every fused epilogue.
#[inline(always)]
pub fn relu(x: f32) -> f32 {
    if cfg!(tinyonnx_soft_float) {
        relu_bits(x)
    } else if x < 0.0 {
        0.0
    } else {
        x
    }
}

/// [`relu`] on the bits, for cores without an FPU, where the float compare is a library
/// call: below zero is the sign set, neither -0 (`0x8000_0000`) nor a NaN (above -inf's
/// `0xff80_0000`).
#[inline(always)]
pub(crate) fn relu_bits(x: f32) -> f32 {
    let b = x.to_bits();
    if b > 0x8000_0000 && b <= 0xff80_0000 {
        0.0
    } else {
        x
    }
}

/// `v` clamped to `[-bound, bound]`, NaN kept: `tanh`'s range and a recurrent node's
/// `clip`. Not `f32::clamp`, which panics on a negative or NaN bound (the checker
/// refuses those, as ONNX Runtime does, but a kernel called directly need not) and whose
/// check of its bounds was a comparison and a panic path in each inlined copy. On the
/// bits where float compares are library calls ([`COMPARE_ON_BITS`]). The lower bound
/// is tested first: the other order took 1.3 % more instructions in the Cortex-M4F's
/// LSTM (its `tanh`) and 944 B more flash in its RNN zoo.
#[inline(always)]
pub fn clamp_sym(v: f32, bound: f32) -> f32 {
    if COMPARE_ON_BITS {
        clamp_bits(v, bound)
    } else if v < -bound {
        -bound
    } else if v > bound {
        bound
    } else {
        v
    }
}

/// [`clamp_sym`] on the bits, NaN kept, for a `bound` of `+0` to
/// infinity (whose bits order as their values): a magnitude above the bound's, and not
/// a NaN's, becomes the bound with `v`'s sign. Where [`COMPARE_ON_BITS`], instead of two
/// library compares per clamp (`tanh`'s range, a recurrent node's `clip`). Out of line
/// there: a GRU's cells clamp three values each, and inlined at every use the RNN zoo
/// took 128 B more flash for 0.4 % fewer instructions.
#[cfg_attr(tinyonnx_soft_float, inline(never))]
#[cfg_attr(not(tinyonnx_soft_float), inline(always))]
pub(crate) fn clamp_bits(v: f32, bound: f32) -> f32 {
    let (bits, limit) = (v.to_bits(), bound.to_bits());
    let magnitude = bits & 0x7fff_ffff;
    if magnitude > limit && magnitude <= 0x7f80_0000 {
        f32::from_bits(limit | (bits & 0x8000_0000))
    } else {
        v
    }
}

/// Whether [`gt`] and the shared MaxPool compare on the bits: on the RISC-V cores without
/// an FPU, where a float compare is a library routine and these are what keeps two of
/// them linked (the CIFAR CNN's flash 152 B less). On the Cortex-M3 the compares inline
/// took more flash than the calls (the digits pipeline +232 B), and where every compare
/// is a few integer instructions LLVM unrolled the other pooling loops (+2.2 KB).
pub(crate) const COMPARE_ON_BITS: bool = cfg!(all(tinyonnx_soft_float, target_arch = "riscv32"));

/// `a > b`, on the bits where [`COMPARE_ON_BITS`].
#[inline(always)]
pub fn gt(a: f32, b: f32) -> bool {
    if COMPARE_ON_BITS {
        gt_bits(a, b)
    } else {
        a > b
    }
}

/// [`gt`] on the bits: neither NaN, not both zeros (-0 equals +0), and `a` after `b`
/// in the integer order of [`ordered`].
#[inline(always)]
fn gt_bits(a: f32, b: f32) -> bool {
    let (x, y) = (a.to_bits(), b.to_bits());
    !is_nan_bits(a) && !is_nan_bits(b) && (x | y) << 1 != 0 && ordered(x) > ordered(y)
}

/// NaN from the bits: an exponent of all ones and a fraction not zero (no float compare,
/// a library call on the cores without an FPU).
#[inline(always)]
pub(crate) fn is_nan_bits(x: f32) -> bool {
    x.to_bits() & 0x7fff_ffff > 0x7f80_0000
}

/// A number's bits as an integer in the numbers' order: a magnitude `m` with the sign
/// set becomes `-1 - m` (its bits below the sign flipped), so that -0 comes just before
/// +0 and the larger magnitude first among negatives.
#[inline(always)]
fn ordered(bits: u32) -> i32 {
    let x = bits as i32;
    x ^ ((x >> 31) & i32::MAX)
}

/// `max(m, v)` that propagates NaN and keeps it: the max of MaxPool's windows (the ONNX
/// reference's max; ONNX Runtime's MaxPool gives NaN or not depending on where it is in
/// the window).
#[inline(always)]
pub fn max_nan(m: f32, v: f32) -> f32 {
    // On an Armv7E-M FPU (Cortex-M4F): one compare for the ordered cases, and `m + v`
    // (NaN) for the unordered one. LLVM branches to that rare case rather than
    // comparing `v` with itself every time, and keeps a 2x2 MaxPool's channel rolled
    // (DigitsConv's flash 9,156 -> 7,996 B, its instructions +0.7 %, Cnn's -0.8 %).
    // FPv5 (Cortex-M33) selects without branches or IT blocks (`VSEL`): the portable
    // form is faster there.
    #[cfg(all(feature = "fma-vfp4", target_arch = "arm", not(tinyonnx_fpv5)))]
    return if v > m {
        v
    } else if v <= m {
        m
    } else {
        m + v
    };
    #[allow(unreachable_code)]
    if v > m || v.is_nan() { v } else { m }
}

/// [`max_nan`] on the bits, for the shared MaxPool where [`COMPARE_ON_BITS`].
#[cfg(any(target_os = "none", test))]
#[inline(always)]
pub(crate) fn max_nan_bits(m: f32, v: f32) -> f32 {
    if is_nan_bits(v) || gt_bits(v, m) {
        v
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// As `f32::clamp` to `[-bound, bound]` where that is defined (NaN stays NaN),
    /// and no panic where it is not.
    #[test]
    fn clamp_sym_is_clamp_without_its_panic() {
        for v in [
            -3.0f32,
            -0.5,
            -0.0,
            0.0,
            0.25,
            0.5,
            7.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ] {
            for bound in [0.5f32, 1.0, f32::INFINITY] {
                let want = v.clamp(-bound, bound);
                assert_eq!(clamp_sym(v, bound).to_bits(), want.to_bits(), "{v} {bound}");
                let bits = clamp_bits(v, bound);
                assert_eq!(bits.to_bits(), want.to_bits(), "on the bits: {v} {bound}");
            }
        }
        assert!(clamp_sym(f32::NAN, 0.5).is_nan());
        assert!(clamp_bits(-f32::NAN, 0.5).is_nan());
        // Bounds the checker refuses: some value, no panic.
        let _ = (clamp_sym(2.0, -1.0), clamp_sym(2.0, f32::NAN));
    }

    /// A sweep of `count` points over `[lo, hi]`.
    fn sweep(lo: f32, hi: f32, count: usize) -> impl Iterator<Item = f32> {
        (0..=count).map(move |i| lo + (hi - lo) * i as f32 / count as f32)
    }

    /// The clamp of HardSigmoid and HardSwish, against `max(0, min(1, t))` as ONNX
    /// writes it: NaN stays NaN, the infinities and the bounds land on 0 and 1.
    #[test]
    #[allow(clippy::manual_clamp)] // the reference is the formula as ONNX writes it
    fn unit_clamp_is_min_then_max() {
        assert!(unit_clamp(f32::NAN).is_nan());
        let cases = [
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            0.25,
            1.0,
            1.0 + f32::EPSILON,
            7.0,
        ];
        for t in cases.into_iter().chain(sweep(-3.0, 3.0, 600)) {
            assert_eq!(unit_clamp(t), t.min(1.0).max(0.0), "{t}");
        }
        assert_eq!(unit_clamp(f32::INFINITY), 1.0);
    }

    #[test]
    fn relu_on_the_bits_is_the_compare() {
        // The bit patterns every 997 apart, and the edges: -0, the smallest negative
        // subnormal, -inf, the NaNs either side of it, +0, +inf.
        let edges = [
            0x8000_0000u32,
            0x8000_0001,
            0xff80_0000,
            0xff80_0001,
            0xffc0_0000,
            0x7f80_0000,
            0x7fc0_0000,
            0,
        ];
        for b in (0..=u32::MAX).step_by(997).chain(edges) {
            let x = f32::from_bits(b);
            let want = if x < 0.0 { 0.0f32 } else { x };
            assert_eq!(relu_bits(x).to_bits(), want.to_bits(), "{b:#010x}");
        }
    }

    /// The bit patterns every `step` apart and the edges: zeros of both signs, the
    /// smallest subnormals, the largest numbers, the infinities, the NaNs next to them.
    fn bit_patterns(step: usize) -> impl Iterator<Item = f32> {
        let edges = [
            0u32,
            0x8000_0000,
            1,
            0x8000_0001,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7f80_0001,
            0xff80_0001,
            0x7fc0_0000,
            0xffff_ffff,
        ];
        (0..=u32::MAX)
            .step_by(step)
            .chain(edges)
            .map(f32::from_bits)
    }

    #[test]
    fn compares_on_the_bits_are_the_float_compares() {
        // Pairs from two sweeps of different steps, so that near and far values, equal
        // magnitudes of both signs and every NaN case meet.
        let a: std::vec::Vec<f32> = bit_patterns(9_973_331).collect();
        let b: std::vec::Vec<f32> = bit_patterns(7_368_787).chain(a.iter().copied()).collect();
        for &x in &a {
            for &y in &b {
                let (xb, yb) = (x.to_bits(), y.to_bits());
                assert_eq!(gt_bits(x, y), x > y, "{xb:#010x} > {yb:#010x}");
                assert_eq!(is_nan_bits(x), x.is_nan(), "{xb:#010x}");
                let want = if y > x || y.is_nan() { y } else { x };
                let got = max_nan_bits(x, y);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "max_nan({xb:#010x}, {yb:#010x})"
                );
            }
        }
    }

    polynomials!(exp_clamped_fused, odd_rational_fused, libm::fmaf, true);

    fn exp_fused(x: f32) -> f32 {
        exp_clamped_fused(x.clamp(-87.3, 88.3))
    }

    fn tanh_fused(x: f32) -> f32 {
        odd_rational_fused(x, 9.0, &TANH_P, &TANH_Q)
    }

    fn sigmoid_fused(x: f32) -> f32 {
        libm::fmaf(0.5, tanh_fused(0.5 * x), 0.5)
    }

    /// One function of each form: `exp`, `tanh`, `sigmoid`.
    type Form = [fn(f32) -> f32; 3];

    /// The functions as this build compiles them, and (as RISC-V F with `fma-rvf` does)
    /// with each multiply-add rounded once.
    const FORMS: [(&str, Form); 2] = [
        ("built", [exp, tanh, sigmoid]),
        ("fused", [exp_fused, tanh_fused, sigmoid_fused]),
    ];

    #[test]
    fn exp_matches_libm() {
        for (name, [exp, _, _]) in FORMS {
            let mut worst = 0.0f32;
            for x in sweep(-87.0, 88.0, 400_000) {
                let want = libm::expf(x);
                worst = worst.max(((exp(x) - want) / want).abs());
            }
            std::eprintln!("exp ({name}): worst relative error {worst:e}");
            assert!(worst < 3e-7, "{name}: relative error {worst}");
            assert_eq!(exp(0.0), 1.0, "{name}");
            assert!(exp(f32::NAN).is_nan(), "{name}");
            assert!(exp(-1000.0) < 2e-38 && exp(-1000.0) >= 0.0, "{name}");
            assert!(exp(1000.0).is_finite() && exp(1000.0) > 1e38, "{name}");
        }
    }

    #[test]
    fn exp_nonpositive_is_exp_below_zero() {
        let edges = [
            0.0,
            -0.0,
            -87.3,
            -87.30001,
            -1000.0,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        for x in sweep(-100.0, 0.0, 200_000).chain(edges) {
            let (got, want) = (exp_nonpositive(x), exp(x));
            assert!(
                got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                "{x}"
            );
        }
    }

    #[test]
    fn sigmoid_and_tanh_match_libm() {
        for (name, [_, tanh, sigmoid]) in FORMS {
            let (mut ws, mut wt, mut wt_rel, mut top) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
            for x in sweep(-30.0, 30.0, 600_000) {
                ws = ws.max((sigmoid(x) - 1.0 / (1.0 + libm::expf(-x))).abs());
                let want = libm::tanhf(x);
                wt = wt.max((tanh(x) - want).abs());
                top = top.max(tanh(x).abs());
                if x.abs() < 0.625 && want != 0.0 {
                    wt_rel = wt_rel.max(((tanh(x) - want) / want).abs());
                }
            }
            std::eprintln!(
                "{name} sigmoid: {ws:e} absolute; tanh: {wt:e} absolute, {wt_rel:e} relative \
                 near 0, largest {top}"
            );
            assert!(ws < 3e-7, "{name}: sigmoid absolute error {ws}");
            assert!(wt < 4.5e-7, "{name}: tanh absolute error {wt}");
            // Near zero the approximation keeps relative accuracy too.
            assert!(
                wt_rel < 4e-7,
                "{name}: tanh relative error near 0: {wt_rel}"
            );
            assert!(top <= 1.000_000_3, "{name}: tanh reaches {top}");
            assert_eq!(tanh(1e-30), 1e-30, "{name}");
            // Exactly 1 at the clamp and beyond, as Atanh(Tanh(inf)) and Gelu(-inf) need.
            for x in [9.0, 100.0, f32::INFINITY] {
                assert_eq!(tanh(x), 1.0, "{name}: tanh({x})");
                assert_eq!(tanh(-x), -1.0, "{name}: tanh(-{x})");
            }
            assert_eq!(sigmoid(f32::NEG_INFINITY), 0.0, "{name}");
            assert_eq!(sigmoid(f32::INFINITY), 1.0, "{name}");
            assert_eq!(sigmoid(0.0), 0.5, "{name}");
            assert!(
                tanh(f32::NAN).is_nan() && sigmoid(f32::NAN).is_nan(),
                "{name}"
            );
        }
    }
}
