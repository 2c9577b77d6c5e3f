//! Linear quantization: `QuantizeLinear`, `DequantizeLinear`, `DynamicQuantizeLinear`,
//! and the integer products `MatMulInteger` and `QLinearMatMul` (int32 accumulators).
//! Rounding and saturation follow ONNX Runtime's x86-64 kernels: the scaled value is
//! clamped to the range left by the zero point (NaN to its low end), then rounded to
//! nearest, ties to even.

use tinyonnx_layout::q8;

// The int8 convolutions' geometry, shared with the f32 ones (generated code names it
// here).
pub use super::conv::ConvGeometry;

/// An integer type values are quantized to: `i8`, `u8`, `i16` or `u16`, and no other
/// (sealed), so that the kernels may take a one-byte `Quant` for the byte it is.
pub trait Quant: Copy + sealed::Sealed {
    /// The smallest value.
    const LOW: i32;
    /// The largest value.
    const HIGH: i32;
    /// The value as an i32.
    fn widen(self) -> i32;
    /// `v`, which lies in `LOW..=HIGH`.
    fn narrow(v: i32) -> Self;
    /// A signed byte (`i8`): the DSP routines take it as it is.
    const SIGNED_BYTE: bool = Self::LOW == -128 && Self::HIGH == 127;
    /// An unsigned byte (`u8`).
    const UNSIGNED_BYTE: bool = Self::LOW == 0 && Self::HIGH == 255;
}

/// The seal of [`Quant`]: a trait outside crates cannot name.
mod sealed {
    pub trait Sealed {}
}

macro_rules! quant {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Quant for $t {
            const LOW: i32 = <$t>::MIN as i32;
            const HIGH: i32 = <$t>::MAX as i32;
            #[inline(always)]
            fn widen(self) -> i32 {
                self as i32
            }
            #[inline(always)]
            fn narrow(v: i32) -> Self {
                v as $t
            }
        }
    )*};
}
quant!(i8, u8, i16, u16);

/// `v * 1` rounded and offset into `Q` by `zp`: clamp to `[LOW - zp, HIGH - zp]` (NaN
/// to the low end), round half to even, add `zp`.
#[inline(always)]
fn requantize<Q: Quant>(v: f32, zp: i32) -> Q {
    // On the cores without an FPU, where each float compare is a library call: NaN
    // found from its bits, and every other value through `requantize_finite`, exact
    // for it.
    if cfg!(tinyonnx_soft_float) {
        return if super::math::is_nan_bits(v) {
            Q::narrow(Q::LOW)
        } else {
            requantize_finite(v, zp)
        };
    }
    let (lo, hi) = ((Q::LOW - zp) as f32, (Q::HIGH - zp) as f32);
    let v = if v > lo { v } else { lo };
    let v = if v < hi { v } else { hi };
    Q::narrow(round_even(v) + zp)
}

/// [`requantize`] of a value that is not NaN (a sum times a finite multiplier), clamped
/// after rounding, in integers: the same result with two fewer float compares, which on
/// the Arm FPUs each take a compare, a flags transfer and a conditional move. Exact for
/// every value but NaN: `round_even`'s sum is right for `|v| < 2^22`, and beyond it the
/// bits of a positive float grow with its value, so the difference stays beyond the
/// clamp on the right side (at most 65,535 from 0); a sum below 0 (`v <= -1.5 * 2^23`)
/// has its sign bit set, a negative i32 that the saturating addition keeps below.
///
/// Used on the Arm FPUs ([`CLAMP_AFTER`]) and by [`requantize`] on the cores without an
/// FPU (there each float compare is a library call): on RISC-V with the F extension the float clamp is cheaper
/// (`fmin`/`fmax`; measured 21 % more instructions on the int8 CNN otherwise), on x86-64
/// the VNNI path's time is elsewhere.
#[inline(always)]
fn requantize_finite<Q: Quant>(v: f32, zp: i32) -> Q {
    let r = ((v + MAGIC).to_bits() as i32).saturating_add(magic_offset(zp));
    Q::narrow(saturate::<Q>(r))
}

/// `1.5 * 2^23`: a float whose unit is 1, so that adding it rounds to an integer (to
/// even, the default mode), which the low bits of the sum hold.
const MAGIC: f32 = 12_582_912.0;

/// The zero point `zp` minus the bits of [`MAGIC`]: added (saturating) to the bits of
/// `v + MAGIC`, the rounded `v` plus `zp` in one step; below 0 the sum stays far below
/// any clamp, at or above it nothing overflows.
#[inline(always)]
fn magic_offset(zp: i32) -> i32 {
    zp.wrapping_sub(MAGIC.to_bits() as i32)
}

/// `v.clamp(Q::LOW, Q::HIGH)`: on cores with the DSP extension one `SSAT`/`USAT` for the
/// 8- and 16-bit types, which LLVM does not select for a clamp (two compares and two
/// conditional moves an output).
#[inline(always)]
fn saturate<Q: Quant>(v: i32) -> i32 {
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    {
        let r: i32;
        // Safety: each instruction only reads and writes the named registers (and the
        // sticky Q flag, which no code here reads); the ranges match the types'.
        unsafe {
            match (Q::LOW, Q::HIGH) {
                (-128, 127) => {
                    core::arch::asm!("ssat {r}, #8, {v}", r = lateout(reg) r, v = in(reg) v, options(pure, nomem, nostack))
                }
                (0, 255) => {
                    core::arch::asm!("usat {r}, #8, {v}", r = lateout(reg) r, v = in(reg) v, options(pure, nomem, nostack))
                }
                (-32768, 32767) => {
                    core::arch::asm!("ssat {r}, #16, {v}", r = lateout(reg) r, v = in(reg) v, options(pure, nomem, nostack))
                }
                (0, 65535) => {
                    core::arch::asm!("usat {r}, #16, {v}", r = lateout(reg) r, v = in(reg) v, options(pure, nomem, nostack))
                }
                _ => r = v.clamp(Q::LOW, Q::HIGH),
            }
        }
        r
    }
    #[cfg(not(all(feature = "dsp", target_arch = "arm")))]
    v.clamp(Q::LOW, Q::HIGH)
}

/// Whether the 8-bit products requantize with [`requantize_finite`] (when their
/// multipliers are finite) on the cores with an FPU (without one, `requantize_int`).
#[cfg(not(tinyonnx_soft_float))]
const CLAMP_AFTER: bool = cfg!(target_arch = "arm");

/// `v` rounded to the nearest integer, ties to even, for `|v| < 2^22` (every clamped
/// value above: at most 65,535 from 0): adding 1.5 * 2^23 leaves a float whose unit is
/// 1, so the addition itself rounds (to even, the default mode), and the low bits of the
/// sum are the integer. A few instructions where `rintf` is a library routine.
#[inline(always)]
fn round_even(v: f32) -> i32 {
    (v + MAGIC).to_bits() as i32 - MAGIC.to_bits() as i32
}

/// The zero point of channel `c` (`zp` empty: 0; one value: per tensor).
#[inline(always)]
fn zero_at<Q: Quant>(zp: &[Q], c: usize) -> i32 {
    match zp.len() {
        0 => 0,
        1 => zp[0].widen(),
        _ => zp[c].widen(),
    }
}

/// `QuantizeLinear`: `y = saturate(round(x / scale) + zp)`, `scale` and `zp` per channel
/// when they hold `channels` values, the channel of element `i` being
/// `(i / inner) % channels`.
#[inline]
pub fn quantize<Q: Quant>(x: &[f32], y: &mut [Q], scale: &[f32], zp: &[Q], inner: usize) {
    let channels = scale.len().max(1);
    if channels == 1 {
        // Per tensor: no channel to find for each element.
        let (s, z) = (scale[0], zero_at(zp, 0));
        // A short run a loop (on the Arm FPUs its float clamps copied whole or by four
        // took 0.4-1.9 KB), a long one as the unroller leaves it (rolled, the int8
        // MLP's 784 inputs cost 1 % more instructions).
        for (o, &v) in super::run_mut(y, super::rolled_from(true)).zip(x) {
            *o = requantize(v / s, z);
        }
        return;
    }
    for (i, (o, &v)) in y.iter_mut().zip(x).enumerate() {
        let c = (i / inner.max(1)) % channels;
        *o = requantize(v / scale[c.min(scale.len() - 1)], zero_at(zp, c));
    }
}

/// `DequantizeLinear`: `y = (x - zp) * scale`, per channel as [`quantize`].
#[inline]
pub fn dequantize<Q: Copy + Into<i64>>(
    x: &[Q],
    y: &mut [f32],
    scale: &[f32],
    zp: &[Q],
    inner: usize,
) {
    let channels = scale.len().max(1);
    let per_tensor = channels == 1 && zp.len() <= 1;
    // A short run rolled on the cores without an FPU, where each value's conversion
    // and product are library calls the unroller copied (ten logits: ten copies).
    let y = super::short_run(y, cfg!(tinyonnx_soft_float));
    for (i, (o, &v)) in y.iter_mut().zip(x).enumerate() {
        let c = if per_tensor {
            0
        } else {
            (i / inner.max(1)) % channels
        };
        let z: i64 = match zp.len() {
            0 => 0,
            1 => zp[0].into(),
            _ => zp[c].into(),
        };
        // In i32 when the difference fits (every 8- and 16-bit input): a 64-bit
        // conversion is a library call on 32-bit cores; both round the same.
        let d = v.into() - z;
        let d = if d as i32 as i64 == d {
            super::signed_to_f32(d as i32)
        } else {
            d as f32
        };
        *o = d * scale[c.min(scale.len() - 1)];
    }
}

/// ONNX Runtime's `QLinearAdd` of two tensors of one shape (what it runs a QDQ `Add` as):
/// per element `t = fma(a, ra, fma(b, rb, fixed))` in f32, rounded to nearest (ties to
/// even) and saturated, as its x86-64 kernel does. The compiler forms `(ra, rb, fixed)`
/// from the constant scales and zero points (`ra = a_scale / y_scale`, `rb` likewise,
/// `fixed = y_zp - fma(ra, a_zp, rb * b_zp)`) when `tinyonnx_layout::qadd::units` holds
/// for them. The fused roundings matter: dequantizing, adding and quantizing rounds
/// four times and lands one step off on a few sums (up to 15 of the 65,536 pairs of
/// 8-bit values, depending on the scales). Arm FPUs
/// run it in assembly, RISC-V F with `FMADD.S`, other cores in exact integers.
///
/// One operand may be shorter than `y`: it repeats along `y` (a row added to every row),
/// the order of `a` and `b` kept (the arithmetic is not symmetric).
///
/// `units` are the parameters' integer form, which the generated code evaluates at
/// compile time (`tinyonnx_layout::qadd::units`, the function the compiler checked them
/// with): the cores that take them then carry neither that conversion nor a float path
/// for parameters without one (on a Cortex-M3 a library `fmaf` and its f64 emulation,
/// some 3 KB).
#[inline]
pub fn qlinear_add<Q: Quant>(
    a: &[Q],
    b: &[Q],
    y: &mut [Q],
    params: (f32, f32, f32),
    units: &tinyonnx_layout::qadd::Units,
) {
    let run = a.len().min(b.len());
    if run == 0 {
        return;
    }
    fn part<Q>(v: &[Q], k: usize, run: usize) -> &[Q] {
        if v.len() == run {
            v
        } else {
            &v[k * run..(k + 1) * run]
        }
    }
    for (k, y) in y.chunks_exact_mut(run).enumerate() {
        add_run(part(a, k, run), part(b, k, run), y, params, units);
    }
}

/// [`qlinear_add`] of operands of `y`'s length: with FMADD.S the float roundings are the
/// instruction's, the Arm FPUs' routine takes the bytes; elsewhere the same roundings in
/// 64-bit integers cost less than a library `fmaf` (a soft-float core's f64 emulation, or
/// on x86-64 a routine).
#[inline]
#[cfg_attr(
    not(all(feature = "fma-vfp4", target_arch = "arm")),
    allow(unused_variables)
)]
fn add_run<Q: Quant>(
    a: &[Q],
    b: &[Q],
    y: &mut [Q],
    params: (f32, f32, f32),
    units: &tinyonnx_layout::qadd::Units,
) {
    let n = y.len().min(a.len()).min(b.len());
    let (a, b, y) = (&a[..n], &b[..n], &mut y[..n]);
    #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
    if Q::SIGNED_BYTE || Q::UNSIGNED_BYTE {
        use super::arch::arm::{tinyonnx_qadd_s8, tinyonnx_qadd_u8};
        let (ra, rb, fixed) = params;
        let (a, b, y) = (a.as_ptr(), b.as_ptr(), y.as_mut_ptr());
        // Safety: `a`, `b` and `y` hold `n` values of one byte each (`Q` is i8 or u8,
        // as checked), so the routine reads and writes within them.
        unsafe {
            if Q::SIGNED_BYTE {
                tinyonnx_qadd_s8(a.cast(), b.cast(), y.cast(), n as u32, ra, rb, fixed);
            } else {
                tinyonnx_qadd_u8(a.cast(), b.cast(), y.cast(), n as u32, ra, rb, fixed);
            }
        }
        return;
    }
    #[cfg(all(feature = "fma-rvf", target_arch = "riscv32"))]
    add_fused(a, b, y, params);
    #[cfg(not(all(feature = "fma-rvf", target_arch = "riscv32")))]
    add_units(a, b, y, units);
}

/// [`qlinear_add`] with two fused multiply-adds in f32.
#[cfg(any(test, all(feature = "fma-rvf", target_arch = "riscv32")))]
#[inline]
pub(crate) fn add_fused<Q: Quant>(a: &[Q], b: &[Q], y: &mut [Q], (ra, rb, fixed): (f32, f32, f32)) {
    for ((o, &a), &b) in y.iter_mut().zip(a).zip(b) {
        let t = fma(a.widen() as f32, ra, fma(b.widen() as f32, rb, fixed));
        // The compiler's bound keeps |t| far below 2^22: no NaN, no overflow, and
        // `round_even` exact.
        *o = Q::narrow(saturate::<Q>(round_even(t)));
    }
}

/// [`qlinear_add`] in integers: the same roundings, exactly. The loop stays rolled on the
/// microcontrollers: each value's 64-bit arithmetic is a few dozen instructions there,
/// which unrolled copies hardly shorten (36 bytes of the digits QDQ model on the
/// Cortex-M3).
#[cfg(any(test, not(all(feature = "fma-rvf", target_arch = "riscv32"))))]
#[inline]
pub(crate) fn add_units<Q: Quant>(a: &[Q], b: &[Q], y: &mut [Q], u: &tinyonnx_layout::qadd::Units) {
    for ((o, &a), &b) in y.iter_mut().zip(a).zip(b) {
        super::rolled();
        let r = tinyonnx_layout::qadd::sum(a.widen(), b.widen(), u);
        *o = Q::narrow(r.clamp(Q::LOW as i64, Q::HIGH as i64) as i32);
    }
}

/// `x * y + z` rounded once: one instruction where the FPU has it (RISC-V F, the
/// `fma-rvf` feature), else (the host's tests) `libm`'s.
#[cfg(any(test, all(feature = "fma-rvf", target_arch = "riscv32")))]
#[inline(always)]
fn fma(x: f32, y: f32, z: f32) -> f32 {
    #[cfg(all(feature = "fma-rvf", target_arch = "riscv32"))]
    return super::arch::riscv32::fmadd(x, y, z);
    #[cfg(not(all(feature = "fma-rvf", target_arch = "riscv32")))]
    libm::fmaf(x, y, z)
}

/// `DynamicQuantizeLinear`: the range of `x` widened to hold 0, mapped onto u8; writes the
/// scale and zero point it chose.
#[inline]
pub fn dynamic_quantize(x: &[f32], y: &mut [u8], scale: &mut [f32], zp: &mut [u8]) {
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    for &v in x {
        lo = if v < lo { v } else { lo };
        hi = if v > hi { v } else { hi };
    }
    let s = (hi - lo) / 255.0;
    let z = if s == 0.0 {
        0
    } else {
        let z = -lo / s;
        libm::rintf(z.clamp(0.0, 255.0)) as u8
    };
    scale[0] = s;
    zp[0] = z;
    if s == 0.0 {
        // Every value is 0 (or the range is empty): all map to the zero point.
        y.fill(z);
        return;
    }
    quantize(x, y, &[s], &[z], 1);
}

/// The shape of an integer product: `batch` products of `[m, k] x [k, n]`, B shared
/// when `b_batched` is false.
#[derive(Debug, Clone, Copy)]
pub struct Product {
    /// Number of products.
    pub batch: usize,
    /// Rows of A.
    pub m: usize,
    /// Columns of A, rows of B.
    pub k: usize,
    /// Columns of B.
    pub n: usize,
    /// B has one matrix per product.
    pub b_batched: bool,
}

/// Columns of B one pass of [`products`] keeps sums for (in registers on a Cortex-M).
const COLS: usize = 8;

