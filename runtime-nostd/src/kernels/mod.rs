//! The kernels generated forward passes call. `no_std`, no allocation; sizes are const
//! parameters so loop bounds are constants.
//!
//! Slices are re-sliced to their exact lengths on entry; with valid generated calls
//! these checks cannot fail and the compiler removes the ones inside the loops.

// Index loops mirror the formulas of the ONNX specification.
#![allow(clippy::needless_range_loop)]

pub mod arch;
pub mod attention;
pub mod binary;
pub mod conv;
pub mod copy;
#[cfg(test)]
mod differential;
pub mod dot;
pub mod gates;
pub mod gemm;
pub mod loss;
pub mod lstm;
pub mod math;
pub mod norm;
pub mod num;
pub mod packed;
pub mod pool;
pub mod quant;
pub mod reduce;
pub mod resize;
pub mod rnn;
pub mod signal;
pub mod softmax;
pub mod unary;
pub mod winograd;

pub use tinyonnx_layout::ALIGN_SLACK;

/// The largest index `(r - 1) rs + (c - 1) cs` of an `r x c` strided view (`r`, `c` at
/// least 1), or `None` where it overflows.
pub(crate) fn last_index((r, rs): (usize, usize), (c, cs): (usize, usize)) -> Option<usize> {
    (r - 1)
        .checked_mul(rs)?
        .checked_add((c - 1).checked_mul(cs)?)
}

/// `scratch` from its first 64-byte boundary (at most [`ALIGN_SLACK`] values in): the
/// arena is only 16-byte aligned and the planner places buffers at any multiple of 4
/// bytes, and panel rows read across two cache lines cost the products about a third.
#[inline(always)]
pub fn cache_aligned(scratch: &mut [f32]) -> &mut [f32] {
    let skip = scratch.as_ptr().align_offset(64).min(ALIGN_SLACK);
    &mut scratch[skip..]
}

/// `y[i] += a * x[i]` over the shorter of the two slices: the inner loop of the Gemm and
/// Conv kernels. With the `fma-vfp4` feature on ARM it runs a hand-written loop of fused
/// multiply-adds (`VFMA.F32`, four elements an iteration); otherwise plain Rust, which the
/// compiler vectorizes on the host.
#[inline(always)]
pub(crate) fn axpy(y: &mut [f32], a: f32, x: &[f32]) {
    let n = y.len().min(x.len());
    // Every row takes the fused routine: measured on the CNN, a length test in front of
    // it costs more (about 1.4 instructions per MAC) than short rows lose to the call.
    #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
    {
        // Safety: `x` and `y` hold at least `n` elements, `y` is exclusively borrowed and
        // cannot overlap `x`; the routine reads `n` floats from `x` and reads and writes
        // `n` floats of `y`, and follows the AAPCS-VFP calling convention.
        unsafe { arch::arm::tinyonnx_axpy_vfma(n as u32, a, x.as_ptr(), y.as_mut_ptr()) };
    }
    // On the cores without an FPU, one rolled loop out of line: each step is two
    // library calls, and the copies unrolled into every product took 3.4 KB of the
    // Transformer's flash on the Cortex-M3.
    #[cfg(tinyonnx_soft_float)]
    axpy_rolled(&mut y[..n], a, &x[..n]);
    #[cfg(not(any(all(feature = "fma-vfp4", target_arch = "arm"), tinyonnx_soft_float)))]
    for (o, &v) in y[..n].iter_mut().zip(&x[..n]) {
        *o += a * v;
    }
}

/// [`axpy`] on the cores without an FPU.
#[cfg(tinyonnx_soft_float)]
#[inline(never)]
fn axpy_rolled(y: &mut [f32], a: f32, x: &[f32]) {
    for (o, &v) in y.iter_mut().zip(x) {
        rolled();
        *o += a * v;
    }
}

