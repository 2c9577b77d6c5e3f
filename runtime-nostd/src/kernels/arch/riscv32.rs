//! 32-bit RISC-V with the F extension (`tinyonnx_riscv_f`, set by the build script): the
//! square root, and with the `fma-rvf` feature the fused multiply-add and
//! (`tinyonnx_fma_rows`) the `FMADD.S` loops of the packed products.

/// The FPU's square root, correctly rounded (in the default round-to-nearest-even mode)
/// as `libm::sqrtf`, whose software version takes about 500 bytes with its table.
#[inline(always)]
pub(crate) fn sqrt(x: f32) -> f32 {
    let r: f32;
    // Safety: FSQRT.S reads and writes only the named float registers, which the F
    // extension this module is compiled for provides; it touches no memory or stack.
    unsafe {
        core::arch::asm!("fsqrt.s {r}, {x}", r = lateout(freg) r, x = in(freg) x, options(pure, nomem, nostack));
    }
    r
}

/// `x * y + z` rounded once (`FMADD.S`): what the `fma-rvf` feature opts in to, results
/// that differ from a product and a sum in the last bit.
#[cfg(feature = "fma-rvf")]
#[inline(always)]
pub(crate) fn fmadd(x: f32, y: f32, z: f32) -> f32 {
    let r: f32;
    // Safety: FMADD.S reads and writes only the named float registers (the F extension
    // this module is compiled for); it touches no memory or stack and rounds as the
    // default mode says.
    unsafe {
        core::arch::asm!("fmadd.s {r}, {x}, {y}, {z}", r = lateout(freg) r, x = in(freg) x, y = in(freg) y, z = in(freg) z, options(pure, nomem, nostack));
    }
    r
}

// Safety: the declarations match the routines assembled below (ilp32f: the first eight
// arguments in a0-a7, the rest on the stack from 0(sp); nothing returned); callers uphold
// the pointer contract of [`rows8`] and [`rows8x2`].
#[cfg(tinyonnx_fma_rows)]
unsafe extern "C" {
    fn tinyonnx_rows8_rv(
        a: *const f32,
        panels: *const f32,
        start: *const f32,
        start_step: u32,
        y: *mut f32,
        k: u32,
        count: u32,
        relu: u32,
        spread: u32,
    );
    fn tinyonnx_rows8x2_rv(
        a0: *const f32,
        a1: *const f32,
        panels: *const f32,
        start0: *const f32,
        start1: *const f32,
        start_step: u32,
        y0: *mut f32,
        y1: *mut f32,
        k: u32,
        count: u32,
        relu: u32,
        spread: u32,
    );
}

/// The routines' optional steps: a Relu after the products, a start spread from one
/// value (`steps`).
#[cfg(tinyonnx_fma_rows)]
#[derive(Clone, Copy)]
pub(crate) struct Steps {
    relu: u32,
    spread: u32,
}

#[cfg(tinyonnx_fma_rows)]
/// [`Steps`] for a Relu after the products and a start spread from one value.
#[inline(always)]
pub(crate) fn steps(relu: bool, spread: bool) -> Steps {
    Steps {
        relu: relu.into(),
        spread: spread.into(),
    }
}

#[cfg(tinyonnx_fma_rows)]
/// One row of A (`k` values at `a`) against `count` whole panels of eight columns
/// (`panels`: each panel's `k` rows of eight, one panel after the other). Each panel's
/// eight accumulators start from the eight values at `start`, or from the one value
/// there in all eight when `steps` spreads; `start` then advances by `start_step` bytes.
/// Each panel's results go through `math::relu` when `steps` asks and are stored as a run of eight
/// at `y`, which advances by eight values.
///
/// # Safety
/// `a` readable for `k` floats, `panels` for `count * k * 8`, `start` for what it is
/// read as (eight or one value, `count` times, `start_step` bytes apart) and `y`
/// writable for `count * 8` floats.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn rows8(
    a: *const f32,
    panels: *const f32,
    start: *const f32,
    start_step: u32,
    y: *mut f32,
    (k, count): (usize, usize),
    steps: Steps,
) {
    // Safety: the routine reads `k` floats at `a`, `count * k * 8` from `panels` and
    // what `steps` says of `start`, and writes `count * 8` floats at `y`: exactly the
    // memory this function's contract makes the caller vouch for. It touches nothing else
    // (scratch registers only, per the declared ABI).
    unsafe {
        tinyonnx_rows8_rv(
            a,
            panels,
            start,
            start_step,
            y,
            k as u32,
            count as u32,
            steps.relu,
            steps.spread,
        )
    }
}