/// Every `(A - a_zp) x (B - b_zp)` dot product in i32 (wrapping, as ONNX Runtime's
/// int32 sums), handed to `write(index, column, value)`; `a_zp` per row of A or one
/// value, `b_zp` per column of B or one value, either empty for 0.
///
/// For a block of up to [`COLS`] columns, each row of A walks down B's rows once:
/// `x' = a - a_zp` is formed once per element of A and multiplied with B's raw values,
/// and B's zero point comes off at the end, `sum(x' (w - zb)) = sum(x' w) - zb sum(x')`,
/// so the inner step is one multiply-add.
#[inline]
fn products<A: Quant, B: Quant>(
    a: &[A],
    b: &[B],
    a_zp: &[A],
    b_zp: &[B],
    s: Product,
    mut write: impl FnMut(usize, usize, i32),
) {
    let Product {
        batch,
        m,
        k,
        n,
        b_batched,
    } = s;
    for p in 0..batch {
        let (ab, bb, yb) = (p * m * k, if b_batched { p * k * n } else { 0 }, p * m * n);
        let (Some(a), Some(b)) = (a.get(ab..ab + m * k), b.get(bb..bb + k * n)) else {
            return;
        };
        for j0 in (0..n).step_by(COLS) {
            let w = COLS.min(n - j0);
            for (i, row) in a.chunks_exact(k.max(1)).enumerate().take(m) {
                let za = zero_at(a_zp, i);
                let (acc, sum) = if w == COLS {
                    block::<A, B, COLS>(row, &b[j0..], n, za)
                } else {
                    let mut acc = [0i32; COLS];
                    let mut sum = 0i32;
                    for (t, &x) in row.iter().enumerate() {
                        let x = x.widen() - za;
                        sum = sum.wrapping_add(x);
                        let brow = &b[t * n + j0..t * n + j0 + w];
                        for (c, &v) in acc.iter_mut().zip(brow) {
                            *c = c.wrapping_add(x.wrapping_mul(v.widen()));
                        }
                    }
                    (acc, sum)
                };
                for (c, &v) in acc.iter().enumerate().take(w) {
                    let j = j0 + c;
                    let zb = zero_at(b_zp, j);
                    write(yb + i * n + j, j, v.wrapping_sub(zb.wrapping_mul(sum)));
                }
            }
        }
    }
}

/// `W` columns of one row of A times B (`b` starting at the block's first column, rows
/// `n` apart): the sums with A's zero point off, and the sum of A's row with it off.
/// `W` constant, so the sums stay in registers.
#[inline(always)]
fn block<A: Quant, B: Quant, const W: usize>(
    row: &[A],
    b: &[B],
    n: usize,
    za: i32,
) -> ([i32; W], i32) {
    let mut acc = [0i32; W];
    let mut sum = 0i32;
    for (t, &x) in row.iter().enumerate() {
        let x = x.widen() - za;
        sum = sum.wrapping_add(x);
        let Some(brow) = b.get(t * n..t * n + W) else {
            break;
        };
        for c in 0..W {
            acc[c] = acc[c].wrapping_add(x.wrapping_mul(brow[c].widen()));
        }
    }
    (acc, sum)
}

/// The sums of one panel of [`q8`] columns over `row` (the activations, their zero
/// point not taken off) and the panel's groups.
#[inline(always)]
fn panel_sums<A: Quant, B: Quant>(row: &[A], panel: &[B]) -> [i32; q8::PANEL] {
    let mut acc = [0i32; q8::PANEL];
    let done = dsp_groups(row, panel, &mut acc);
    let (x, w) = (
        row.get(done * 4..).unwrap_or_default(),
        panel.get(done * 4 * q8::PANEL..).unwrap_or_default(),
    );
    // On the cores without an FPU (and without the DSP routine) one copy of the portable
    // sums for every product of these types: inlined, each layer had its own sixteen
    // unrolled lanes (the int8 digits CNN's two, 1.3 KB on the Cortex-M3). The RISC-V
    // cores with an FPU take it too: they have no vector unit for the sixteen lanes,
    // which spilled (the int8 MLP took 5.38 instructions per MAC there, 4.28 on the
    // core without an FPU).
    #[cfg(any(tinyonnx_soft_float, tinyonnx_riscv_f))]
    portable_sums_shared(x, w, &mut acc);
    #[cfg(not(any(tinyonnx_soft_float, tinyonnx_riscv_f)))]
    portable_sums(x, w, &mut acc);
    acc
}

/// The portable sums of [`panel_sums`] on the cores without an FPU and the RISC-V ones
/// with F: out of line, and with four sums, one a column (the sixteen lanes of
/// `portable_sums` spilled from these cores' registers and took 1.2 KB).
#[cfg(any(tinyonnx_soft_float, tinyonnx_riscv_f, test))]
#[inline(never)]
fn portable_sums_shared<A: Quant, B: Quant>(x: &[A], w: &[B], acc: &mut [i32; q8::PANEL]) {
    let groups = x.chunks_exact(4);
    let (tail, whole) = (groups.remainder(), x.len() / 4);
    for (xg, wg) in groups.zip(w.chunks_exact(4 * q8::PANEL)) {
        let xs = [xg[0].widen(), xg[1].widen(), xg[2].widen(), xg[3].widen()];
        for (a, wc) in acc.iter_mut().zip(wg.chunks_exact(4)) {
            let mut s = *a;
            for (&v, wv) in xs.iter().zip(wc) {
                s = s.wrapping_add(v.wrapping_mul(wv.widen()));
            }
            *a = s;
        }
    }
    // The last rows when K is not a multiple of 4 (their weights padded with zeros).
    if let Some(wg) = w.get(whole * 4 * q8::PANEL..) {
        for (a, wc) in acc.iter_mut().zip(wg.chunks_exact(4)) {
            for (&v, wv) in tail.iter().zip(wc) {
                *a = a.wrapping_add(v.widen().wrapping_mul(wv.widen()));
            }
        }
    }
}

/// The sums of [`panel_sums`] without the DSP routine: activations `x` times the
/// panel's rows `w`, added into `acc`.
#[cfg(any(not(any(tinyonnx_soft_float, tinyonnx_riscv_f)), test))]
#[inline(always)]
fn portable_sums<A: Quant, B: Quant>(x: &[A], w: &[B], acc: &mut [i32; q8::PANEL]) {
    // Whole groups as sixteen independent lanes (column c, row q at lane 4c + q), which
    // the compiler turns into vector multiply-adds; the lanes of a column summed after.
    let mut lanes = [0i32; 4 * q8::PANEL];
    let groups = x.chunks_exact(4).zip(w.chunks_exact(4 * q8::PANEL));
    for (xg, wg) in groups {
        let xs = [xg[0].widen(), xg[1].widen(), xg[2].widen(), xg[3].widen()];
        for (l, (s, &v)) in lanes.iter_mut().zip(wg).enumerate() {
            *s = s.wrapping_add(xs[l % 4].wrapping_mul(v.widen()));
        }
    }
    for (a, l) in acc.iter_mut().zip(lanes.chunks_exact(4)) {
        *a = l.iter().fold(*a, |s, &v| s.wrapping_add(v));
    }
    // The last rows when K is not a multiple of 4 (their weights padded with zeros).
    let whole = x.len() / 4;
    if let (Some(x), Some(w)) = (x.get(whole * 4..), w.get(whole * 4 * q8::PANEL..))
        && !x.is_empty()
    {
        for (c, a) in acc.iter_mut().enumerate() {
            for (q, &v) in x.iter().enumerate() {
                let wv = w.get(c * 4 + q).map_or(0, |w| w.widen());
                *a = a.wrapping_add(v.widen().wrapping_mul(wv));
            }
        }
    }
}

/// The whole groups of four rows the DSP routine sums into `acc`, when the core has it
/// and the types and the panel's alignment suit it; returns how many (0: none).
#[cfg(all(feature = "dsp", target_arch = "arm"))]
#[inline(always)]
fn dsp_groups<A: Quant, B: Quant>(row: &[A], panel: &[B], acc: &mut [i32; q8::PANEL]) -> usize {
    let full = row.len() / 4;
    if !(B::SIGNED_BYTE && (A::SIGNED_BYTE || A::UNSIGNED_BYTE))
        || !(panel.as_ptr() as usize).is_multiple_of(4)
        || panel.len() < full * 4 * q8::PANEL
        || full == 0
    {
        return 0;
    }
    use super::arch::arm::dsp;
    let w = panel.as_ptr().cast::<i8>();
    // Safety: the routine reads `4 * full` bytes from `row` (whose length is at least
    // that) at any alignment and `16 * full` bytes from `panel` (checked above, as is
    // the 4-byte alignment its LDRD needs), and writes the four sums of `acc`; A and B
    // are one-byte integers, as checked above, so the casts keep every byte's meaning.
    unsafe {
        if A::SIGNED_BYTE {
            dsp::tinyonnx_q8x4_s8(row.as_ptr().cast(), w, full as u32, acc.as_mut_ptr());
        } else {
            dsp::tinyonnx_q8x4_u8(row.as_ptr().cast(), w, full as u32, acc.as_mut_ptr());
        }
    }
    full
}

#[cfg(not(all(feature = "dsp", target_arch = "arm")))]
#[inline(always)]
fn dsp_groups<A: Quant, B: Quant>(_: &[A], _: &[B], _: &mut [i32; q8::PANEL]) -> usize {
    0
}

/// One integer product with a constant B packed by `tinyonnx_layout::q8`, as the
/// compiler lays it out for a `QLinearMatMul` or ONNX Runtime's `QGemm`: `rows` rows of
/// A `[rows, k]` into `y [rows, n]`.
#[derive(Debug, Clone, Copy)]
pub struct Q8Product<'a, B> {
    /// Rows of A.
    pub rows: usize,
    /// Columns of A, rows of B.
    pub k: usize,
    /// Columns of B.
    pub n: usize,
    /// B in the `q8` order.
    pub packed: &'a [B],
    /// The sum of each column of B as stored.
    pub colsum: &'a [i32],
    /// Empty, or one int32 per column added to the sums.
    pub bias: &'a [i32],
    /// Empty, or per column what the zero points and the bias add to a sum of raw
    /// products, `bias - a_zp * colsum + k * a_zp * b_zp` (the compiler's, when all are
    /// constants): then `colsum`, `bias` and `a_zp` are not read.
    pub offset: &'a [i32],
    /// A's zero point.
    pub a_zp: i32,
    /// B's zero point: one value, or one per column.
    pub b_zp: &'a [B],
    /// `alpha * a_scale * b_scale / y_scale`: one value, or one per column.
    pub multiplier: &'a [f32],
    /// y's zero point.
    pub y_zp: i32,
    /// On the DSP cores `packed` is in `tinyonnx_layout::q8::pair_order` (the
    /// compiler's `__q8_order!` gave that order); elsewhere not read.
    pub pairs: bool,
}

/// The product `p` of A into `y`: the zero points come off once per output through the
/// column and row sums, `sum((x - za)(w - zb)) = sum(xw) - za sum(w) - zb sum(x) + k za
/// zb`, the bias is added, and the sums are requantized as in [`qlinear_matmul`].
///
/// On the microcontrollers this and the other `_q8` entry points are always inlined:
/// which path runs (the DSP routines or the portable one) folds only where the call's
/// constant product is seen. At `opt-level = "s"` LLVM kept the call, and with it both
/// paths and the portable one's column sums (the int8 MLP's bare code 2,561 -> 8,729 B,
/// its stack 172 -> 588 B; the int8 CNN's stack above its stated bound).
#[cfg_attr(target_os = "none", inline(always))]
#[cfg_attr(not(target_os = "none"), inline)]
pub fn qlinear_matmul_q8<A: Quant, B: Quant, Q: Quant>(a: &[A], p: &Q8Product<'_, B>, y: &mut [Q]) {
    #[cfg(target_arch = "x86_64")]
    if super::arch::x86_64::cpu::avx512() {
        // Safety: the CPU has AVX-512F (checked just above).
        unsafe { q8_avx512(a, p, y) };
        return;
    }
    q8_body(a, p, y);
}

/// [`q8_body`] compiled for AVX-512 (the sixteen lanes of a group in one register).
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn q8_avx512<A: Quant, B: Quant, Q: Quant>(a: &[A], p: &Q8Product<'_, B>, y: &mut [Q]) {
    q8_body(a, p, y);
}

/// The body of [`qlinear_matmul_q8`].
#[inline(always)]
fn q8_body<A: Quant, B: Quant, Q: Quant>(a: &[A], p: &Q8Product<'_, B>, y: &mut [Q]) {
    let (k, n) = (p.k, p.n);
    let finite = p.multiplier.iter().all(|m| m.is_finite());
    // On the DSP cores, each row's outputs by one routine call.
    #[cfg(all(feature = "dsp", target_arch = "arm", target_abi = "eabihf"))]
    if let Some(mut rows) = DwBytes::of(&mut *y, 0.0, p.y_zp)
        .and_then(|b| PairRows::new(p, finite, (b, Q::SIGNED_BYTE), 1))
    {
        for (r, row) in a.chunks_exact(k.max(1)).take(p.rows).enumerate() {
            rows.run(row, r.saturating_mul(n));
        }
        return;
    }
    for (row, out) in a
        .chunks_exact(k.max(1))
        .zip(y.chunks_exact_mut(n.max(1)))
        .take(p.rows)
    {
        q8_row(row, p, finite, |j, v| {
            if let Some(o) = out.get_mut(j) {
                *o = v;
            }
        });
    }
}

/// One row of A (`k` values) times the packed B of `p`, requantized; `put(column,
/// value)` takes each of the `n` results. `finite`: every multiplier is finite (the
/// caller checks once), so no product is NaN.
#[inline(always)]
fn q8_row<A: Quant, B: Quant, Q: Quant>(
    row: &[A],
    p: &Q8Product<'_, B>,
    finite: bool,
    mut put: impl FnMut(usize, Q),
) {
    q8_sums(row, p, |j, v| put(j, requantize_sum(p, j, v, finite)));
}

/// Column `j`'s multiplier in `p` (one for all columns, or one each).
#[inline(always)]
fn multiplier_at<B>(p: &Q8Product<'_, B>, j: usize) -> f32 {
    if p.multiplier.len() == 1 {
        p.multiplier[0]
    } else {
        p.multiplier.get(j).copied().unwrap_or(0.0)
    }
}

/// Sum `v` of column `j` of `p` scaled by the column's multiplier and requantized.
#[inline(always)]
fn requantize_sum<B, Q: Quant>(p: &Q8Product<'_, B>, j: usize, v: i32, finite: bool) -> Q {
    requantize_with(v, multiplier_at(p, j), p.y_zp, finite)
}

/// Sum `v` scaled by multiplier `m` and requantized with zero point `zp` (`finite`: `m`
/// is finite).
#[inline(always)]
fn requantize_with<Q: Quant>(v: i32, m: f32, zp: i32, finite: bool) -> Q {
    // On the cores without an FPU the float conversion, product and rounding in
    // integers, bit for bit, one copy a type (as library calls they took about 160
    // instructions an output, most of the int8 CNN's on the Cortex-M3, and the float
    // library's flash).
    #[cfg(tinyonnx_soft_float)]
    {
        let _ = finite;
        requantize_int(v, m, zp)
    }
    // Elsewhere a multiplier that is not finite (a zero or subnormal output scale) is
    // rare, so it takes one copy, not float clamps at every column of every layer.
    #[cfg(not(tinyonnx_soft_float))]
    {
        if CLAMP_AFTER && !finite {
            return requantize_scaled(v, m, zp);
        }
        let v = v as f32 * m;
        if CLAMP_AFTER {
            requantize_finite(v, zp)
        } else {
            requantize(v, zp)
        }
    }
}

/// `requantize(v as f32 * m, zp)` in integers: `v`'s conversion to a float and the
/// product each rounded to 24 significant bits (half to even), then the product
/// rounded half to even to an integer, exactly as the float operations round (a
/// product below the normal range is far below 1/2, so rounding it as a subnormal
/// would give 0 all the same; one beyond the range saturates, as infinity clamps); a
/// multiplier that is infinite clamps by the product's sign, and NaN (a NaN multiplier,
/// or 0 times infinity) gives the low end, as in [`requantize`]. Out of line: one copy
/// a type.
#[cfg(any(tinyonnx_soft_float, test))]
#[inline(never)]
fn requantize_int<Q: Quant>(v: i32, m: f32, zp: i32) -> Q {
    let bits = m.to_bits();
    if bits & 0x7f80_0000 == 0x7f80_0000 {
        let nan = bits & 0x7f_ffff != 0 || v == 0;
        let negative = (v < 0) != (bits >> 31 == 1);
        return Q::narrow(if nan || negative { Q::LOW } else { Q::HIGH });
    }
    Q::narrow(scaled_round(v, m).saturating_add(zp).clamp(Q::LOW, Q::HIGH))
}