/// `sum(a[i] * b[i])` over the shorter slice, in eight independent partial sums (combined
/// pairwise at the end), which the compiler can keep in SIMD registers; a single running
/// sum would serialize on the adds, since float addition is not reassociated.
#[inline(always)]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let chunks = n / 8;
    for c in 0..chunks {
        let (x, y) = (&a[c * 8..c * 8 + 8], &b[c * 8..c * 8 + 8]);
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut tail = 0.0f32;
    for i in chunks * 8..n {
        tail += a[i] * b[i];
    }
    let s4 = [
        acc[0] + acc[4],
        acc[1] + acc[5],
        acc[2] + acc[6],
        acc[3] + acc[7],
    ];
    (s4[0] + s4[2]) + (s4[1] + s4[3]) + tail
}

/// The gate weights of every direction of an `LSTM` or a `GRU`.
#[derive(Debug, Clone, Copy)]
pub enum GateWeights<'a> {
    /// As in the ONNX: `W [DIRS, G * H, INPUT]`, `R [DIRS, G * H, HIDDEN]`,
    /// `B [DIRS, 2 * G * H]` for `G` gates.
    Plain {
        /// Input weights.
        w: &'a [f32],
        /// Recurrence weights.
        r: &'a [f32],
        /// Input and recurrence biases.
        b: Option<&'a [f32]>,
    },
    /// Packed at compile time into panels (see [`packed`]) as the node's kernel reads
    /// them, with the biases summed where the kernel adds them together ([`lstm::lstm`],
    /// [`rnn::gru`] say how).
    Packed {
        /// The packed matrices, one set per direction.
        wr: &'a [f32],
        /// The summed biases, per direction (an LSTM's padded with zeros to
        /// `tinyonnx_layout::lstm::gate_row` values).
        bias: Option<&'a [f32]>,
    },
}

/// `dst.fill(v)`, as [`copy::copy_run`]: a rolled loop on the cores without an FPU (no
/// `memset`).
#[inline(always)]
pub(crate) fn fill_run<T: Copy>(dst: &mut [T], v: T) {
    if cfg!(tinyonnx_soft_float) {
        fill_rolled(dst, v);
    } else {
        dst.fill(v);
    }
}

/// Called in a loop's body: on the microcontrollers an empty statement that may read and
/// write memory, so that the stores before it stay stores (LLVM makes a copy or fill
/// loop a `memcpy` or `memset` call otherwise, even past [`rolled`]).
#[inline(always)]
pub(crate) fn stores_kept() {
    #[cfg(target_os = "none")]
    // Safety: an empty assembly statement executes nothing and touches no register;
    // declaring that it may read and write memory only keeps the stores before it.
    unsafe {
        core::arch::asm!("", options(nostack, preserves_flags))
    };
}

/// `dst` filled with `v` by a loop kept rolled: not a call to `memset` for a run of a
/// few values (nor the 174 B of its code where nothing else needs it).
#[inline(always)]
pub(crate) fn fill_rolled<T: Copy>(dst: &mut [T], v: T) {
    for d in dst {
        *d = v;
        // On the cores without an FPU not `rolled` but `stores_kept`: after a `nomem`
        // statement LLVM still made a constant-length fill a `memset` call (174 B, the
        // Transformer's on the Cortex-M3).
        #[cfg(tinyonnx_soft_float)]
        stores_kept();
        #[cfg(not(tinyonnx_soft_float))]
        rolled();
    }
}

/// `[lo[0], lo[2], hi[0], hi[2]]`, the even values of eight: on x86-64 one SSE shuffle
/// (left to the compiler, stride-2 loops became AVX-512 gathers in native builds, slower
/// than scalar code). For strided convolution panels, pooling and Winograd windows.
#[inline(always)]
pub(crate) fn evens(lo: &[f32; 4], hi: &[f32; 4]) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        arch::x86_64::evens_sse(lo, hi)
    }
    #[cfg(not(target_arch = "x86_64"))]
    [lo[0], lo[2], hi[0], hi[2]]
}