#[cfg(tinyonnx_fma_rows)]
/// [`rows8`] for two rows of A (`a0`, `a1`) against the same panels, each with its
/// own start and destination (`start_step` for both).
///
/// # Safety
/// As [`rows8`], for each row.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn rows8x2(
    (a0, a1): (*const f32, *const f32),
    panels: *const f32,
    (start0, start1): (*const f32, *const f32),
    start_step: u32,
    (y0, y1): (*mut f32, *mut f32),
    (k, count): (usize, usize),
    steps: Steps,
) {
    // Safety: per row, the reads and writes of `rows8` (`k` floats of its row of A, its
    // start, `count * 8` floats of its output), and the shared panels once: the memory
    // this function's contract makes the caller vouch for, and nothing else.
    unsafe {
        tinyonnx_rows8x2_rv(
            a0,
            a1,
            panels,
            start0,
            start1,
            start_step,
            y0,
            y1,
            k as u32,
            count as u32,
            steps.relu,
            steps.spread,
        )
    }
}

// The product routines. Only caller-saved float registers, so nothing is pushed:
// accumulators f0-f7 (row 0) and f10-f17 (row 1), the step's values of A in ft8 and
// ft9, the panel's values in ft10 and ft11 by turns (a load's result is not used by the
// next instruction, for the in-order cores). Two steps of k a pass (an odd k enters the
// first pass at its second step, with the pointers one step back):
// per step of one row 1 + 8 loads and 8 fused multiply-adds, of two rows 2 + 8 loads and
// 16 (RISC-V loads one value an instruction). `math::relu` per register: below zero
// becomes +0; NaN (unordered, `flt.s` gives 0) and -0 stay.
#[cfg(tinyonnx_fma_rows)]
core::arch::global_asm!(
    ".option push",
    ".option arch, +f",
    // Columns `j` and `k` of one step of the panel at byte offset `off` into the
    // accumulators of one row (`f<j>`) or two (`f<j>`, `f1<j>`).
    ".macro tinyonnx_rv_cols1 off, j, k",
    "    flw ft10, \\off+4*\\j(a1)",
    "    flw ft11, \\off+4*\\k(a1)",
    "    fmadd.s f\\j, ft8, ft10, f\\j",
    "    fmadd.s f\\k, ft8, ft11, f\\k",
    ".endm",
    ".macro tinyonnx_rv_step1 off",
    "    tinyonnx_rv_cols1 \\off, 0, 1",
    "    tinyonnx_rv_cols1 \\off, 2, 3",
    "    tinyonnx_rv_cols1 \\off, 4, 5",
    "    tinyonnx_rv_cols1 \\off, 6, 7",
    ".endm",
    ".macro tinyonnx_rv_cols2 off, j, k",
    "    flw ft10, \\off+4*\\j(a2)",
    "    flw ft11, \\off+4*\\k(a2)",
    "    fmadd.s f\\j, ft8, ft10, f\\j",
    "    fmadd.s f1\\j, ft9, ft10, f1\\j",
    "    fmadd.s f\\k, ft8, ft11, f\\k",
    "    fmadd.s f1\\k, ft9, ft11, f1\\k",
    ".endm",
    ".macro tinyonnx_rv_step2 off",
    "    tinyonnx_rv_cols2 \\off, 0, 1",
    "    tinyonnx_rv_cols2 \\off, 2, 3",
    "    tinyonnx_rv_cols2 \\off, 4, 5",
    "    tinyonnx_rv_cols2 \\off, 6, 7",
    ".endm",
    // Eight accumulators from `base`'s eight values, or its first one spread when
    // `flag` is not zero.
    ".macro tinyonnx_rv_start acc, base, flag",
    "    bnez \\flag, 20f",
    "    .irp j, 0, 1, 2, 3, 4, 5, 6, 7",
    "    flw f\\acc\\j, 4*\\j(\\base)",
    "    .endr",
    "    j 21f",
    "20:",
    "    flw f\\acc\\()0, 0(\\base)",
    "    .irp j, 1, 2, 3, 4, 5, 6, 7",
    "    fmv.s f\\acc\\j, f\\acc\\()0",
    "    .endr",
    "21:",
    ".endm",
    // `math::relu` of the eight accumulators `f<acc><j>` (ft8 holding +0, t6 scratch),
    // then their store to `base`.
    ".macro tinyonnx_rv_finish acc, base, flag",
    "    beqz \\flag, 23f",
    "    .irp j, 0, 1, 2, 3, 4, 5, 6, 7",
    "    flt.s t6, f\\acc\\j, ft8",
    "    beqz t6, 22f",
    "    fmv.s f\\acc\\j, ft8",
    "22:",
    "    .endr",
    "23:",
    "    .irp j, 0, 1, 2, 3, 4, 5, 6, 7",
    "    fsw f\\acc\\j, 4*\\j(\\base)",
    "    .endr",
    ".endm",
    // a0 a, a1 panels, a2 start, a3 start_step, a4 y, a5 k, a6 count, a7 relu; 0(sp)
    // spread.
    ".section .text.tinyonnx_rows8_rv,\"ax\",@progbits",
    ".global tinyonnx_rows8_rv",
    ".type tinyonnx_rows8_rv,@function",
    "tinyonnx_rows8_rv:",
    "    lw t3, 0(sp)",
    "    beqz a6, 9f",
    "1:",
    "    tinyonnx_rv_start , a2, t3",
    "    add a2, a2, a3",
    "    mv t4, a0",
    "    andi t5, a5, 1",
    "    bnez t5, 6f",
    "    srli t5, a5, 1",
    "    beqz t5, 4f",
    "2:",
    "    flw ft8, 0(t4)",
    "    tinyonnx_rv_step1 0",
    "5:",
    "    flw ft8, 4(t4)",
    "    tinyonnx_rv_step1 32",
    "    addi t4, t4, 8",
    "    addi a1, a1, 64",
    "    addi t5, t5, -1",
    "    bnez t5, 2b",
    "4:",
    "    fmv.w.x ft8, zero",
    "    tinyonnx_rv_finish , a4, a7",
    "    addi a4, a4, 32",
    "    addi a6, a6, -1",
    "    bnez a6, 1b",
    "9:",
    "    ret",
    // An odd k: the pointers one step back, and in at the pass's second step.
    "6:",
    "    addi t4, t4, -4",
    "    addi a1, a1, -32",
    "    srli t5, a5, 1",
    "    addi t5, t5, 1",
    "    j 5b",
    ".size tinyonnx_rows8_rv, . - tinyonnx_rows8_rv",
    // a0 a0, a1 a1, a2 panels, a3 start0, a4 start1, a5 start_step, a6 y0, a7 y1; 0(sp)
    // k, 4(sp) count, 8(sp) relu, 12(sp) spread.
    ".section .text.tinyonnx_rows8x2_rv,\"ax\",@progbits",
    ".global tinyonnx_rows8x2_rv",
    ".type tinyonnx_rows8x2_rv,@function",
    "tinyonnx_rows8x2_rv:",
    "    lw t0, 0(sp)",
    "    lw t1, 4(sp)",
    "    lw t2, 8(sp)",
    "    lw t3, 12(sp)",
    "    beqz t1, 9f",
    "1:",
    "    tinyonnx_rv_start , a3, t3",
    "    tinyonnx_rv_start 1, a4, t3",
    "    add a3, a3, a5",
    "    add a4, a4, a5",
    "    mv t4, a0",
    "    mv t5, a1",
    "    andi t6, t0, 1",
    "    bnez t6, 6f",
    "    srli t6, t0, 1",
    "    beqz t6, 4f",
    "2:",
    "    flw ft8, 0(t4)",
    "    flw ft9, 0(t5)",
    "    tinyonnx_rv_step2 0",
    "5:",
    "    flw ft8, 4(t4)",
    "    flw ft9, 4(t5)",
    "    tinyonnx_rv_step2 32",
    "    addi t4, t4, 8",
    "    addi t5, t5, 8",
    "    addi a2, a2, 64",
    "    addi t6, t6, -1",
    "    bnez t6, 2b",
    "4:",
    "    fmv.w.x ft8, zero",
    "    tinyonnx_rv_finish , a6, t2",
    "    tinyonnx_rv_finish 1, a7, t2",
    "    addi a6, a6, 32",
    "    addi a7, a7, 32",
    "    addi t1, t1, -1",
    "    bnez t1, 1b",
    "9:",
    "    ret",
    "6:",
    "    addi t4, t4, -4",
    "    addi t5, t5, -4",
    "    addi a2, a2, -32",
    "    srli t6, t0, 1",
    "    addi t6, t6, 1",
    "    j 5b",
    ".size tinyonnx_rows8x2_rv, . - tinyonnx_rows8x2_rv",
    ".purgem tinyonnx_rv_cols1",
    ".purgem tinyonnx_rv_step1",
    ".purgem tinyonnx_rv_cols2",
    ".purgem tinyonnx_rv_step2",
    ".purgem tinyonnx_rv_start",
    ".purgem tinyonnx_rv_finish",
    ".option pop",
);