/// `(v as f32 * m)` rounded half to even to an `i32`, for a finite `m` (see
/// [`requantize_int`]), limited to +-2^30 (which a zero point of a quantized type
/// clamps as it would the saturated value); in 32-bit steps but one 32 x 32-bit product.
#[cfg(any(tinyonnx_soft_float, test))]
#[inline(always)]
fn scaled_round(v: i32, m: f32) -> i32 {
    let bits = m.to_bits();
    let exp = (bits >> 23) & 0xff;
    let av = v.unsigned_abs();
    // A subnormal (or zero) multiplier times at most 2^31 is below 2^-95: 0.
    if av == 0 || exp == 0 {
        return 0;
    }
    // m = mm * 2^em, mm of exactly 24 bits.
    let mm = (bits & 0x7f_ffff) | 0x80_0000;
    let em = exp as i32 - 150;
    // v as f32 = a * 2^ea with a of exactly 24 bits (rounded above 2^24, shifted up
    // below), so that the product has 47 or 48 bits and needs no second search.
    let len = bit_len(av);
    let (a, ea) = if len > 24 {
        let s = len - 24;
        let a = round_dropping(av >> s, av, s);
        // Rounding up to 2^24 is 2^23 one place higher.
        if a >> 24 != 0 {
            (a >> 1, s as i32 + 1)
        } else {
            (a, s as i32)
        }
    } else {
        (av << (24 - len), len as i32 - 24)
    };
    // The product, 47 or 48 bits, shifted to 48 and rounded to 24: the dropped bits
    // are the low word's low 24, at constant shifts.
    let p = u64::from(a) * u64::from(mm);
    let (hi, lo) = ((p >> 32) as u32, p as u32);
    let t = 1 - (hi >> 15);
    let (hi, lo) = ((hi << t) | ((lo >> 31) & t), lo << t);
    let q = round_dropping((lo >> 24) | (hi << 8), lo, 24);
    let e = 24 - t as i32 + ea + em;
    // Rounded to an integer.
    let magnitude = if e >= 0 {
        if e > 7 { 1 << 30 } else { q << e }
    } else if e < -25 {
        0
    } else {
        let k = e.unsigned_abs();
        round_dropping(q >> k, q, k)
    };
    let magnitude = magnitude.min(1 << 30) as i32;
    if (v < 0) != (bits >> 31 == 1) {
        -magnitude
    } else {
        magnitude
    }
}

/// The bits `x` needs: `CLZ` on Arm; on RISC-V without the bit-manipulation extension
/// a binary search (LLVM's count of leading zeros there took about 130 bytes a use).
#[cfg(any(tinyonnx_soft_float, test))]
#[inline(always)]
fn bit_len(x: u32) -> u32 {
    if cfg!(target_arch = "riscv32") {
        bit_len_search(x)
    } else {
        32 - x.leading_zeros()
    }
}

/// [`bit_len`] by halving the range.
#[cfg(any(tinyonnx_soft_float, test))]
#[inline(always)]
fn bit_len_search(x: u32) -> u32 {
    // Without branches: LLVM duplicated the branching form's tail at each use.
    let (mut x, mut n) = (x, 0);
    for step in [16, 8, 4, 2, 1] {
        let b = u32::from(x >> step != 0) * step;
        x >>= b;
        n += b;
    }
    n + x
}

/// `kept`, the bits of `x` above its low `s` (1 to 25), rounded half to even by those
/// low bits.
#[cfg(any(tinyonnx_soft_float, test))]
#[inline(always)]
fn round_dropping(kept: u32, x: u32, s: u32) -> u32 {
    let half = 1u32 << (s - 1);
    let dropped = x & ((half << 1) - 1);
    if dropped > half || (dropped == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

/// `requantize(v * m, zp)` out of line.
#[cfg(not(tinyonnx_soft_float))]
#[inline(never)]
fn requantize_scaled<Q: Quant>(v: i32, m: f32, zp: i32) -> Q {
    requantize(v as f32 * m, zp)
}

/// The sum of column `j` of `p` from its raw sum `v` (of a row whose values add up to
/// `rowsum`): the zero points' and the bias's terms added. None past the columns.
#[inline(always)]
fn finish_sum<B: Quant>(p: &Q8Product<'_, B>, j: usize, v: i32, rowsum: i32) -> Option<i32> {
    let &cs = p.colsum.get(j).filter(|_| j < p.n)?;
    let zb = zero_at(p.b_zp, j);
    let constant = match p.offset.get(j) {
        Some(&o) => o,
        None => (p.k as i32)
            .wrapping_mul(p.a_zp)
            .wrapping_mul(zb)
            .wrapping_sub(p.a_zp.wrapping_mul(cs))
            .wrapping_add(p.bias.get(j).copied().unwrap_or(0)),
    };
    Some(
        v.wrapping_add(constant)
            .wrapping_sub(zb.wrapping_mul(rowsum)),
    )
}

/// One row of A times the packed B of `p`: `put(column, sum)` takes each of the `n`
/// sums of `(a - a_zp)(b - b_zp)` plus the bias, in i32.
#[inline(always)]
fn q8_sums<A: Quant, B: Quant>(row: &[A], p: &Q8Product<'_, B>, mut put: impl FnMut(usize, i32)) {
    let Q8Product {
        k,
        packed: bp,
        b_zp,
        ..
    } = *p;
    let panel_len = q8::groups(k) * 4 * q8::PANEL;
    // Only B's zero point needs the sum of the row (none: symmetric weights).
    let rowsum = if b_zp.is_empty() {
        0
    } else {
        row.iter().fold(0i32, |s, v| s.wrapping_add(v.widen()))
    };
    let column = |j: usize, v: i32| finish_sum(p, j, v, rowsum);
    #[cfg(target_arch = "x86_64")]
    let panels = p.n.div_ceil(q8::PANEL);
    #[cfg(target_arch = "x86_64")]
    if B::SIGNED_BYTE
        && (A::SIGNED_BYTE || A::UNSIGNED_BYTE)
        && row.len() >= k
        && panels.checked_mul(panel_len).is_some_and(|l| l <= bp.len())
    {
        use super::arch::x86_64::{cpu, q8 as x86};
        let (vnni, avx2) = (cpu::vnni(), cpu::avx2());
        if vnni || avx2 {
            let each = |pi: usize, acc: [i32; q8::PANEL]| {
                finish_panel((pi, acc), &column, &mut put);
            };
            // Safety: A and B are one-byte integers (checked), so the views keep every
            // byte's meaning, length and (byte) alignment; `row` holds `k` values and
            // `bp` the `panels` panels (checked); the CPU has AVX-512F, BW and VNNI, or
            // AVX2, for the routine called (checked).
            unsafe {
                let x = core::slice::from_raw_parts(row.as_ptr().cast::<u8>(), row.len());
                let w = core::slice::from_raw_parts(bp.as_ptr().cast::<i8>(), bp.len());
                if vnni {
                    x86::panel_sums(x, k, A::SIGNED_BYTE, w, panels, p.colsum, each);
                } else {
                    x86::panel_sums_avx2(x, k, A::SIGNED_BYTE, w, panels, each);
                }
            }
            return;
        }
    }
    // Each panel's four sums finished where they were summed (as one closure shared with
    // the VNNI path above, the Arm code kept the sums in memory: 6 % more instructions
    // on the int8 MLP, 70 % on the CNN).
    // Only the panels of the `n` columns: a group of a grouped convolution sees the
    // packed weights from its own panels to the end of the operand (a depthwise
    // convolution over 32 channels summed every later group's panels too: 127
    // instructions per multiply-accumulate on the Cortex-M4F instead of 15).
    let used = p.n.div_ceil(q8::PANEL).saturating_mul(panel_len);
    let bp = bp.get(..used).unwrap_or(bp);
    // Each call site with its own inlined copy: one closure for both, the Arm code
    // called it for every panel (ConvInteger's CNN took 60 % more instructions).
    if in_pairs::<A, B>(p) {
        let passes = PairPasses::new(row, k);
        for (pi, panel) in bp.chunks_exact(panel_len.max(1)).enumerate() {
            finish_panel((pi, passes.panel(panel)), &column, &mut put);
        }
        return;
    }
    for (pi, panel) in bp.chunks_exact(panel_len.max(1)).enumerate() {
        finish_panel((pi, panel_sums(row, panel)), &column, &mut put);
    }
}

/// Panel `pi`'s raw sums `acc` finished by `column` and handed to `put`, column by
/// column (none past the last).
#[inline(always)]
fn finish_panel(
    (pi, acc): (usize, [i32; q8::PANEL]),
    column: &impl Fn(usize, i32) -> Option<i32>,
    put: &mut impl FnMut(usize, i32),
) {
    for (c, &v) in acc.iter().enumerate() {
        let j = pi * q8::PANEL + c;
        let Some(s) = column(j, v) else { break };
        put(j, s);
    }
}

/// Whether `p`'s packed B is in `q8::pair_order` on this target (the DSP cores' `SMLAD`
/// on two columns at once): where `p.pairs` says the compiler gave that order too,
/// which it does for one-byte activations and signed-byte weights of whole groups
/// (`q8::pairs`) through `__q8_order!`.
#[inline(always)]
fn in_pairs<A: Quant, B: Quant>(p: &Q8Product<'_, B>) -> bool {
    cfg!(all(feature = "dsp", target_arch = "arm"))
        && p.pairs
        && (A::SIGNED_BYTE || A::UNSIGNED_BYTE)
        && B::SIGNED_BYTE
        && q8::pairs(p.k)
}

/// A row of activations (`k` of them, whole groups of four) to be summed with panels
/// in `q8::pair_order`, in passes of up to `q8::pair_groups` groups (each pass's sums
/// unpaired apart).
struct PairPasses<'x, A> {
    x: &'x [A],
    groups: usize,
    step: usize,
}

impl<'x, A: Quant> PairPasses<'x, A> {
    #[inline(always)]
    fn new(row: &'x [A], k: usize) -> Self {
        Self {
            x: row.get(..k).unwrap_or_default(),
            groups: k / 4,
            step: q8::pair_groups(A::SIGNED_BYTE),
        }
    }

    /// The four column sums of `panel` (its groups in `q8::pair_order`) over the row.
    #[inline(always)]
    fn panel<B: Quant>(&self, panel: &[B]) -> [i32; q8::PANEL] {
        let mut acc = [0i32; q8::PANEL];
        for g0 in (0..self.groups).step_by(self.step) {
            let n = self.step.min(self.groups - g0);
            let (xs, ws) = (
                self.x.get(g0 * 4..(g0 + n) * 4).unwrap_or_default(),
                panel.get(g0 * 16..(g0 + n) * 16).unwrap_or_default(),
            );
            pair_pass(xs, ws, &mut acc);
        }
        acc
    }
}

/// One pass of [`PairPasses::panel`]: the sums of `x` (whole groups of four) times the
/// panel's groups `w` in `q8::pair_order` added to `acc`, as the DSP routine
/// `tinyonnx_q8x4p_s8` states; that routine where the core has it and the weights are
/// 4-byte aligned (as the compiler's are).
#[inline(always)]
fn pair_pass<A: Quant, B: Quant>(x: &[A], w: &[B], acc: &mut [i32; q8::PANEL]) {
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    {
        let groups = (x.len() / 4).min(w.len() / 16);
        if (w.as_ptr() as usize).is_multiple_of(4)
            && groups > 0
            && B::SIGNED_BYTE
            && (A::SIGNED_BYTE || A::UNSIGNED_BYTE)
        {
            use super::arch::arm::dsp;
            // Safety: the routine reads `4 * groups` bytes of `x` (at any alignment) and
            // `16 * groups` of `w` (4-byte aligned, checked), both within their lengths,
            // and adds into the four sums of `acc`; A and B are one-byte integers
            // (checked), so the casts keep every byte's meaning.
            unsafe {
                let w = w.as_ptr().cast::<i8>();
                if A::SIGNED_BYTE {
                    dsp::tinyonnx_q8x4p_s8(x.as_ptr().cast(), w, groups as u32, acc.as_mut_ptr());
                } else {
                    dsp::tinyonnx_q8x4p_u8(x.as_ptr().cast(), w, groups as u32, acc.as_mut_ptr());
                }
            }
            return;
        }
    }
    pair_pass_portable(x, w, acc);
}

/// Rows of A times the packed B of `p`, each requantized into bytes by one call of the
/// DSP routine `tinyonnx_q8row*` (the sums, their offsets and the requantization of
/// every panel without leaving it; what the rows share set once): a row's column `j`
/// to byte `at + j * stride` of the output. Only where the core has the DSP extension
/// and an FPU, B is in the pair order, a row is one pass of whole panels, the zero
/// points and bias are the compiler's `offset` (no weight zero point), every multiplier
/// is finite and the outputs are bytes; and for three panels or more: with one or two,
/// the inlined requantization of each panel's sums keeps the layer's constants in
/// registers and instructions (measured: the routine 0.5 % slower on QopBlocks' two
/// panels a row, 5-13 % faster on CnnQdq's four and PointwiseInt8's sixteen).
#[cfg(all(feature = "dsp", target_arch = "arm", target_abi = "eabihf"))]
struct PairRows<'p, A> {
    args: super::arch::arm::dsp::PairRowArgs,
    w: *const i8,
    /// The bytes of the output.
    len: usize,
    /// The row's length.
    k: usize,
    /// `(n - 1) * stride`: the last column's distance from the first.
    last: usize,
    /// The routine for the types and the multipliers' layout.
    routine: unsafe extern "C" fn(*const super::arch::arm::dsp::PairRowArgs, *const i8),
    _p: core::marker::PhantomData<(&'p mut [u8], &'p [i8], A)>,
}

#[cfg(all(feature = "dsp", target_arch = "arm", target_abi = "eabihf"))]
impl<'p, A: Quant> PairRows<'p, A> {
    /// The rows of `p` into the bytes of `out` (`signed`: `i8`, else `u8`; its
    /// multiplier not read, `p`'s are), each column `stride` bytes after the previous;
    /// `None` where the routine does not apply (see the type).
    #[inline(always)]
    fn new<B: Quant>(
        p: &Q8Product<'p, B>,
        finite: bool,
        (out, signed): (DwBytes<'p>, bool),
        stride: usize,
    ) -> Option<Self> {
        use super::arch::arm::dsp;
        let (k, n) = (p.k, p.n);
        let (groups, panels) = (k / 4, n / q8::PANEL);
        let per_column = p.multiplier.len() != 1;
        let applies = in_pairs::<A, B>(p)
            && finite
            && panels > 2
            && n.is_multiple_of(q8::PANEL)
            && groups <= q8::pair_groups(A::SIGNED_BYTE)
            && p.b_zp.is_empty()
            && p.offset.len() >= n
            && (!per_column || p.multiplier.len() >= n)
            && panels
                .checked_mul(groups * 16)
                .is_some_and(|l| l <= p.packed.len())
            && (p.packed.as_ptr() as usize).is_multiple_of(4)
            && (p.multiplier.as_ptr() as usize).is_multiple_of(4);
        if !applies {
            return None;
        }
        let last = (n - 1).checked_mul(stride)?;
        let span = last.checked_add(stride)?;
        let routine = match (per_column, A::SIGNED_BYTE, signed) {
            (true, true, true) => dsp::tinyonnx_q8rowc_s8_s8,
            (true, true, false) => dsp::tinyonnx_q8rowc_s8_u8,
            (true, false, true) => dsp::tinyonnx_q8rowc_u8_s8,
            (true, false, false) => dsp::tinyonnx_q8rowc_u8_u8,
            (false, true, true) => dsp::tinyonnx_q8rowt_s8_s8,
            (false, true, false) => dsp::tinyonnx_q8rowt_s8_u8,
            (false, false, true) => dsp::tinyonnx_q8rowt_u8_s8,
            (false, false, false) => dsp::tinyonnx_q8rowt_u8_u8,
        };
        Some(Self {
            args: dsp::PairRowArgs {
                out: out.y,
                stride,
                span,
                offset_zp: magic_offset(out.zp),
                x: core::ptr::null(),
                groups: groups as u32,
                offset: p.offset.as_ptr(),
                multiplier: p.multiplier.as_ptr(),
                magic: MAGIC,
            },
            w: p.packed.as_ptr().cast(),
            len: out.len,
            k,
            last,
            routine,
            _p: core::marker::PhantomData,
        })
    }

    /// `row` into the bytes from index `at`; nothing written where the row is short
    /// or its last byte past the output (a bug in generated code, whose outputs the
    /// other paths skip too).
    #[inline(always)]
    fn run(&mut self, row: &[A], at: usize) {
        if row.len() < self.k || at >= self.len.saturating_sub(self.last) {
            return;
        }
        let base = self.args.out;
        self.args.x = row.as_ptr().cast();
        self.args.out = base.wrapping_add(at);
        // Safety: `new` checked what the routine reads: whole panels of `16 * groups`
        // bytes of 4-byte aligned weights within `packed`, `n` offsets, and `n`
        // multipliers or one (the routine's layout), all borrowed for `'p`; the row
        // holds `k = 4 * groups` values (checked here), one-byte integers like the
        // routine's, and the bytes written, `at + j * stride` for `j < n`, are below
        // `at + last < len` (checked here), within the output `new` was given.
        unsafe { (self.routine)(&self.args, self.w) };
        self.args.out = base;
    }
}

/// [`pair_pass`] in Rust, instruction by instruction as the routine computes it: the
/// host's tests of the order, and weights a caller did not align. Out of line: the
/// DSP cores' models never take it.
#[inline(never)]
fn pair_pass_portable<A: Quant, B: Quant>(x: &[A], w: &[B], acc: &mut [i32; q8::PANEL]) {
    let mut sums = [0i32; 4];
    for (xg, wg) in x.chunks_exact(4).zip(w.chunks_exact(16)) {
        let xs = [xg[0].widen(), xg[1].widen(), xg[2].widen(), xg[3].widen()];
        for (p, pw) in wg.chunks_exact(8).enumerate() {
            for (h, word) in pw.chunks_exact(4).enumerate() {
                // The word's halfwords as `SMLAD` reads them, and its low bytes as
                // `SXTB16` leaves them.
                let low = |i: usize| word[i].widen() as i8 as i32;
                let half = |i: usize| ((word[i + 1].widen() << 8) | (low(i) & 0xff)) as i16;
                let both =
                    (xs[h] * i32::from(half(0))).wrapping_add(xs[h + 2] * i32::from(half(2)));
                let lower = xs[h] * low(0) + xs[h + 2] * low(2);
                sums[2 * p] = sums[2 * p].wrapping_add(both);
                sums[2 * p + 1] = sums[2 * p + 1].wrapping_add(lower);
            }
        }
    }
    // Unpaired: the upper column's sum from the difference, 256 times a sum within 24
    // bits.
    for p in 0..2 {
        let (both, lower) = (sums[2 * p], sums[2 * p + 1]);
        acc[2 * p] = acc[2 * p].wrapping_add(lower);
        acc[2 * p + 1] = acc[2 * p + 1].wrapping_add(both.wrapping_sub(lower) >> 8);
    }
}

/// `QLinearConv` with its weights packed at compile time: for each output position, the
/// patch of `c/g * kh * kw` input values (the padding holding x's zero point, which the
/// zero-point algebra then takes off like any other value) is gathered once into `patch`
/// and multiplied with each group's packed weights, `p` describing group 0 (`n` =
/// channels per group; `packed` every group's panels one after another; `colsum`,
/// `bias`, `offset`, and a per-channel `b_zp` or `multiplier`, one value per output
/// channel).
#[cfg_attr(target_os = "none", inline(always))]
#[cfg_attr(not(target_os = "none"), inline)]
pub fn qlinear_conv_q8<A: Quant, B: Quant, Q: Quant>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    y: &mut [Q],
    patch: &mut [A],
) {
    let positions = geo.oh * geo.ow;
    conv_packed(x, geo, p, patch, &mut Requantized { y, positions });
}