/// Four values of a slice as an array (`at..at + 4`).
#[inline(always)]
pub(crate) fn four(s: &[f32], at: usize) -> &[f32; 4] {
    s[at..at + 4].try_into().expect("four values")
}

/// The channels from which a layer's convolution or max pooling runs, on the
/// microcontrollers, through a function shared by every such layer with its kernel
/// window, the image sizes as values, instead of code specialized on all of its sizes
/// (2-3 KB of flash a convolution, about 0.8 KB a pooling): layers of a network whose
/// many channels take most of the time in products, where the sizes as values cost
/// little (the CIFAR CNN: 18.0 -> 7.9 KB beyond the weights on the Cortex-M4F, +1.8 %
/// instructions). The small models' layers keep their specialized code (the digits
/// CNN, 8 and 16 channels: over 50 % slower with an early form of the shared
/// gathering, 0.6-2.7 % with the shared pooling, for less than 100 B).
pub(crate) const SHARED_CHANNELS: usize = tinyonnx_layout::SHARED_CHANNELS;

/// Called in a loop's body: on the microcontrollers (bare-metal targets), keeps LLVM
/// from unrolling the loop by a runtime count (an assembly statement counts as a call
/// for the Arm and RISC-V unrollers), with [`opaque`] the flash a loop's copies take
/// where speed gains little (a row-wise pass of LayerNorm or Softmax). A constant trip
/// count the RISC-V unroller still unrolls whole: there only [`opaque`] keeps the loop.
#[inline(always)]
pub(crate) fn rolled() {
    #[cfg(target_os = "none")]
    // Safety: an empty assembly statement: no instructions, no registers or memory.
    unsafe {
        core::arch::asm!("", options(nomem, nostack, preserves_flags))
    };
}

/// `n`, hidden from the optimizer on the microcontrollers: a loop over it is then not
/// unrolled whole for a constant count (see [`rolled`]).
#[inline(always)]
pub(crate) fn opaque(n: usize) -> usize {
    #[cfg(target_os = "none")]
    let n = core::hint::black_box(n);
    n
}

/// `v` in its register, its value unknown to the optimizer on the microcontrollers: an
/// empty assembly statement, not [`opaque`]'s `black_box`, which would store and reload
/// it through the stack (each value, in the loops that call [`signed_to_f32`]).
#[inline(always)]
pub(crate) fn in_register(v: u32) -> u32 {
    #[cfg(target_os = "none")]
    let v = {
        let mut v = v;
        // Safety: an empty assembly statement that leaves `v` in its register: no
        // instructions, no memory, no flags.
        unsafe {
            core::arch::asm!("/* {0} */", inout(reg) v, options(pure, nomem, nostack, preserves_flags))
        };
        v
    };
    v
}

/// `s`, its address hidden from the optimizer on the 32-bit microcontrollers (as
/// [`in_register`]), so that it reads the values rather than building known ones.
#[inline(always)]
pub(crate) fn read_from_memory<T>(s: &[T]) -> &[T] {
    #[cfg(all(target_os = "none", target_pointer_width = "32"))]
    {
        let p = s.as_ptr();
        let p = p.with_addr(in_register(p.addr() as u32) as usize);
        // Safety: `in_register` returns its argument, so `p` is `s`'s pointer, with its
        // provenance: its `s.len()` values are `s`'s, borrowed for as long.
        return unsafe { core::slice::from_raw_parts(p, s.len()) };
    }
    #[allow(unreachable_code)]
    s
}

/// `v as f32` by the signed conversion even where the optimizer knows `v >= 0`: on the
/// cores without an FPU it would call the unsigned routine there, a second library
/// conversion (140 B on the riscv32) beside the signed one most models carry.
#[inline(always)]
pub(crate) fn signed_to_f32(v: i32) -> f32 {
    #[cfg(tinyonnx_soft_float)]
    let v = in_register(v as u32) as i32;
    v as f32
}

/// The length below which [`short_run`] hides a run's length.
pub(crate) const SHORT_RUN: usize = 128;

/// `y`, with a short length hidden from the optimizer (as [`opaque`]) when `hide`, for
/// elementwise loops the microcontrollers' unrollers would otherwise copy whole for a
/// small constant count, saving a few instructions a value: the float operations on the
/// cores without an FPU (library calls: MlpRaw's `Mul`, `Sub`, `Div` and bias `Add` over
/// 4 x 10 values took about 1.5 KB on the riscv32), a `QuantizeLinear`'s float clamps
/// on the Arm FPUs. Long runs, which they leave rolled, keep their known length (the
/// Transformer's 400 values: 58 bytes less).
#[inline(always)]
pub(crate) fn short_run<T>(y: &mut [T], hide: bool) -> &mut [T] {
    if hide && y.len() < SHORT_RUN {
        let n = opaque(y.len());
        &mut y[..n]
    } else {
        y
    }
}

/// `y`'s values in order, for an elementwise loop: a run of `from` values or more has a
/// [`rolled`] statement a step, and below [`SHORT_RUN`] its length hidden
/// ([`short_run`]), so that it stays a loop of one value a step, neither copied whole
/// nor by four (the unrollers do either to a constant count whose length is only
/// hidden). A longer run keeps its known length; without the statement the Cortex-M4F's
/// unroller copied its body twelve times a loop (PaddleOCR's classifier, a MobileNetV3
/// of about 150 elementwise nodes: 78.8 -> 59.7 KB of code for 8.5 % more
/// instructions). Runs shorter than `from` are left to the optimizer. `from` comes from
/// [`rolled_from`].
#[inline(always)]
pub(crate) fn run_mut<T>(y: &mut [T], from: usize) -> impl Iterator<Item = &mut T> {
    let roll = y.len() >= from;
    let short = roll && y.len() < SHORT_RUN;
    // `map`, not `inspect`: a `Map` of a slice iterator keeps `zip`'s indexed form, so
    // runs left to the optimizer compile as before.
    #[allow(clippy::manual_inspect)]
    short_run(y, short).iter_mut().map(move |v| {
        if roll {
            rolled();
        }
        v
    })
}

/// Whether [`each_mut`], [`each_from`] and [`each_from2`] take a run of `n` values two
/// values a step: a long run of float arithmetic on the microcontrollers with an FPU.
/// Kept a loop there ([`run_mut`]), two values a step halve the loop's own instructions
/// a value for one more copy of the body (PaddleOCR's classifier on the Cortex-M4F:
/// 3.5 % fewer instructions for 732 B; the Transformer 0.2 % for 84 B).
#[inline(always)]
const fn in_pairs(n: usize) -> bool {
    cfg!(tinyonnx_mcu_fpu) && n >= SHORT_RUN
}

/// `f` on each value of `y`, the one elementwise loop of the unary kernels: two values a
/// step when `pairs` (float arithmetic) and [`in_pairs`] takes the length, otherwise
/// one a step through [`run_mut`] with `from` (from [`rolled_from`]).
#[inline(always)]
pub(crate) fn each_mut<U>(y: &mut [U], from: usize, pairs: bool, mut f: impl FnMut(&mut U)) {
    if pairs && in_pairs(y.len()) {
        let mut out = y.chunks_exact_mut(2);
        for o in &mut out {
            rolled();
            f(&mut o[0]);
            f(&mut o[1]);
        }
        out.into_remainder().iter_mut().for_each(f);
        return;
    }
    for v in run_mut(y, from) {
        f(v);
    }
}