/// `ConvInteger` with its weights packed at compile time: [`qlinear_conv_q8`]'s sums,
/// not requantized.
#[cfg_attr(target_os = "none", inline(always))]
#[cfg_attr(not(target_os = "none"), inline)]
pub fn conv_integer_q8<A: Quant, B: Quant>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    y: &mut [i32],
    patch: &mut [A],
) {
    let positions = geo.oh * geo.ow;
    conv_packed(x, geo, p, patch, &mut Sums { y, positions });
}

/// [`qlinear_conv_q8`] of a depthwise 3x3 convolution (the compiler's choice, by
/// `tinyonnx_layout::q8::depthwise3x3`): each output's nine products straight from the
/// input, no patch scratch.
#[cfg_attr(target_os = "none", inline(always))]
#[cfg_attr(not(target_os = "none"), inline)]
pub fn qlinear_conv_depthwise_q8<A: Quant, B: Quant, Q: Quant>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    y: &mut [Q],
) {
    let positions = geo.oh * geo.ow;
    conv_depthwise(x, geo, p, &mut Requantized { y, positions });
}

/// [`conv_integer_q8`] of a depthwise 3x3 convolution, as
/// [`qlinear_conv_depthwise_q8`].
#[cfg_attr(target_os = "none", inline(always))]
#[cfg_attr(not(target_os = "none"), inline)]
pub fn conv_integer_depthwise_q8<A: Quant, B: Quant>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    y: &mut [i32],
) {
    let positions = geo.oh * geo.ow;
    conv_depthwise(x, geo, p, &mut Sums { y, positions });
}