/// `f(y[i], x[i])` for each index of `y` (and `x`), as [`each_mut`].
#[inline(always)]
pub(crate) fn each_from<T: Copy, U>(
    y: &mut [U],
    x: &[T],
    from: usize,
    pairs: bool,
    mut f: impl FnMut(&mut U, T),
) {
    if pairs && in_pairs(y.len()) {
        let (mut out, mut src) = (y.chunks_exact_mut(2), x.chunks_exact(2));
        for (o, v) in (&mut out).zip(&mut src) {
            rolled();
            f(&mut o[0], v[0]);
            f(&mut o[1], v[1]);
        }
        for (o, &v) in out.into_remainder().iter_mut().zip(src.remainder()) {
            f(o, v);
        }
        return;
    }
    for (o, &v) in run_mut(y, from).zip(x) {
        f(o, v);
    }
}

/// `f(y[i], a[i], b[i])` for each index of `y`, as [`each_mut`].
#[inline(always)]
pub(crate) fn each_from2<T: Copy, U>(
    y: &mut [U],
    (a, b): (&[T], &[T]),
    from: usize,
    pairs: bool,
    mut f: impl FnMut(&mut U, T, T),
) {
    if pairs && in_pairs(y.len()) {
        let (mut out, mut xa, mut xb) =
            (y.chunks_exact_mut(2), a.chunks_exact(2), b.chunks_exact(2));
        for ((o, u), v) in (&mut out).zip(&mut xa).zip(&mut xb) {
            rolled();
            f(&mut o[0], u[0], v[0]);
            f(&mut o[1], u[1], v[1]);
        }
        let rest = out
            .into_remainder()
            .iter_mut()
            .zip(xa.remainder())
            .zip(xb.remainder());
        for ((o, &u), &v) in rest {
            f(o, u, v);
        }
        return;
    }
    for ((o, &u), &v) in run_mut(y, from).zip(a).zip(b) {
        f(o, u, v);
    }
}

/// The shortest run [`run_mut`] keeps a loop: none on hosts; on the microcontrollers,
/// where flash is scarce, every run of a `heavy` body (library calls, as float
/// arithmetic on the cores without an FPU; QuantizeLinear's rounding and clamps) and
/// otherwise runs of more than eight values (up to eight, a body of a few instructions
/// copied per value is about as small as the loop: as loops, Standardize's two nodes of
/// eight values took 136 B more on the Cortex-M4F).
pub(crate) const fn rolled_from(heavy: bool) -> usize {
    if !cfg!(target_os = "none") {
        usize::MAX
    } else if heavy {
        0
    } else {
        9
    }
}

/// `sum f(v)` over `values` in eight interleaved partial sums (independent add chains
/// the compiler turns into one vector register), then added pairwise. The partial sums
/// start from -0, which adding leaves exact (`-0 + v = v` for every `v`, where `+0 + -0`
/// is `+0`), so that the compiler drops the first adds; an empty sum is +0.
#[inline(always)]
pub(crate) fn lane_sum(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let rest = values.chunks_exact(8).remainder();
    let whole = &values[..values.len() - rest.len()];
    let acc = if cfg!(tinyonnx_soft_float) {
        lanes_stepwise(whole, &f)
    } else {
        lanes(whole, &f)
    };
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for &v in rest {
        rolled();
        s += f(v);
    }
    s
}

/// The eight partial sums of [`lane_sum`] over `values` (whole groups of eight): value
/// `i` into lane `i % 8`.
#[inline(always)]
fn lanes(values: &[f32], f: impl Fn(f32) -> f32) -> [f32; 8] {
    let mut acc = [-0.0f32; 8];
    for c in values.chunks_exact(8) {
        rolled();
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f(v);
        }
    }
    acc
}

/// [`lanes`] one value a step, on the cores without an FPU: each add is a library
/// call there, and the eight unrolled were flash for nothing. The same sums in the same
/// order.
#[inline(always)]
fn lanes_stepwise(values: &[f32], f: impl Fn(f32) -> f32) -> [f32; 8] {
    let mut acc = [-0.0f32; 8];
    for (i, &v) in values.iter().enumerate() {
        rolled();
        acc[i % 8] += f(v);
    }
    acc
}