/// What a packed convolution does with one patch: `patch` times the group's product
/// `part`, into the outputs from index `at` on (channel `j` at `at + j * positions`).
trait PatchOut<A, B> {
    /// `finite`: every multiplier of `part` is finite.
    fn patch(&mut self, patch: &[A], part: &Q8Product<'_, B>, at: usize, finite: bool);
    /// The finished sums (zero points and bias in) `sums` of `part`'s first column, for
    /// the outputs from index `at` on.
    fn run(&mut self, part: &Q8Product<'_, B>, at: usize, sums: &[i32], finite: bool);
    /// The outputs are requantized one-byte values ([`PatchOut::bytes`] gives them).
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    const BYTES: bool = false;
    /// With [`PatchOut::BYTES`]: the bytes are signed.
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    const SIGNED: bool = false;
    /// The outputs as requantized bytes, with `part`'s first column's multiplier and
    /// zero point, when they are one-byte values ([`PatchOut::BYTES`]); else `None`.
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    fn bytes(&mut self, part: &Q8Product<'_, B>) -> Option<DwBytes<'_>> {
        let _ = part;
        None
    }
    /// Column `j`'s finished sums (zero points and bias in) of the sixteen positions
    /// from index `at`.
    #[cfg(target_arch = "x86_64")]
    fn sixteen(&mut self, part: &Q8Product<'_, B>, at_column: (usize, usize), sums: &[i32; 16]);
}

/// The requantized outputs of a `QLinearConv`.
struct Requantized<'y, Q> {
    y: &'y mut [Q],
    positions: usize,
}

impl<A: Quant, B: Quant, Q: Quant> PatchOut<A, B> for Requantized<'_, Q> {
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    const BYTES: bool = Q::SIGNED_BYTE || Q::UNSIGNED_BYTE;
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    const SIGNED: bool = Q::SIGNED_BYTE;
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    #[inline(always)]
    fn bytes(&mut self, part: &Q8Product<'_, B>) -> Option<DwBytes<'_>> {
        DwBytes::of(self.y, multiplier_at(part, 0), part.y_zp)
    }

    #[inline(always)]
    fn run(&mut self, part: &Q8Product<'_, B>, at: usize, sums: &[i32], finite: bool) {
        let (m, zp) = (multiplier_at(part, 0), part.y_zp);
        if let Some(out) = self.y.get_mut(at..at + sums.len()) {
            for (o, &v) in out.iter_mut().zip(sums) {
                *o = requantize_with(v, m, zp, finite);
            }
        }
    }

    #[inline(always)]
    fn patch(&mut self, patch: &[A], part: &Q8Product<'_, B>, at: usize, finite: bool) {
        let (y, positions) = (&mut *self.y, self.positions);
        q8_row(patch, part, finite, |j, v| {
            if let Some(o) = y.get_mut(at + j * positions) {
                *o = v;
            }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn sixteen(&mut self, part: &Q8Product<'_, B>, (at, j): (usize, usize), sums: &[i32; 16]) {
        let from = at + j * self.positions;
        let (m, zp) = (multiplier_at(part, j), part.y_zp);
        if let Some(out) = self.y.get_mut(from..from + 16) {
            // One multiplier for the sixteen: the loop becomes vector code.
            for (o, &v) in out.iter_mut().zip(sums) {
                *o = requantize(v as f32 * m, zp);
            }
        }
    }
}

/// The int32 sums of a `ConvInteger`.
struct Sums<'y> {
    y: &'y mut [i32],
    positions: usize,
}

impl<A: Quant, B: Quant> PatchOut<A, B> for Sums<'_> {
    #[inline(always)]
    fn run(&mut self, _: &Q8Product<'_, B>, at: usize, sums: &[i32], _: bool) {
        if let Some(out) = self.y.get_mut(at..at + sums.len()) {
            out.copy_from_slice(sums);
        }
    }

    #[inline(always)]
    fn patch(&mut self, patch: &[A], part: &Q8Product<'_, B>, at: usize, _: bool) {
        let (y, positions) = (&mut *self.y, self.positions);
        q8_sums(patch, part, |j, v| {
            if let Some(o) = y.get_mut(at + j * positions) {
                *o = v;
            }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn sixteen(&mut self, _: &Q8Product<'_, B>, (at, j): (usize, usize), sums: &[i32; 16]) {
        let from = at + j * self.positions;
        if let Some(out) = self.y.get_mut(from..from + 16) {
            out.copy_from_slice(sums);
        }
    }
}

/// Hands `out` each patch with its group's product and the output index of the group's
/// first channel at the position, for every image, group and output position, with the
/// AVX-512 copy of the body where the CPU has it.
#[inline(always)]
fn conv_packed<A: Quant, B: Quant>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    patch: &mut [A],
    out: &mut impl PatchOut<A, B>,
) {
    #[cfg(target_arch = "x86_64")]
    if super::arch::x86_64::cpu::avx512() {
        // Safety: the CPU has AVX-512F (checked just above).
        unsafe { conv_avx512(x, geo, p, patch, out) };
        return;
    }
    conv_body(x, geo, p, patch, out);
}

/// [`conv_body`] compiled for AVX-512.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn conv_avx512<A: Quant, B: Quant>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    patch: &mut [A],
    out: &mut impl PatchOut<A, B>,
) {
    conv_body(x, geo, p, patch, out);
}

/// The product of group `gi` of a grouped convolution's `p` (`panels` values of packed
/// weights and `mg` output channels a group).
#[inline(always)]
fn group_part<'a, B>(
    p: &Q8Product<'a, B>,
    gi: usize,
    (panels, mg): (usize, usize),
) -> Q8Product<'a, B> {
    // Per-channel values start at the group's first channel; one value serves all.
    let at = |len: usize| if len > 1 { gi * mg } else { 0 };
    Q8Product {
        rows: 1,
        n: mg,
        packed: p.packed.get(gi * panels..).unwrap_or_default(),
        colsum: p.colsum.get(gi * mg..).unwrap_or_default(),
        bias: p.bias.get(at(p.bias.len())..).unwrap_or_default(),
        offset: p.offset.get(at(p.offset.len())..).unwrap_or_default(),
        b_zp: p.b_zp.get(at(p.b_zp.len())..).unwrap_or_default(),
        multiplier: p
            .multiplier
            .get(at(p.multiplier.len())..)
            .unwrap_or_default(),
        ..*p
    }
}

/// A depthwise 3x3 convolution (`tinyonnx_layout::q8::depthwise3x3`) through
/// [`depthwise_groups`]: the weights' zero points are constants in generated code, so
/// only the routine for their case is compiled.
#[inline(always)]
fn conv_depthwise<A: Quant, B: Quant>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    out: &mut impl PatchOut<A, B>,
) {
    // The geometry is the generated code's constant here, so only the instances its
    // steps and zero points need are compiled.
    match (p.b_zp.is_empty(), geo.sw == 1) {
        (true, true) => depthwise_groups::<A, B, false, true>(x, geo, p, out),
        (true, false) => depthwise_groups::<A, B, false, false>(x, geo, p, out),
        (false, true) => depthwise_groups::<A, B, true, true>(x, geo, p, out),
        (false, false) => depthwise_groups::<A, B, true, false>(x, geo, p, out),
    }
}

/// The groups of a depthwise 3x3 convolution, one by one through [`depthwise3x3`];
/// `ROWSUM`: the weights have zero points (`p.b_zp` not empty), so the windows' sums
/// are needed; `UNIT`: unit horizontal steps.
///
/// # Panics
/// When `geo` is not such a convolution or its steps are not `UNIT`'s (a bug in
/// generated code).
#[inline(never)]
fn depthwise_groups<A: Quant, B: Quant, const ROWSUM: bool, const UNIT: bool>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    out: &mut impl PatchOut<A, B>,
) {
    assert!(
        q8::depthwise3x3((geo.c, geo.m, geo.g), (geo.kh, geo.kw), (geo.dh, geo.dw))
            && UNIT == (geo.sw == 1),
        "depthwise_groups: not a depthwise 3x3 convolution"
    );
    let (g, plane) = (geo.g.max(1), geo.h * geo.w);
    let (panels, positions) = (q8::group_len(9, 1, true), geo.oh * geo.ow);
    let pad = A::narrow(p.a_zp.clamp(A::LOW, A::HIGH));
    for gi in 0..g {
        let part = group_part(p, gi, (panels, 1));
        let finite = part.multiplier.iter().all(|m| m.is_finite());
        for img in 0..geo.n {
            let x = x.get((img * g + gi) * plane..).unwrap_or_default();
            let first = (img * g + gi) * positions;
            depthwise3x3::<A, B, ROWSUM, UNIT>(x, geo, &part, pad, out, (first, finite));
        }
    }
}

/// The body of [`conv_packed`].
#[inline(always)]
fn conv_body<A: Quant, B: Quant, O: PatchOut<A, B>>(
    x: &[A],
    geo: &ConvGeometry,
    p: &Q8Product<'_, B>,
    patch: &mut [A],
    out: &mut O,
) {
    let ConvGeometry {
        n,
        c,
        h,
        w,
        m,
        g,
        kh,
        kw,
        oh,
        ow,
        ..
    } = *geo;
    let (cg, mg) = (c / g.max(1), m / g.max(1));
    let k = cg * kh * kw;
    let Some(patch) = patch.get_mut(..k) else {
        return;
    };
    let pad = A::narrow(p.a_zp.clamp(A::LOW, A::HIGH));
    let panels = q8::packed_len(k, mg);
    let positions = oh * ow;
    for gi in 0..g {
        let part = group_part(p, gi, (panels, mg));
        let finite = part.multiplier.iter().all(|m| m.is_finite());
        for img in 0..n {
            let plane = x.get((img * c + gi * cg) * h * w..).unwrap_or_default();
            let first = (img * m + gi * mg) * positions;
            #[cfg(target_arch = "x86_64")]
            let done = positions16(&part, plane, geo, (k, pad), |at, j, sums| {
                out.sixteen(&part, (first + at, j), sums)
            });
            #[cfg(not(target_arch = "x86_64"))]
            let done = 0;
            // On the DSP cores, each position's outputs by one routine call.
            #[cfg(all(feature = "dsp", target_arch = "arm", target_abi = "eabihf"))]
            if let Some(mut rows) = out
                .bytes(&part)
                .and_then(|b| PairRows::new(&part, finite, (b, O::SIGNED), positions))
            {
                for pos in 0..positions {
                    let (oy, ox) = (pos / ow.max(1), pos % ow.max(1));
                    gather_patch(plane, geo, (cg, pad), (oy, ox), patch);
                    rows.run(patch, first + pos);
                }
                continue;
            }
            for oy in 0..oh {
                for ox in 0..ow {
                    let pos = oy * ow + ox;
                    if pos < done {
                        continue;
                    }
                    gather_patch(plane, geo, (cg, pad), (oy, ox), patch);
                    out.patch(patch, &part, first + pos, finite);
                }
            }
        }
    }
}

/// Outputs [`depthwise3x3`] finishes at a time, then hands over as one run.
const RUN: usize = 32;

/// The raw sum of a depthwise window (three columns of three widened values, left to
/// right) with the weights `wt` (row-major 3x3), and the sum of its values if `ROWSUM`.
#[inline(always)]
fn window_sums<const ROWSUM: bool>(cols: [[i32; 3]; 3], wt: &[i32; 9]) -> (i32, i32) {
    let (mut v, mut r) = (0i32, 0i32);
    for (col, wc) in cols.iter().zip([[0, 3, 6], [1, 4, 7], [2, 5, 8]]) {
        for (&a, t) in col.iter().zip(wc) {
            v = v.wrapping_add(a.wrapping_mul(wt[t]));
            if ROWSUM {
                r = r.wrapping_add(a);
            }
        }
    }
    (v, r)
}

/// A window column's (three widened values, top to bottom) products with each of the
/// kernel's columns (`wt` row-major 3x3), and the sum of its values if `ROWSUM`.
#[inline(always)]
fn column_products<const ROWSUM: bool>(c: [i32; 3], wt: &[i32; 9]) -> ([i32; 3], i32) {
    let q = [0, 1, 2].map(|i| {
        c[0].wrapping_mul(wt[i])
            .wrapping_add(c[1].wrapping_mul(wt[3 + i]))
            .wrapping_add(c[2].wrapping_mul(wt[6 + i]))
    });
    let r = if ROWSUM {
        c[0].wrapping_add(c[1]).wrapping_add(c[2])
    } else {
        0
    };
    (q, r)
}

/// One group of a depthwise 3x3 convolution (one input and one output channel, unit
/// dilations): each output's nine products straight from the input plane with the
/// weights in registers, where the general path gathers a patch of nine values and runs
/// a panel of four columns for its one column (137 instructions an output on the
/// Cortex-M4F). Windows reaching into the padding are gathered as there. The finished
/// sums go to `put(first position, sums)` in runs of up to [`RUN`] along a row.
#[inline(always)]
fn depthwise3x3<A: Quant, B: Quant, const ROWSUM: bool, const UNIT: bool>(
    plane: &[A],
    geo: &ConvGeometry,
    part: &Q8Product<'_, B>,
    pad: A,
    out: &mut impl PatchOut<A, B>,
    (first, finite): (usize, bool),
) {
    let mut wt = [0i32; 9];
    for (t, v) in wt.iter_mut().enumerate() {
        *v = part
            .packed
            .get(q8::group_index(9, t, 0, true))
            .map_or(0, |b| b.widen());
    }
    // The zero points' and the bias's terms, once: `sum + base - zb * rowsum`.
    let (Some(base), zb) = (finish_sum(part, 0, 0, 0), zero_at(part.b_zp, 0)) else {
        return;
    };
    let plane = plane.get(..geo.h * geo.w).unwrap_or_default();
    // The cores with a path of their own over padded strip rows (DSP, x86-64). On
    // the DSP cores it takes every group it can, known from the types alone, so that
    // the rows below are not compiled as its fallback.
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    if UNIT && takes_strips::<A, B, _, ROWSUM>(out) {
        depthwise_strips(plane, geo, part, (&wt, base), pad, out, (first, finite));
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if UNIT
        && !portable_only()
        && depthwise_strips::<A, B, ROWSUM>(
            plane,
            geo,
            part,
            (&wt, base),
            pad,
            out,
            (first, finite),
        )
    {
        return;
    }
    depthwise_rows::<A, ROWSUM, UNIT>(
        plane,
        geo,
        (&wt, base, if ROWSUM { zb } else { 0 }),
        pad,
        |pos, sums| {
            if UNIT {
                out.run(part, first + pos, sums, finite);
            } else {
                hand_over(out, part, first + pos, sums, finite);
            }
        },
    );
}

/// `out.run(..)` out of line, for strided rows: [`depthwise_rows`] hands over their runs
/// from four places, and each inlined copy of the requantizing loop took about 1.3 KB on
/// the Cortex-M4F; a call per run of up to [`RUN`] outputs costs little. (Unit steps
/// hand over from one place, inlined: the call cost 1 % of the instructions and 80 bytes
/// of stack on the riscv32.)
#[inline(never)]
fn hand_over<A: Quant, B: Quant>(
    out: &mut impl PatchOut<A, B>,
    part: &Q8Product<'_, B>,
    at: usize,
    sums: &[i32],
    finite: bool,
) {
    out.run(part, at, sums, finite);
}

/// The rows of [`depthwise3x3`]: weights `wt`, finished sums `v + base - zb * rowsum`
/// (the window's sum only if `ROWSUM`); `UNIT`: unit horizontal steps (`geo.sw == 1`,
/// [`depthwise_groups`] checks). Apart from [`depthwise_groups`] on cores with
/// the DSP extension, so that the stack holds its frame or [`depthwise_strips`]'s, not both.
#[cfg_attr(all(feature = "dsp", target_arch = "arm"), inline(never))]
#[cfg_attr(not(all(feature = "dsp", target_arch = "arm")), inline(always))]
fn depthwise_rows<A: Quant, const ROWSUM: bool, const UNIT: bool>(
    plane: &[A],
    geo: &ConvGeometry,
    (wt, base, zb): (&[i32; 9], i32, i32),
    pad: A,
    mut put: impl FnMut(usize, &[i32]),
) {
    let (h, w, sw) = (geo.h, geo.w, geo.sw);
    if plane.len() < h * w {
        return;
    }
    if UNIT {
        depthwise_unit::<A, ROWSUM>(plane, geo, (wt, base, zb), pad, put);
        return;
    }
    let ConvGeometry {
        oh, ow, sh, pt, pl, ..
    } = *geo;
    let finish = |(v, r): (i32, i32)| v.wrapping_add(base).wrapping_sub(zb.wrapping_mul(r));
    // Output columns whose windows lie inside the image's columns: `lo..hi`.
    let lo = pl.div_ceil(sw.max(1)).min(ow);
    let hi = (w + pl)
        .checked_sub(2)
        .map_or(0, |e| e.div_ceil(sw.max(1)))
        .clamp(lo, ow);
    let mut run = [0i32; RUN];
    for oy in 0..oh {
        let y0 = (oy * sh).wrapping_sub(pt);
        let row = oy * ow;
        let rows = match plane.get(y0.wrapping_mul(w)..) {
            // On the cores without an FPU every row takes the general path below, for
            // flash: the two copies of the window for the rows inside took 2.1 KB on
            // the riscv32. Strided rows pay a padding test a value there (unit steps
            // take `depthwise_unit`, unchanged).
            Some(r) if !cfg!(tinyonnx_soft_float) && y0 < h && h - y0 >= 3 && lo < hi => {
                Some((&r[..w], &r[w..2 * w], &r[2 * w..3 * w]))
            }
            _ => None,
        };
        let Some((r0, r1, r2)) = rows else {
            // A row of windows reaching above or below the image: the rows it has, value
            // by value, the padding holding x's zero point.
            let line = |k: usize| {
                let iy = y0.wrapping_add(k);
                plane.get(iy.wrapping_mul(w)..).filter(|_| iy < h)
            };
            let (m0, m1, m2) = (line(0), line(1), line(2));
            let at = |r: Option<&[A]>, x: usize| {
                r.filter(|_| x < w)
                    .and_then(|r| r.get(x))
                    .map_or(pad.widen(), |v| v.widen())
            };
            let window = |ox: usize| {
                let x0 = (ox * sw).wrapping_sub(pl);
                let col = |i: usize| {
                    let x = x0.wrapping_add(i);
                    [at(m0, x), at(m1, x), at(m2, x)]
                };
                finish(window_sums::<ROWSUM>([col(0), col(1), col(2)], wt))
            };
            let mut ox = 0;
            while ox < ow {
                let n = (ow - ox).min(RUN);
                for (o, x) in run[..n].iter_mut().zip(ox..) {
                    *o = window(x);
                }
                put(row + ox, &run[..n]);
                ox += n;
            }
            continue;
        };
        // Inside: column `x` of the window is input column `ox * sw - pl + x`.
        let column = |x: usize| [r0[x].widen(), r1[x].widen(), r2[x].widen()];
        // The outputs beside the sides, their columns of padding or of the three rows.
        let side = |ox: usize| {
            let x0 = (ox * sw).wrapping_sub(pl);
            let col = |i: usize| {
                let x = x0.wrapping_add(i);
                if x < w { column(x) } else { [pad.widen(); 3] }
            };
            finish(window_sums::<ROWSUM>([col(0), col(1), col(2)], wt))
        };
        for (from, to) in [(0, lo), (hi, ow)] {
            let mut ox = from;
            while ox < to {
                let n = (to - ox).min(RUN);
                for (o, x) in run[..n].iter_mut().zip(ox..) {
                    *o = side(x);
                }
                put(row + ox, &run[..n]);
                ox += n;
            }
        }
        let mut ox = lo;
        while ox < hi {
            let n = (hi - ox).min(RUN);
            let x0 = ox * sw - pl;
            for (o, x) in run[..n].iter_mut().zip((x0..).step_by(sw)) {
                let cols = [column(x), column(x + 1), column(x + 2)];
                *o = finish(window_sums::<ROWSUM>(cols, wt));
            }
            put(row + ox, &run[..n]);
            ox += n;
        }
    }
}

/// The partial sums [`depthwise_unit`] carries along a row of outputs: `p` holds the
/// next output's left and middle columns' products (and the bias's and zero points'
/// terms), `q` the one after's left column's; with the values' sums if `ROWSUM`.
#[derive(Clone, Copy)]
struct Carry {
    p: (i32, i32),
    q: (i32, i32),
    base: i32,
}

impl Carry {
    /// Takes the next input column's products with the kernel's three columns (and its
    /// values' sum) and gives the output whose right column it is: its raw sum and its
    /// values' sum. Meaningful from the third column of a run on.
    #[inline(always)]
    fn feed(&mut self, (c, r): ([i32; 3], i32)) -> (i32, i32) {
        let out = (self.p.0.wrapping_add(c[2]), self.p.1.wrapping_add(r));
        self.p = (self.q.0.wrapping_add(c[1]), self.q.1.wrapping_add(r));
        self.q = (c[0].wrapping_add(self.base), r);
        out
    }
}

/// [`depthwise_rows`] for unit horizontal steps, every output through one path: runs of
/// up to [`RUN`] outputs take their `RUN + 2` input columns in order, each column's
/// products with the kernel's three columns computed once (three widened values, with
/// the image's missing rows read from a row of padding), an output adding its right
/// column's to the sums carried from the two before ([`Carry`]). A column in the side
/// padding has constant products, computed once.
#[inline(always)]
fn depthwise_unit<A: Quant, const ROWSUM: bool>(
    plane: &[A],
    geo: &ConvGeometry,
    (wt, base, zb): (&[i32; 9], i32, i32),
    pad: A,
    mut put: impl FnMut(usize, &[i32]),
) {
    let ConvGeometry {
        h,
        w,
        oh,
        ow,
        sh,
        pt,
        pl,
        ..
    } = *geo;
    let padding = [pad; RUN + 2];
    let mut run = [0i32; RUN];
    for oy in 0..oh {
        let y0 = (oy * sh).wrapping_sub(pt);
        let line = |k: usize| {
            let iy = y0.wrapping_add(k);
            plane.get(iy.wrapping_mul(w)..).filter(|_| iy < h)
        };
        let lines = [line(0), line(1), line(2)];
        let mut ox = 0;
        while ox < ow {
            let n = (ow - ox).min(RUN);
            // The run's input columns `ox - pl ..`: `lead` in the left padding, `real`
            // in the image (from column `from`), the rest in the right padding.
            let (start, wide) = (ox as isize - pl as isize, w as isize);
            let from = start.clamp(0, wide);
            let to = (start + n as isize + 2).clamp(from, wide);
            let lead = (-start).clamp(0, n as isize + 2) as usize;
            let real = (to - from) as usize;
            let (from, to) = (from as usize, to as usize);
            let [s0, s1, s2] = lines.map(|l| {
                l.and_then(|l| l.get(from..to))
                    .unwrap_or(padding.get(..real).unwrap_or_default())
            });
            carried_run::<A, ROWSUM>([s0, s1, s2], (lead, real, n), (wt, base, zb), pad, &mut run);
            put(oy * ow + ox, &run[..n]);
            ox += n;
        }
    }
}

/// One run of [`depthwise_unit`] into `run` through the sums carried column by column
/// ([`Carry`]): `rows` the run's image columns (`real` after `lead` in the padding),
/// `n` outputs.
#[inline(always)]
fn carried_run<A: Quant, const ROWSUM: bool>(
    [s0, s1, s2]: [&[A]; 3],
    (lead, real, n): (usize, usize, usize),
    (wt, base, zb): (&[i32; 9], i32, i32),
    pad: A,
    run: &mut [i32; RUN],
) {
    let finish = |(v, r): (i32, i32)| {
        if ROWSUM {
            v.wrapping_sub(zb.wrapping_mul(r))
        } else {
            v
        }
    };
    let outside = column_products::<ROWSUM>([pad.widen(); 3], wt);
    let products = |i: usize| match (s0.get(i), s1.get(i), s2.get(i)) {
        (Some(a), Some(b), Some(c)) => {
            column_products::<ROWSUM>([a.widen(), b.widen(), c.widen()], wt)
        }
        _ => outside,
    };
    let column = |i: usize| {
        if i >= lead {
            products(i - lead)
        } else {
            outside
        }
    };
    let mut carry = Carry {
        p: (0, 0),
        q: (0, 0),
        base,
    };
    // Outputs `i - 2` for the columns `i` of the run, the image's in one loop. On the
    // cores without an FPU the first two columns go through the loop before it (one
    // copy of `column` fewer) and both loops stay rolled: `DepthwiseInt8` on the
    // Cortex-M3 took 9,436 B of code, now 7,880, and 1 % fewer instructions.
    let inside = (lead.max(2), (lead + real).max(2));
    if cfg!(tinyonnx_soft_float) {
        for i in 0..inside.0 {
            super::rolled();
            let v = finish(carry.feed(column(i)));
            if let Some(o) = i.checked_sub(2).and_then(|j| run.get_mut(j)) {
                *o = v;
            }
        }
    } else {
        carry.feed(column(0));
        carry.feed(column(1));
        for (o, i) in run.iter_mut().zip(2..inside.0) {
            *o = finish(carry.feed(column(i)));
        }
    }
    let skip = inside.0 - lead;
    let [t0, t1, t2] = [s0, s1, s2].map(|s| s.get(skip..).unwrap_or_default());
    let out = run.get_mut(inside.0 - 2..).unwrap_or_default();
    for ((o, a), (b, c)) in out.iter_mut().zip(t0).zip(t1.iter().zip(t2)) {
        if cfg!(tinyonnx_soft_float) {
            super::rolled();
        }
        let col = [a.widen(), b.widen(), c.widen()];
        *o = finish(carry.feed(column_products::<ROWSUM>(col, wt)));
    }
    let at = inside.1 - 2;
    for o in run[at.min(n)..n].iter_mut() {
        *o = finish(carry.feed(outside));
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
extern crate std;

#[cfg(all(test, target_arch = "x86_64"))]
std::thread_local! {
    /// Set by the differential test: the depthwise routine takes the portable path the
    /// boards without the DSP extension take, not the host's vector strips.
    static PORTABLE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Whether the depthwise routine must take the portable path (the differential test's
/// [`PORTABLE`]; never outside the tests).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn portable_only() -> bool {
    #[cfg(all(test, target_arch = "x86_64"))]
    return PORTABLE.with(|p| p.get());
    #[cfg(not(all(test, target_arch = "x86_64")))]
    false
}

/// Values of a strip row of [`strips`]: a run's `RUN + 2` input columns.
#[cfg(any(all(feature = "dsp", target_arch = "arm"), target_arch = "x86_64"))]
const STRIP: usize = RUN + 2;

/// A depthwise 3x3 convolution's rows of outputs (unit steps along the rows) strip by
/// strip: the output columns in strips of up to [`RUN`], and for each strip the input
/// rows copied once into strip rows with their padding (a ring of four; a row of
/// padding for the rows outside the image), so that every output, at the sides too, is
/// a window inside them. `row(strip rows, index of the row's first output, n)` takes
/// each row of `n` outputs, output `i` the window at column `i` of the strip rows.
/// Returns whether it applied (unit steps, a plane of the input's size).
#[cfg(any(all(feature = "dsp", target_arch = "arm"), target_arch = "x86_64"))]
#[inline(always)]
fn strips<A: Quant>(
    plane: &[A],
    geo: &ConvGeometry,
    pad: A,
    mut row: impl FnMut(&[&[A; STRIP]; 3], usize, usize),
) -> bool {
    let ConvGeometry {
        h,
        w,
        oh,
        ow,
        sh,
        sw,
        pt,
        pl,
        ..
    } = *geo;
    if sw != 1 || plane.len() < h * w {
        return false;
    }
    let padrow = [pad; STRIP];
    let mut ox = 0;
    while ox < ow {
        let n = (ow - ox).min(RUN);
        // The strip's input columns `ox - pl ..`: those before `lo` and from `hi` in the
        // padding, which each strip row keeps.
        let start = ox as isize - pl as isize;
        let lo = (-start).clamp(0, n as isize + 2) as usize;
        let hi = (w as isize - start).clamp(lo as isize, n as isize + 2) as usize;
        let mut tags = [usize::MAX; 4];
        let mut ring = [[pad; STRIP]; 4];
        for oy in 0..oh {
            let y0 = (oy * sh).wrapping_sub(pt);
            for k in 0..3 {
                let iy = y0.wrapping_add(k);
                let slot = iy % 4;
                if iy >= h || tags[slot] == iy {
                    continue;
                }
                tags[slot] = iy;
                let src = (iy * w).wrapping_add_signed(start);
                let from = plane.get(src.wrapping_add(lo)..src.wrapping_add(hi));
                if let (Some(from), Some(to)) = (from, ring[slot].get_mut(lo..hi)) {
                    copy_values(to, from);
                }
            }
            let row_at = |k: usize| {
                let iy = y0.wrapping_add(k);
                if iy < h { &ring[iy % 4] } else { &padrow }
            };
            let rows = [row_at(0), row_at(1), row_at(2)];
            row(&rows, oy * ow + ox, n);
        }
        ox += n;
    }
    true
}

/// `to.copy_from_slice(from)` (equal lengths) for a strip row: on Arm four values at a
/// time by a small routine, LLVM otherwise calling its `memcpy` (190 instructions for
/// a row of 28 unaligned bytes).
#[cfg(any(all(feature = "dsp", target_arch = "arm"), target_arch = "x86_64"))]
#[inline(always)]
fn copy_values<A: Quant>(to: &mut [A], from: &[A]) {
    #[cfg(all(feature = "dsp", target_arch = "arm"))]
    if A::SIGNED_BYTE || A::UNSIGNED_BYTE {
        let words = from.len().min(to.len()) / 4;
        // Safety: `from` and `to` both hold at least `4 * words` one-byte values (checked
        // just above), which the routine reads and writes at any alignment.
        unsafe {
            super::arch::arm::dsp::tinyonnx_copy_words(
                to.as_mut_ptr().cast(),
                from.as_ptr().cast(),
                words as u32,
            );
        }
        for (d, s) in to.iter_mut().zip(from).skip(4 * words) {
            *d = *s;
        }
        return;
    }
    for (d, s) in to.iter_mut().zip(from) {
        *d = *s;
    }
}

/// The body of the x86-64 [`depthwise_strips`], written out in each of its variants: a
/// closure takes the target features of the function it is written in, not of one it
/// is inlined into (through an inlined helper, the AVX2 copy ran its rows without AVX2).
#[cfg(target_arch = "x86_64")]
macro_rules! depthwise_strips_body {
    ($args:expr, $out:expr, $at:expr) => {{
        let (plane, geo, part, (wt, base), pad): StripArgs<'_, '_, _, _> = $args;
        let (out, (first, finite)) = ($out, $at);
        strips(plane, geo, pad, |rows, at, n| {
            // All of a run's outputs summed, whatever `n`: loops of constant length keep
            // the sums in registers (cut to `n`, they went through memory every pass:
            // twice the time).
            let mut acc = [base; RUN];
            for (row, taps) in rows.iter().zip(wt.chunks_exact(3)) {
                for (k, &t) in taps.iter().enumerate() {
                    for (i, a) in acc.iter_mut().enumerate() {
                        *a = a.wrapping_add(row[i + k].widen().wrapping_mul(t));
                    }
                }
            }
            out.run(part, first + at, &acc[..n.min(RUN)], finite);
        })
    }};
}

/// A depthwise 3x3 convolution through [`strips`] on x86-64 hosts: each row of
/// outputs as nine passes over the run, one per weight, `acc[i] += x[i + k] * w` (loops
/// the compiler turns into vector code), then handed to `out.run`. Returns whether it
/// applied (no weight zero points, unit steps).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn depthwise_strips<A: Quant, B: Quant, const ROWSUM: bool>(
    plane: &[A],
    geo: &ConvGeometry,
    part: &Q8Product<'_, B>,
    (wt, base): (&[i32; 9], i32),
    pad: A,
    out: &mut impl PatchOut<A, B>,
    (first, finite): (usize, bool),
) -> bool {
    if ROWSUM {
        return false;
    }
    let args = (plane, geo, part, (wt, base), pad);
    if super::arch::x86_64::cpu::avx2() {
        // Safety: the CPU has AVX2 and FMA (checked).
        unsafe { depthwise_strips_avx2(args, out, (first, finite)) }
    } else {
        depthwise_strips_body!(args, out, (first, finite))
    }
}

/// The arguments of [`depthwise_strips`]'s body but the outputs.
#[cfg(target_arch = "x86_64")]
type StripArgs<'a, 'p, A, B> = (
    &'a [A],
    &'a ConvGeometry,
    &'a Q8Product<'p, B>,
    (&'a [i32; 9], i32),
    A,
);

/// [`depthwise_strips`]'s body compiled for AVX2 (the 256-bit integer loops a build for
/// any x86-64 CPU does not have: 2.2 times ONNX Runtime's time on `DepthwiseInt8`
/// without).
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn depthwise_strips_avx2<A: Quant, B: Quant>(
    args: StripArgs<'_, '_, A, B>,
    out: &mut impl PatchOut<A, B>,
    at: (usize, bool),
) -> bool {
    depthwise_strips_body!(args, out, at)
}

/// One-byte requantized outputs that [`depthwise_strips`] writes itself (on cores with the
/// DSP extension and a floating-point unit): the output tensor as bytes, its
/// multiplier and zero point.
#[cfg(all(feature = "dsp", target_arch = "arm"))]
struct DwBytes<'y> {
    y: *mut u8,
    len: usize,
    multiplier: f32,
    zp: i32,
    _y: core::marker::PhantomData<&'y mut [u8]>,
}

#[cfg(all(feature = "dsp", target_arch = "arm"))]
impl<'y> DwBytes<'y> {
    /// `y` as bytes, with `multiplier` and zero point `zp`; `None` unless `Q` is a
    /// one-byte integer.
    #[inline(always)]
    fn of<Q: Quant>(y: &'y mut [Q], multiplier: f32, zp: i32) -> Option<Self> {
        (Q::SIGNED_BYTE || Q::UNSIGNED_BYTE).then(|| Self {
            y: y.as_mut_ptr().cast::<u8>(),
            len: y.len(),
            multiplier,
            zp,
            _y: core::marker::PhantomData,
        })
    }
}

/// Whether [`depthwise_strips`] takes a unit-step depthwise group on this core with
/// the DSP extension: a floating-point unit, one-byte values, weights and outputs, and
/// no weight zero points (`ROWSUM` false).
#[cfg(all(feature = "dsp", target_arch = "arm"))]
#[inline(always)]
fn takes_strips<A: Quant, B: Quant, O: PatchOut<A, B>, const ROWSUM: bool>(_: &O) -> bool {
    cfg!(target_abi = "eabihf")
        && !ROWSUM
        && (A::SIGNED_BYTE || A::UNSIGNED_BYTE)
        && (B::SIGNED_BYTE || B::UNSIGNED_BYTE)
        && O::BYTES
}

/// A depthwise 3x3 convolution group with unit steps through [`strips`] on cores with
/// the DSP extension, for what [`takes_strips`] admits: two outputs at a time from
/// `dsp::tinyonnx_dw3x3_*`, requantized there; with a multiplier that is not finite
/// (which the routines' rounding does not handle) every output in Rust, slowly.
#[cfg(all(feature = "dsp", target_arch = "arm"))]
#[inline(never)]
fn depthwise_strips<A: Quant, B: Quant, O: PatchOut<A, B>>(
    plane: &[A],
    geo: &ConvGeometry,
    part: &Q8Product<'_, B>,
    (wt, base): (&[i32; 9], i32),
    pad: A,
    out: &mut O,
    (first, finite): (usize, bool),
) {
    use super::arch::arm::dsp;
    // `takes_strips` holds: the outputs are bytes, and the weights, bytes too, lie
    // within `i16` as `Dw3Args` needs.
    let Some(b) = out.bytes(part) else {
        return;
    };
    if b.len < first + geo.oh * geo.ow {
        // A bug in generated code; the portable rows would skip such outputs too.
        return;
    }
    let requant = (b.multiplier, MAGIC, magic_offset(b.zp));
    let mut args = dsp::Dw3Args::new(wt, base, requant);
    // Output `i` of a strip requantized here (apart: rare, and its frame would add to
    // every row's): the last of a row of odd length, or every one when the multiplier
    // is not finite (`FINITE` false, `requantize` then). The instances for the output
    // type (`SIGNED`) only.
    #[cold]
    #[inline(never)]
    fn by_value<A: Quant, const SIGNED: bool, const FINITE: bool>(
        (wt, base, (m, zp)): (&[i32; 9], i32, (f32, i32)),
        rows: &[&[A; STRIP]; 3],
        i: usize,
    ) -> u8 {
        // The window's sum as a loop of scalars (arrays of its columns took this cold
        // frame to 156 bytes at `opt-level = "s"`, on top of the routine's); wrapping
        // sums in any order are the same.
        // Output `i` of a strip (`i < RUN`) reads columns `i..i + 3` of its rows, which
        // hold `STRIP = RUN + 2` values: the clamp only lets the compiler see it.
        let i = i.min(STRIP - 3);
        let mut v = base;
        for (r, row) in rows.iter().enumerate() {
            for k in 0..3 {
                v = v.wrapping_add(row[i + k].widen().wrapping_mul(wt[3 * r + k]));
            }
        }
        if SIGNED {
            requantize_with::<i8>(v, m, zp, FINITE) as u8
        } else {
            requantize_with::<u8>(v, m, zp, FINITE)
        }
    }
    let ctx = (wt, base, (b.multiplier, b.zp));
    let value = |rows: &[&[A; STRIP]; 3], i: usize, finite: bool| match (O::SIGNED, finite) {
        (true, true) => by_value::<A, true, true>(ctx, rows, i),
        (true, false) => by_value::<A, true, false>(ctx, rows, i),
        (false, true) => by_value::<A, false, true>(ctx, rows, i),
        (false, false) => by_value::<A, false, false>(ctx, rows, i),
    };
    strips(plane, geo, pad, |rows, at, n| {
        args.rows = rows.map(|r| r.as_ptr().cast::<u8>());
        // Safety: each strip row holds `STRIP >= n + 2` bytes, all the routine reads for
        // `n / 2` pairs; the output has at least `first + oh * ow >= first + at + n`
        // bytes (checked above), the routine writing `n / 2 * 2` from `first + at` and
        // `by_value` the odd one after them, or `by_value` all `n`; `A` is a one-byte
        // integer (`takes_strips`), as are the outputs (`PatchOut::bytes`).
        unsafe {
            let y = b.y.add(first + at);
            if !finite {
                for i in 0..n {
                    y.add(i).write(value(rows, i, false));
                }
                return;
            }
            let pairs = (n / 2) as u32;
            match (A::SIGNED_BYTE, O::SIGNED) {
                (true, true) => dsp::tinyonnx_dw3x3_s8_s8(&args, y, pairs),
                (true, false) => dsp::tinyonnx_dw3x3_s8_u8(&args, y, pairs),
                (false, true) => dsp::tinyonnx_dw3x3_u8_s8(&args, y, pairs),
                (false, false) => dsp::tinyonnx_dw3x3_u8_u8(&args, y, pairs),
            }
            if n % 2 == 1 {
                y.add(n - 1).write(value(rows, n - 1, true));
            }
        }
    });
}

/// Bytes of interleaved patches [`positions16`] keeps on the stack (host only: no
/// plan reserves arena for it): sixteen patches of up to 1,024 values.
#[cfg(target_arch = "x86_64")]
const VNNI_BYTES: usize = 16 * 1024;

/// The first output positions of a convolution's group (image `plane`), in blocks of
/// sixteen, through [`super::arch::x86_64::q8::position_sums`] where the CPU has VNNI
/// (else `position_sums_avx2` where it has AVX2), A and B are bytes and the patches fit
/// [`VNNI_BYTES`]:
/// each patch gathered, then interleaved by groups of four values, and every column's
/// sixteen finished sums (zero points and bias in) handed to `put(first position,
/// column, sums)`. Returns how many positions it did (0: none, the caller does them
/// all).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn positions16<A: Quant, B: Quant>(
    part: &Q8Product<'_, B>,
    plane: &[A],
    geo: &ConvGeometry,
    (k, pad): (usize, A),
    mut put: impl FnMut(usize, usize, &[i32; 16]),
) -> usize {
    use super::arch::x86_64::{
        cpu,
        q8::{POSITIONS, interleave16, position_sums, position_sums_avx2},
    };
    let (cg, ow) = (geo.c / geo.g.max(1), geo.ow);
    let groups = q8::groups(k);
    let blocks = geo.oh * ow / POSITIONS;
    if !(B::SIGNED_BYTE && (A::SIGNED_BYTE || A::UNSIGNED_BYTE))
        || blocks == 0
        || groups * 4 * POSITIONS > VNNI_BYTES
    {
        return 0;
    }
    let vnni = cpu::vnni();
    if !(vnni || cpu::avx2()) {
        return 0;
    }
    // Signed activations offset by 128 into the unsigned bytes both routines take (the
    // values past `k` too: their weights are zero).
    let flip = if A::SIGNED_BYTE { 0x8080_8080 } else { 0 };
    let rowsum_needed = !part.b_zp.is_empty();
    // The sixteen patches one after another (each `4 * groups` values), then by groups
    // of four values (`words[g * 16 + q]`: group `g` of patch `q`), transposed only once
    // all are gathered (read back at once, the byte stores would stall the loads).
    let stride = 4 * groups;
    let mut words = [0u32; VNNI_BYTES / 4];
    let mut rowsums = [0i32; POSITIONS];
    // Per column: what the zero points and bias add (less, for signed activations, the
    // offset's `128 * colsum`) and B's zero point.
    let column = |j: usize| {
        let constant = finish_sum(part, j, 0, 0).unwrap_or(0);
        let offset = if A::SIGNED_BYTE {
            part.colsum.get(j).copied().unwrap_or(0).wrapping_mul(128)
        } else {
            0
        };
        (constant.wrapping_sub(offset), zero_at(part.b_zp, j))
    };
    let ConvGeometry {
        h,
        w,
        kh,
        kw,
        sh,
        dh,
        pt,
        pl,
        ..
    } = *geo;
    let pad_byte = pad.widen() as u8;
    let signed = |b: u8| {
        if A::SIGNED_BYTE {
            i32::from(b as i8)
        } else {
            i32::from(b)
        }
    };
    // The products, finishing and output of the sixteen positions from `p0`, once
    // `words` holds their patches.
    let mut products = |p0: usize, words: &[u32], rowsums: &[i32; POSITIONS]| {
        // Safety: A and B are one-byte integers (checked), so the weights' view keeps
        // every byte; `words`' bytes are its `4 * len` initialized bytes (u8 has no
        // alignment); the CPU has AVX-512F, BW and VNNI for `position_sums`, AVX2 for
        // `position_sums_avx2` (checked); both check the lengths.
        unsafe {
            let wp =
                core::slice::from_raw_parts(part.packed.as_ptr().cast::<i8>(), part.packed.len());
            let bytes = core::slice::from_raw_parts(words.as_ptr().cast::<u8>(), 4 * words.len());
            let each = |j: usize, sums: &[i32; POSITIONS]| {
                let (add, zb) = column(j);
                let mut done = [0i32; POSITIONS];
                for ((d, &v), &r) in done.iter_mut().zip(sums).zip(rowsums) {
                    *d = v.wrapping_add(add).wrapping_sub(zb.wrapping_mul(r));
                }
                put(p0, j, &done);
            };
            if vnni {
                position_sums(bytes, groups, wp, part.n, each);
            } else {
                position_sums_avx2(bytes, groups, wp, part.n, each);
            }
        }
    };
    if geo.sw == 1 && geo.dw == 1 && ow >= POSITIONS {
        // Unit column steps: value `e` of sixteen neighbouring positions of one output
        // row is a run of sixteen input values (padding where it leaves the input), so
        // the patches are built value by value, four runs at a time, with no patch
        // gathered. Each output row in blocks of sixteen, the last one ending at the
        // row's end (overlapping the one before: the same values written twice).
        let run = |(oy, ox0): (usize, usize), e: usize| -> [u8; POSITIONS] {
            if e >= k {
                return [0; POSITIONS];
            }
            let (ci, r) = (e / (kh * kw), e % (kh * kw));
            let (ki, kj) = (r / kw, r % kw);
            let iy = (oy * sh + ki * dh).wrapping_sub(pt);
            if iy >= h {
                return [pad_byte; POSITIONS];
            }
            let start = (ci * h + iy) * w;
            let Some(row) = plane.get(start..start + w) else {
                return [pad_byte; POSITIONS];
            };
            let ix0 = (ox0 + kj).wrapping_sub(pl);
            match row.get(ix0..ix0.wrapping_add(POSITIONS)) {
                Some(src) => core::array::from_fn(|q| src[q].widen() as u8),
                None => core::array::from_fn(|q| {
                    row.get(ix0.wrapping_add(q))
                        .map_or(pad_byte, |v| v.widen() as u8)
                }),
            }
        };
        let flip_byte = flip as u8;
        for oy in 0..geo.oh {
            let mut ox = 0;
            while ox < ow {
                let ox0 = ox.min(ow - POSITIONS);
                let bytes = words_as_bytes(&mut words);
                interleave16(|e| run((oy, ox0), e), groups, flip_byte, bytes);
                if rowsum_needed {
                    rowsums = [0; POSITIONS];
                    for e in 0..k {
                        for (s, &b) in rowsums.iter_mut().zip(&run((oy, ox0), e)) {
                            *s = s.wrapping_add(signed(b));
                        }
                    }
                }
                products(oy * ow + ox0, &words, &rowsums);
                ox += POSITIONS;
            }
        }
        return geo.oh * ow;
    }
    // Only here: the row path above builds its patches without a gathered copy.
    let mut gathered = [pad; VNNI_BYTES];
    for b in 0..blocks {
        let p0 = b * POSITIONS;
        for (q, (patch, rowsum)) in gathered
            .chunks_exact_mut(stride)
            .zip(rowsums.iter_mut())
            .enumerate()
        {
            let pos = p0 + q;
            let patch = &mut patch[..k];
            gather_patch(plane, geo, (cg, pad), (pos / ow, pos % ow), patch);
            if rowsum_needed {
                *rowsum = patch.iter().fold(0i32, |s, v| s.wrapping_add(v.widen()));
            }
        }
        for (q, patch) in gathered.chunks_exact(stride).take(POSITIONS).enumerate() {
            for (g, quad) in patch.chunks_exact(4).enumerate() {
                let quad = [quad[0], quad[1], quad[2], quad[3]].map(|v| v.widen() as u8);
                words[g * POSITIONS + q] = u32::from_le_bytes(quad) ^ flip;
            }
        }
        products(p0, &words, &rowsums);
    }
    blocks * POSITIONS
}

/// `words` as the bytes it is made of.
#[cfg(target_arch = "x86_64")]
fn words_as_bytes(words: &mut [u32]) -> &mut [u8] {
    // Safety: the `4 * len` bytes of `words`, all initialized; u8 has no alignment and
    // every byte pattern is a valid u32, so writes through the view keep `words` valid.
    unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), 4 * words.len()) }
}

/// The patch of output position `(oy, ox)` of `geo` over one image's group `plane` of
/// `cg` channels (`pad`: the value of the padding).
#[inline(always)]
fn gather_patch<A: Copy>(
    plane: &[A],
    geo: &ConvGeometry,
    (cg, pad): (usize, A),
    (oy, ox): (usize, usize),
    patch: &mut [A],
) {
    let ConvGeometry {
        h,
        w,
        kh,
        kw,
        sh,
        sw,
        dh,
        dw,
        pt,
        pl,
        ..
    } = *geo;
    // A window inside the input with unit column dilation: each kernel row is a run of
    // `kw` input values.
    let (y0, x0) = ((oy * sh).wrapping_sub(pt), (ox * sw).wrapping_sub(pl));
    let inside = dw == 1 && y0 < h && x0 < w && y0 + (kh - 1) * dh < h && x0 + kw <= w;
    if inside && copy_window(plane, (h, w), (y0, x0), (cg, kh, kw, dh), patch) {
        return;
    }
    let mut e = 0;
    for ci in 0..cg {
        let chan = plane.get(ci * h * w..).unwrap_or_default();
        for ki in 0..kh {
            let iy = (oy * sh + ki * dh).wrapping_sub(pt);
            for kj in 0..kw {
                let ix = (ox * sw + kj * dw).wrapping_sub(pl);
                patch[e] = if iy < h && ix < w {
                    chan.get(iy * w + ix).copied().unwrap_or(pad)
                } else {
                    pad
                };
                e += 1;
            }
        }
    }
}