/// Walks the rows of a row-major tensor of `shape` (`R >= 1`, no empty axis): calls
/// `f(row, ia, ib)` for each row of `shape[R - 1]` elements with the two strided offsets
/// at its start, so callers run the last axis as a plain loop (contiguous or
/// broadcast) instead of stepping a multi-index per element.
#[inline(always)]
pub(crate) fn for_rows2<const R: usize>(
    shape: &[usize; R],
    sa: &[usize; R],
    sb: &[usize; R],
    mut f: impl FnMut(usize, usize, usize),
) {
    let mut outer = *shape;
    outer[R - 1] = 1;
    let rows: usize = outer.iter().product();
    let mut idx = [0usize; R];
    let (mut ia, mut ib) = (0usize, 0usize);
    for row in 0..rows {
        f(row, ia, ib);
        step2(&mut idx, &outer, sa, sb, &mut ia, &mut ib);
    }
}

/// Advances a row-major multi-index over `shape`, moving two strided offsets along.
#[inline(always)]
pub(crate) fn step2<const R: usize>(
    idx: &mut [usize; R],
    shape: &[usize; R],
    sa: &[usize; R],
    sb: &[usize; R],
    ia: &mut usize,
    ib: &mut usize,
) {
    let mut d = R;
    while d > 0 {
        d -= 1;
        idx[d] += 1;
        *ia += sa[d];
        *ib += sb[d];
        if idx[d] < shape[d] {
            return;
        }
        *ia -= sa[d] * shape[d];
        *ib -= sb[d] * shape[d];
        idx[d] = 0;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    /// Values of every kind: signs, zeros of both signs, tiny and huge, NaN, infinities.
    fn values(n: usize) -> Vec<f32> {
        let special = [
            0.0,
            -0.0,
            1e-40,
            -3.0e38,
            f32::INFINITY,
            f32::NAN,
            1.0e7,
            -2.5,
        ];
        (0..n)
            .map(|i| {
                if i % 11 == 7 {
                    special[i % special.len()]
                } else {
                    ((i * 37 % 101) as f32 - 50.0) * 0.173
                }
            })
            .collect()
    }

    /// The soft-float cores' stepwise partial sums equal the grouped ones bit for bit.
    #[test]
    fn stepwise_lanes_equal_grouped_lanes() {
        for n in [0, 8, 16, 40, 88] {
            let v = values(n);
            for f in [|x: f32| x, |x: f32| (x - 0.3) * (x - 0.3)] {
                let (a, b) = (super::lanes(&v, f), super::lanes_stepwise(&v, f));
                assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "n {n}");
            }
        }
    }

    /// The soft-float cores' out-of-line rows of `gemm` equal the product it computes on
    /// the host, bit for bit, with A as it is and transposed.
    #[test]
    fn accumulated_rows_equal_gemm() {
        const M: usize = 3;
        const K: usize = 5;
        const N: usize = 4;
        let a = values(M * K);
        let b: Vec<f32> = values(K * N + 3).into_iter().skip(3).collect();
        let mut want = [0.0f32; M * N];
        super::gemm::gemm::<M, K, N, false, false>(&a, &b, None, 1.0, 1.0, &mut want);
        let mut got = [f32::NAN; M * N];
        super::gemm::accumulate_rows(&mut got, &a, (K, 1), &b, N);
        assert_eq!(want.map(f32::to_bits), got.map(f32::to_bits));
        super::gemm::gemm::<M, K, N, true, false>(&a, &b, None, 1.0, 1.0, &mut want);
        super::gemm::accumulate_rows(&mut got, &a, (1, M), &b, N);
        assert_eq!(want.map(f32::to_bits), got.map(f32::to_bits));
    }
}