/// The patch of a window inside the input (top-left `(y0, x0)`, unit column dilation):
/// per channel and kernel row, `kw` values copied as a run. False, having written
/// nothing usable, where a run would leave `plane` (not for a window inside it).
#[inline(always)]
fn copy_window<A: Copy>(
    plane: &[A],
    (h, w): (usize, usize),
    (y0, x0): (usize, usize),
    (cg, kh, kw, dh): (usize, usize, usize, usize),
    patch: &mut [A],
) -> bool {
    let mut runs = patch.chunks_exact_mut(kw.max(1));
    for ci in 0..cg {
        for ki in 0..kh {
            let at = ci * h * w + (y0 + ki * dh) * w + x0;
            let (Some(src), Some(dst)) = (plane.get(at..at + kw), runs.next()) else {
                return false;
            };
            copy_run(dst, src);
        }
    }
    true
}

/// `dst = src` (equal lengths): the usual kernel widths as copies of a known size, a
/// few moves in place of the library call a copy of a run-time length becomes (which
/// cost more than the copy in a patch of 3-value runs).
#[inline(always)]
fn copy_run<A: Copy>(dst: &mut [A], src: &[A]) {
    #[inline(always)]
    fn fixed<A: Copy, const N: usize>(dst: &mut [A], src: &[A]) -> bool {
        match (<&mut [A; N]>::try_from(dst), <&[A; N]>::try_from(src)) {
            (Ok(d), Ok(s)) => {
                *d = *s;
                true
            }
            _ => false,
        }
    }
    let done = match dst.len() {
        1 => fixed::<A, 1>(dst, src),
        3 => fixed::<A, 3>(dst, src),
        5 => fixed::<A, 5>(dst, src),
        7 => fixed::<A, 7>(dst, src),
        _ => false,
    };
    if !done {
        dst.copy_from_slice(src);
    }
}

/// Every sum of a convolution on integers, from the weights as they are (`w [m, c/g, kh,
/// kw]`, known only when the model runs): `sum((x - a_zp)(w - b_zp[channel]))` in i32,
/// padding contributing nothing, handed to `write(index of y, channel, sum)`.
#[inline]
pub fn conv_sums<A: Quant, B: Quant>(
    x: &[A],
    w: &[B],
    geo: &ConvGeometry,
    a_zp: i32,
    b_zp: &[B],
    mut write: impl FnMut(usize, usize, i32),
) {
    let ConvGeometry {
        n,
        c,
        h,
        w: wd,
        m,
        g,
        kh,
        kw,
        oh,
        ow,
        sh,
        sw,
        dh,
        dw,
        pt,
        pl,
    } = *geo;
    let (cg, mg) = (c / g.max(1), m / g.max(1));
    for img in 0..n {
        for oc in 0..m {
            let gi = oc / mg.max(1);
            let zb = zero_at(b_zp, oc);
            let kernel = w.get(oc * cg * kh * kw..).unwrap_or_default();
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut acc = 0i32;
                    for ci in 0..cg {
                        let plane = (img * c + gi * cg + ci) * h * wd;
                        for ki in 0..kh {
                            let iy = (oy * sh + ki * dh).wrapping_sub(pt);
                            if iy >= h {
                                continue;
                            }
                            for kj in 0..kw {
                                let ix = (ox * sw + kj * dw).wrapping_sub(pl);
                                if ix >= wd {
                                    continue;
                                }
                                let (Some(xv), Some(wv)) = (
                                    x.get(plane + iy * wd + ix),
                                    kernel.get((ci * kh + ki) * kw + kj),
                                ) else {
                                    continue;
                                };
                                let d = (xv.widen() - a_zp).wrapping_mul(wv.widen() - zb);
                                acc = acc.wrapping_add(d);
                            }
                        }
                    }
                    write(((img * m + oc) * oh + oy) * ow + ox, oc, acc);
                }
            }
        }
    }
}

/// `ConvInteger`: [`conv_sums`] into i32.
#[inline]
pub fn conv_integer<A: Quant, B: Quant>(
    x: &[A],
    w: &[B],
    y: &mut [i32],
    geo: &ConvGeometry,
    a_zp: &[A],
    b_zp: &[B],
) {
    conv_sums(x, w, geo, zero_at(a_zp, 0), b_zp, |at, _, v| {
        if let Some(o) = y.get_mut(at) {
            *o = v;
        }
    });
}

/// `QLinearConv` with weights known only when the model runs: [`conv_sums`] plus the
/// bias, requantized as in [`qlinear_matmul`] (`multiplier` per channel or one value).
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn qlinear_conv<A: Quant, B: Quant, Q: Quant>(
    x: &[A],
    w: &[B],
    y: &mut [Q],
    geo: &ConvGeometry,
    a_zp: &[A],
    b_zp: &[B],
    bias: &[i32],
    multiplier: &[f32],
    y_zp: i32,
) {
    conv_sums(x, w, geo, zero_at(a_zp, 0), b_zp, |at, oc, v| {
        let m = if multiplier.len() == 1 {
            multiplier[0]
        } else {
            multiplier.get(oc).copied().unwrap_or(0.0)
        };
        let v = v.wrapping_add(bias.get(oc).copied().unwrap_or(0));
        if let Some(o) = y.get_mut(at) {
            *o = requantize(v as f32 * m, y_zp);
        }
    });
}

/// `MatMulInteger`: the products in i32.
#[inline]
pub fn matmul_integer<A: Quant, B: Quant>(
    a: &[A],
    b: &[B],
    y: &mut [i32],
    a_zp: &[A],
    b_zp: &[B],
    s: Product,
) {
    products(a, b, a_zp, b_zp, s, |at, _, v| y[at] = v);
}

/// `QLinearMatMul`: the products requantized into `Q`, `y = saturate(round(acc *
/// multiplier[column]) + y_zp)`, `multiplier` (`a_scale * b_scale / y_scale`) per column
/// or one value.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn qlinear_matmul<A: Quant, B: Quant, Q: Quant>(
    a: &[A],
    b: &[B],
    y: &mut [Q],
    a_zp: &[A],
    b_zp: &[B],
    multiplier: &[f32],
    y_zp: i32,
    s: Product,
) {
    products(a, b, a_zp, b_zp, s, |at, j, v| {
        let m = if multiplier.len() == 1 {
            multiplier[0]
        } else {
            multiplier[j]
        };
        y[at] = requantize(v as f32 * m, y_zp);
    });
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// Sends the depthwise routine down the portable path ([`PORTABLE`]) or not; other
    /// hosts than x86-64 have no other path.
    fn set_portable(on: bool) {
        #[cfg(target_arch = "x86_64")]
        PORTABLE.with(|p| p.set(on));
        #[cfg(not(target_arch = "x86_64"))]
        let _ = on;
    }

    /// Runs `f` with the x86-64 instruction-set levels above `level` switched off on
    /// this thread (elsewhere: just runs it).
    fn capped(level: u8, f: impl FnOnce()) {
        #[cfg(target_arch = "x86_64")]
        super::super::arch::x86_64::cpu::with_cap(level, f);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = level;
            f();
        }
    }

    /// The column-by-column sums of the cores without an FPU equal the sixteen lanes',
    /// over row counts that leave a short last group (its weights padded with zeros)
    /// and full-range values of both byte types.
    #[test]
    fn column_sums_equal_lane_sums() {
        for k in 0..=13usize {
            let groups = k.div_ceil(4);
            let x: std::vec::Vec<i8> = (0..k).map(|i| (i as i32 * 77 - 128) as i8).collect();
            let xu: std::vec::Vec<u8> = (0..k).map(|i| (255 + i * 37) as u8).collect();
            // Rows past `k` in the last group are zeros, as the packing pads them.
            let w: std::vec::Vec<i8> = (0..groups * 4 * q8::PANEL)
                .map(|i| {
                    if i / 16 * 4 + i % 4 < k {
                        (i as i32 * 53 - 100) as i8
                    } else {
                        0
                    }
                })
                .collect();
            let start = [7, -1_000_000, i32::MAX - 5, 3];
            let (mut lanes, mut columns) = (start, start);
            portable_sums(&x, &w, &mut lanes);
            portable_sums_shared(&x, &w, &mut columns);
            assert_eq!(lanes, columns, "i8, k {k}");
            let (mut lanes, mut columns) = (start, start);
            portable_sums(&xu, &w, &mut lanes);
            portable_sums_shared(&xu, &w, &mut columns);
            assert_eq!(lanes, columns, "u8, k {k}");
        }
    }

    /// The magic-number rounding against libm's `rintf` over the clamped range, ties
    /// and values near them included.
    #[test]
    fn requantizing_after_rounding_equals_clamping_before() {
        let mut values: std::vec::Vec<f32> = (-70_000..70_000).map(|i| i as f32 * 0.5).collect();
        for e in [20, 21, 22, 23, 24, 25, 30, 31, 40, 100, 127] {
            let p = 2f32.powi(e);
            for d in [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5] {
                values.extend([p + d, -p + d, 1.5 * p + d, -1.5 * p + d]);
            }
        }
        values.extend([
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
            -12_582_912.0,
            -12_582_913.0,
            -0.0,
        ]);
        for &v in &values {
            for zp in [-128, -3, 0, 77, 127] {
                let (a, b): (i8, i8) = (requantize(v, zp), requantize_finite(v, zp));
                assert_eq!(a, b, "i8 {v} {zp}");
            }
            for zp in [0, 128, 255] {
                let (a, b): (u8, u8) = (requantize(v, zp), requantize_finite(v, zp));
                assert_eq!(a, b, "u8 {v} {zp}");
            }
            for zp in [-32768, 0, 32767] {
                let (a, b): (i16, i16) = (requantize(v, zp), requantize_finite(v, zp));
                assert_eq!(a, b, "i16 {v} {zp}");
            }
            for zp in [0, 65535] {
                let (a, b): (u16, u16) = (requantize(v, zp), requantize_finite(v, zp));
                assert_eq!(a, b, "u16 {v} {zp}");
            }
        }
    }

    #[test]
    fn bit_length_by_search_equals_clz() {
        for b in 0..32 {
            for x in [
                1u32 << b,
                (1u32 << b) - 1,
                (1u32 << b) | 1,
                u32::MAX >> b,
                0,
            ] {
                assert_eq!(bit_len_search(x), 32 - x.leading_zeros(), "{x:#x}");
            }
        }
    }

    /// The integer requantization of the cores without an FPU against the float
    /// operations it emulates: sums over the whole `i32` range (beyond 2^24 the
    /// conversion rounds), multipliers from subnormal to large, powers of two whose
    /// products tie, every byte and halfword type.
    #[test]
    fn integer_requantization_equals_the_float_one() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut sums: std::vec::Vec<i32> = (-3000..3000).collect();
        sums.extend([
            i32::MIN,
            i32::MIN + 1,
            i32::MAX,
            i32::MAX - 1,
            1 << 24,
            (1 << 24) + 1,
        ]);
        sums.extend([
            -(1 << 24) - 3,
            (1 << 25) + 3,
            (1 << 30) + 65,
            16_777_217,
            -33_554_435,
        ]);
        for _ in 0..4000 {
            let r = next();
            sums.push((r as i32) >> (r >> 59));
        }
        let mut multipliers: std::vec::Vec<f32> = std::vec![
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            1e-45,
            3e-39,
            f32::MAX,
            -f32::MAX,
            1.0,
            -1.0,
            0.333_333_34,
        ];
        for e in -40..40 {
            multipliers.extend([2f32.powi(e), -2f32.powi(e), 1.5 * 2f32.powi(e)]);
        }
        for _ in 0..300 {
            let r = next();
            let m = f32::from_bits(((r as u32) & 0x3fff_ffff) | 0x1000_0000) * 1e-6;
            multipliers.push(if r >> 63 == 1 { -m } else { m });
        }
        // Multipliers that are not finite against `requantize`'s clamps and NaN.
        for &v in &sums {
            for m in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
                let y = v as f32 * m;
                for zp in [-128, 0, 127] {
                    let (a, b): (i8, i8) = (requantize_int(v, m, zp), requantize(y, zp));
                    assert_eq!(a, b, "i8 {v} * {m:e} {zp}");
                }
                let (a, b): (u8, u8) = (requantize_int(v, m, 9), requantize(y, 9));
                assert_eq!(a, b, "u8 {v} * {m:e}");
            }
        }
        for &m in &multipliers {
            for &v in &sums {
                let x = v as f32 * m;
                for zp in [-128, -3, 0, 77, 127] {
                    let (a, b): (i8, i8) = (requantize_int(v, m, zp), requantize_finite(x, zp));
                    assert_eq!(a, b, "i8 {v} * {m:e} {zp}");
                }
                for zp in [0, 128, 255] {
                    let (a, b): (u8, u8) = (requantize_int(v, m, zp), requantize_finite(x, zp));
                    assert_eq!(a, b, "u8 {v} * {m:e} {zp}");
                }
                for zp in [-32768, 0, 32767] {
                    let (a, b): (i16, i16) = (requantize_int(v, m, zp), requantize_finite(x, zp));
                    assert_eq!(a, b, "i16 {v} * {m:e} {zp}");
                }
                let (a, b): (u16, u16) = (requantize_int(v, m, 7), requantize_finite(x, 7));
                assert_eq!(a, b, "u16 {v} * {m:e}");
            }
        }
    }

    #[test]
    fn rounding_equals_rint() {
        for i in (-140_000..140_000).step_by(97).chain(-300..300) {
            for d in [0.0f32, 0.25, 0.5, 0.499_999_97, 0.500_000_06, 0.75] {
                let v = i as f32 * 0.5 + d;
                assert_eq!(round_even(v), libm::rintf(v) as i32, "{v}");
            }
        }
    }

    /// The packed product against the definition: rows of u8 and i8 activations with
    /// a zero point, B packed by `tinyonnx_layout::q8` (K not a multiple of 4, N not of
    /// the panel), zero points per column, an int32 bias, per-column multipliers.
    #[test]
    fn packed_products_equal_the_definition() {
        let (rows, k, n) = (3, 11, 6);
        let b: [i8; 66] = core::array::from_fn(|i| ((i * 37 + 11) % 255) as u8 as i8);
        let mut bp = [0i8; q8::packed_len(11, 6)];
        let mut colsum = [0i32; 6];
        for r in 0..k {
            for c in 0..n {
                bp[q8::index(k, r, c)] = b[r * n + c];
                colsum[c] += i32::from(b[r * n + c]);
            }
        }
        let b_zp: [i8; 6] = [0, 1, -3, 7, -128, 127];
        let bias = [1000, -20, 0, 5, -77_777, 31];
        let mult = [0.001f32, 0.002, 0.0005, 0.003, 0.0001, 0.01];
        let a: [u8; 33] = core::array::from_fn(|i| ((i * 71 + 5) % 256) as u8);
        let mut y = [0i8; 18];
        let p = Q8Product {
            rows,
            k,
            n,
            packed: &bp,
            colsum: &colsum,
            bias: &bias,
            offset: &[],
            a_zp: 9,
            b_zp: &b_zp,
            multiplier: &mult,
            y_zp: -3,
            pairs: false,
        };
        qlinear_matmul_q8(&a, &p, &mut y);
        for i in 0..rows {
            for j in 0..n {
                let acc: i32 = (0..k)
                    .map(|t| {
                        (i32::from(a[i * k + t]) - 9)
                            * (i32::from(b[t * n + j]) - i32::from(b_zp[j]))
                    })
                    .sum::<i32>()
                    + bias[j];
                let want = (libm::rintf(acc as f32 * mult[j]) as i32 - 3).clamp(-128, 127);
                assert_eq!(i32::from(y[i * n + j]), want, "({i}, {j}) sum {acc}");
            }
        }
        // The zero points and the bias folded into per-column offsets, as the compiler
        // folds constant ones: the same outputs.
        let offset: [i32; 6] =
            core::array::from_fn(|j| bias[j] - 9 * colsum[j] + k as i32 * 9 * i32::from(b_zp[j]));
        let mut folded = [0i8; 18];
        let q = Q8Product {
            offset: &offset,
            colsum: &[0; 6],
            bias: &[],
            a_zp: 0,
            ..p
        };
        qlinear_matmul_q8(&a, &q, &mut folded);
        assert_eq!(folded, y);
    }

    #[test]
    fn integer_products_equal_the_definition() {
        let mut state = 7u32;
        let mut next = move || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        };
        for (batch, m, k, n, b_batched) in [
            (1, 1, 64, 32, false),
            (2, 3, 7, 19, true),
            (1, 2, 5, 8, false),
            (3, 1, 1, 3, false),
        ] {
            let a: [u8; 512] = core::array::from_fn(|_| next());
            let b: [i8; 2048] = core::array::from_fn(|_| next() as i8);
            let b_zp: [i8; 32] = core::array::from_fn(|_| next() as i8);
            let a_zp = [next()];
            let s = Product {
                batch,
                m,
                k,
                n,
                b_batched,
            };
            let mut y = [0i32; 256];
            matmul_integer(&a, &b, &mut y, &a_zp, &b_zp[..n], s);
            for p in 0..batch {
                let bb = if b_batched { p * k * n } else { 0 };
                for i in 0..m {
                    for j in 0..n {
                        let want: i32 = (0..k)
                            .map(|t| {
                                (a[p * m * k + i * k + t] as i32 - a_zp[0] as i32)
                                    * (b[bb + t * n + j] as i32 - b_zp[j] as i32)
                            })
                            .sum();
                        assert_eq!(y[p * m * n + i * n + j], want, "{s:?} ({p}, {i}, {j})");
                    }
                }
            }
        }
    }

    /// The DSP cores' pair order (`q8::pair_order`, summed as their routine does and
    /// unpaired) gives every column's exact sum: at the extremes of both activation
    /// types (where the upper column's sum comes within 1 % of 2^23 in a pass), over
    /// one pass and over up to ten.
    #[test]
    fn pair_order_sums_equal_the_direct_ones() {
        fn case<A: Quant>(k: usize, x: impl Fn(usize) -> A, w: impl Fn(usize, usize) -> i8) {
            let n = 8;
            let mut packed = std::vec![0i8; q8::packed_len(k, n)];
            for r in 0..k {
                for c in 0..n {
                    packed[q8::index(k, r, c)] = w(r, c);
                }
            }
            assert!(
                q8::pair_order(&mut packed),
                "k {k}: every pair has its form"
            );
            let xs: std::vec::Vec<A> = (0..k).map(x).collect();
            let mut got = std::vec![0i32; n];
            let passes = PairPasses::new(&xs, k);
            for (pi, panel) in packed.chunks_exact(q8::groups(k) * 16).enumerate() {
                got[pi * 4..pi * 4 + 4].copy_from_slice(&passes.panel(panel));
            }
            for (c, &g) in got.iter().enumerate() {
                let want = (0..k).fold(0i32, |s, r| {
                    s.wrapping_add(xs[r].widen() * i32::from(w(r, c)))
                });
                assert_eq!(g, want, "k {k}, column {c}");
            }
        }
        // Seeded weights, but no upper -128 over a negative lower weight (no form).
        let seeded = |r: usize, c: usize| {
            let v = ((r * 29 + c * 71 + 5) % 256) as u8 as i8;
            if c % 2 == 1 && v == i8::MIN { 127 } else { v }
        };
        // The largest upper sums: -128 over a lower 0, or -127 under a lower -128.
        let low = |_: usize, c: usize| if c % 2 == 1 { -128 } else { 0 };
        let high = |_: usize, c: usize| if c % 2 == 1 { -127 } else { -128 };
        for k in [4, 8, 252, 256, 260, 508, 512, 1024, 2308] {
            case::<i8>(k, |_| -128, low);
            case::<i8>(k, |_| -128, high);
            case::<i8>(k, |_| 127, low);
            case::<i8>(k, |r| (r * 37 % 256) as u8 as i8, seeded);
            case::<u8>(k, |_| 255, low);
            case::<u8>(k, |_| 255, |_, _| 127);
            case::<u8>(k, |r| (r * 53 % 256) as u8, seeded);
        }
        // An upper -128 over a negative lower weight has no form: left as it was.
        let mut packed = [0i8; 16];
        packed[q8::index(4, 2, 0)] = -1;
        packed[q8::index(4, 2, 1)] = -128;
        let before = packed;
        assert!(!q8::pair_order(&mut packed));
        assert_eq!(packed, before);
    }

    /// The packed convolution equals the one from the weights as they are on shapes that
    /// take every path of the packed one (on x86-64 with VNNI: blocks of sixteen
    /// positions with a partial block after, or per output row from runs, eight and
    /// four columns with padded ones, patches of 27 and 100 values; elsewhere, and at
    /// the lower x86-64 levels, AVX2 and portable, the per-position products): i8 and u8
    /// activations, weight zero points none, per tensor and per channel.
    #[test]
    fn packed_convolution_equals_the_direct_one_on_every_path() {
        fn case<A: Quant>(geo: ConvGeometry, a_zp: A, b_zp: &[i8], seed: usize) {
            let (cg, mg) = (geo.c / geo.g, geo.m / geo.g);
            let k = cg * geo.kh * geo.kw;
            let x: std::vec::Vec<A> = (0..geo.n * geo.c * geo.h * geo.w)
                .map(|i| A::narrow(((i * 37 + seed) % 256) as i32 + A::LOW))
                .collect();
            let w: std::vec::Vec<i8> = (0..geo.m * k)
                .map(|i| ((i * 29 + seed * 7) % 255) as u8 as i8)
                .collect();
            let plen = q8::packed_len(k, mg);
            let mut bp = std::vec![0i8; geo.g * plen];
            let mut colsum = std::vec![0i32; geo.m];
            for oc in 0..geo.m {
                for t in 0..k {
                    let v = w[oc * k + t];
                    bp[(oc / mg) * plen + q8::index(k, t, oc % mg)] = v;
                    colsum[oc] += i32::from(v);
                }
            }
            let bias: std::vec::Vec<i32> =
                (0..geo.m).map(|i| (i as i32 * 97) % 500 - 250).collect();
            let mult: std::vec::Vec<f32> = (0..geo.m).map(|i| 0.0005 + 0.0001 * i as f32).collect();
            let p = Q8Product {
                rows: 1,
                k,
                n: mg,
                packed: &bp,
                colsum: &colsum,
                bias: &bias,
                offset: &[],
                a_zp: a_zp.widen(),
                b_zp,
                multiplier: &mult,
                y_zp: 3,
                pairs: false,
            };
            let len = geo.n * geo.m * geo.oh * geo.ow;
            let mut patch = std::vec![a_zp; k];
            let (mut y, mut direct) = (std::vec![0i8; len], std::vec![0i8; len]);
            qlinear_conv_q8(&x, &geo, &p, &mut y, &mut patch);
            qlinear_conv(&x, &w, &mut direct, &geo, &[a_zp], b_zp, &bias, &mult, 3);
            assert_eq!(direct, y, "QLinearConv {geo:?} b_zp {b_zp:?}");
            // The products of the lower x86-64 levels too: AVX2 without VNNI (level 2,
            // where the CPU has VNNI) and portable (0).
            for level in [2, 0] {
                capped(level, || {
                    let mut got = std::vec![0i8; len];
                    qlinear_conv_q8(&x, &geo, &p, &mut got, &mut patch);
                    assert_eq!(
                        direct, got,
                        "QLinearConv {geo:?} b_zp {b_zp:?} level {level}"
                    );
                });
            }
            // The depthwise routine the compiler picks for these shapes, against the
            // same definition.
            let depthwise = q8::depthwise3x3((geo.c, geo.m, geo.g), (geo.kh, geo.kw), (1, 1));
            // Its weights in their own layout, a group's taps in order.
            let dlen = q8::group_len(k, mg, true);
            let mut dp = std::vec![0i8; geo.g * dlen];
            for oc in 0..geo.m {
                for t in 0..k {
                    dp[(oc / mg) * dlen + q8::group_index(k, t, oc % mg, true)] = w[oc * k + t];
                }
            }
            let p = Q8Product { packed: &dp, ..p };
            // Every host path: the vector strips (on x86-64 compiled for AVX2 where the
            // CPU has it, and without: level 0) and the portable one the boards without
            // the DSP extension take.
            for (portable, level) in [(false, u8::MAX), (false, 0), (true, u8::MAX)] {
                if !depthwise {
                    break;
                }
                set_portable(portable);
                capped(level, || {
                    let mut y = std::vec![0i8; len];
                    qlinear_conv_depthwise_q8(&x, &geo, &p, &mut y);
                    assert_eq!(
                        direct, y,
                        "depthwise QLinearConv {geo:?} b_zp {b_zp:?} portable {portable} level {level}"
                    );
                    let mut sums = std::vec![0i32; len];
                    conv_integer_depthwise_q8(
                        &x,
                        &geo,
                        &Q8Product {
                            bias: &[],
                            multiplier: &[],
                            ..p
                        },
                        &mut sums,
                    );
                    let mut direct = std::vec![0i32; len];
                    conv_integer(&x, &w, &mut direct, &geo, &[a_zp], b_zp);
                    assert_eq!(
                        direct, sums,
                        "depthwise ConvInteger {geo:?} b_zp {b_zp:?} portable {portable} level {level}"
                    );
                });
            }
            set_portable(false);
            assert!(
                y.iter().any(|&v| v != y[0]),
                "a constant output tests little"
            );
            let q = Q8Product {
                packed: &bp,
                bias: &[],
                multiplier: &[],
                ..p
            };
            let (mut sums, mut direct) = (std::vec![0i32; len], std::vec![0i32; len]);
            conv_integer_q8(&x, &geo, &q, &mut sums, &mut patch);
            conv_integer(&x, &w, &mut direct, &geo, &[a_zp], b_zp);
            assert_eq!(direct, sums, "ConvInteger {geo:?} b_zp {b_zp:?}");
        }
        let geo = |(c, h, w, m, g): (usize, usize, usize, usize, usize), (kh, kw, sh, pad)| {
            let (oh, ow) = ((h + 2 * pad - kh) / sh + 1, (w + 2 * pad - kw) / sh + 1);
            ConvGeometry {
                n: 2,
                c,
                h,
                w,
                m,
                g,
                kh,
                kw,
                oh,
                ow,
                sh,
                sw: sh,
                dh: 1,
                dw: 1,
                pt: pad,
                pl: pad,
            }
        };
        let shapes = [
            // 3x3 over three channels (k = 27), 20 columns: 8 + 8 + 4; 40 positions.
            geo((3, 5, 8, 20, 1), (3, 3, 1, 1)),
            // 5x5 over four channels (k = 100), stride 2, two groups of 6 columns.
            geo((8, 9, 13, 12, 2), (5, 5, 2, 2)),
            // 1x1 (k = 16), 9 columns, no padding.
            geo((16, 4, 9, 9, 1), (1, 1, 1, 0)),
            // Output rows of 21 and 20 positions, unit steps: built run by run, blocks
            // of sixteen per row, the second overlapping the first; padding at both
            // ends of a row and in the first and last rows.
            geo((3, 6, 21, 12, 1), (3, 3, 1, 1)),
            geo((2, 5, 18, 7, 1), (3, 5, 1, 1)),
            geo((4, 3, 20, 6, 2), (1, 1, 1, 0)),
            // Depthwise 3x3 (one channel a group), through both routines: windows inside
            // and in the padding on every side, stride 1 and 2, and without padding; rows
            // of 17 positions.
            geo((5, 6, 17, 5, 5), (3, 3, 1, 1)),
            geo((3, 7, 9, 3, 3), (3, 3, 2, 1)),
            geo((2, 5, 4, 2, 2), (3, 3, 1, 0)),
            // Rows of 72 positions (runs of 32, 32 and 8) with two rows and columns of
            // padding; a one-column image; windows wholly in the padding.
            geo((2, 4, 70, 2, 2), (3, 3, 1, 2)),
            geo((2, 3, 1, 2, 2), (3, 3, 1, 1)),
            geo((1, 2, 2, 1, 1), (3, 3, 1, 3)),
        ];
        for (i, &shape) in shapes.iter().enumerate() {
            for b_zp in [
                &[][..],
                &[5],
                &[
                    0, 3, -2, 5, -128, 1, 9, -9, 4, 0, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0,
                ],
            ] {
                let b_zp = if b_zp.len() > 1 {
                    &b_zp[..shape.m]
                } else {
                    b_zp
                };
                case::<i8>(shape, -5, b_zp, i);
                case::<u8>(shape, 131, b_zp, i);
            }
        }
    }

    /// The packed convolution against the definition: two images, two groups of three
    /// channels, strides, dilations and pads on both axes (padding reads x's zero
    /// point), per-channel weight zero points, multipliers and an int32 bias.
    #[test]
    fn packed_convolution_equals_the_definition() {
        let geo = ConvGeometry {
            n: 2,
            c: 4,
            h: 5,
            w: 6,
            m: 6,
            g: 2,
            kh: 3,
            kw: 2,
            oh: 3,
            ow: 6,
            sh: 2,
            sw: 1,
            dh: 1,
            dw: 2,
            pt: 1,
            pl: 1,
        };
        let (cg, mg, k) = (2, 3, 2 * 3 * 2);
        assert_eq!((geo.h + 1 + 1 - 3) / geo.sh + 1, geo.oh);
        assert_eq!(geo.w + 1 + 1 - 3 + 1, geo.ow);
        let x: [u8; 240] = core::array::from_fn(|i| ((i * 53 + 7) % 256) as u8);
        let w: [i8; 72] = core::array::from_fn(|i| ((i * 29 + 3) % 255) as u8 as i8);
        let plen = q8::packed_len(k, mg);
        let mut bp = [0i8; 2 * q8::packed_len(12, 3)];
        let mut colsum = [0i32; 6];
        for oc in 0..6 {
            let (gi, j) = (oc / mg, oc % mg);
            for t in 0..k {
                let v = w[oc * k + t];
                bp[gi * plen + q8::index(k, t, j)] = v;
                colsum[oc] += i32::from(v);
            }
        }
        let b_zp: [i8; 6] = [0, 3, -2, 5, -128, 1];
        let bias = [100, -3000, 7, 0, 42, -1];
        let mult = [0.002f32, 0.001, 0.004, 0.0005, 0.003, 0.01];
        let p = Q8Product {
            rows: 1,
            k,
            n: mg,
            packed: &bp,
            colsum: &colsum,
            bias: &bias,
            offset: &[],
            a_zp: 17,
            b_zp: &b_zp,
            multiplier: &mult,
            y_zp: 4,
            pairs: false,
        };
        let mut y = [0u8; 2 * 6 * 18];
        let mut patch = [0u8; 12];
        qlinear_conv_q8(&x, &geo, &p, &mut y, &mut patch);
        // The same from the weights as they are.
        let mut direct = [0u8; 2 * 6 * 18];
        qlinear_conv(&x, &w, &mut direct, &geo, &[17], &b_zp, &bias, &mult, 4);
        assert_eq!(direct, y);
        // ConvInteger: the sums without bias or requantization, packed and direct.
        let q = Q8Product {
            bias: &[],
            multiplier: &[],
            ..p
        };
        let mut sums = [0i32; 2 * 6 * 18];
        conv_integer_q8(&x, &geo, &q, &mut sums, &mut patch);
        let mut direct = [0i32; 2 * 6 * 18];
        conv_integer(&x, &w, &mut direct, &geo, &[17], &b_zp);
        assert_eq!(direct, sums);
        assert!(sums.iter().any(|&v| v != 0));
        for img in 0..2 {
            for oc in 0..6 {
                let gi = oc / mg;
                for oy in 0..3 {
                    for ox in 0..6 {
                        let mut acc = bias[oc];
                        for ci in 0..cg {
                            for ki in 0..3 {
                                for kj in 0..2 {
                                    let iy = (oy * 2 + ki) as isize - 1;
                                    let ix = (ox + kj * 2) as isize - 1;
                                    let xv = if (0..5).contains(&iy) && (0..6).contains(&ix) {
                                        let c = gi * cg + ci;
                                        i32::from(
                                            x[((img * 4 + c) * 5 + iy as usize) * 6 + ix as usize],
                                        )
                                    } else {
                                        17
                                    };
                                    let wv = i32::from(w[oc * k + (ci * 3 + ki) * 2 + kj]);
                                    acc += (xv - 17) * (wv - i32::from(b_zp[oc]));
                                }
                            }
                        }
                        let want =
                            (libm::rintf(acc as f32 * mult[oc]) + 4.0).clamp(0.0, 255.0) as u8;
                        let got = y[((img * 6 + oc) * 3 + oy) * 6 + ox];
                        assert_eq!(got, want, "image {img} channel {oc} at ({oy}, {ox})");
                    }
                }
            }
        }
    }
}
