//! Arm: the hand-written `VFMA.F32` loops of the Gemm and Conv kernels, for FPUs with
//! VFPv4 or later and single precision (Cortex-M4F, M7, M33 with FPU; the `fma-vfp4`
//! feature); `dsp.rs`: the `SMLAD` loop of the 8-bit products (the `dsp` feature).

/// A global Thumb-2 function `$name` of the assembly lines `$line`, in its own section
/// (the linker drops it when nothing calls it). Armv8-M Mainline has the DSP
/// instructions only as an extension, which the assembler takes from the architecture
/// that always has them (the same Thumb-2 encodings); the single-precision FPU
/// instructions likewise.
#[allow(unused_macros)]
macro_rules! thumb_fn {
    ($name:literal, $($line:expr),* $(,)?) => {
        core::arch::global_asm!(
            ".syntax unified",
            ".thumb",
            ".arch armv7e-m",
            ".fpu fpv4-sp-d16",
            concat!(".section .text.", $name, ",\"ax\",%progbits"),
            concat!(".global ", $name),
            concat!(".type ", $name, ",%function"),
            ".thumb_func",
            concat!($name, ":"),
            $($line,)*
            concat!(".size ", $name, ", . - ", $name),
        );
    };
}

#[cfg(feature = "dsp")]
pub(crate) mod dsp;
#[cfg(feature = "fma-vfp4")]
pub(crate) mod pool;

/// Assembly lines that copy the float register `$from` into each of `$regs`: one
/// value of a row's init (a convolution's bias) spread over the row's eight
/// accumulators.
#[allow(unused_macros)]
macro_rules! spread {
    ($from:literal, $regs:literal) => {
        concat!(
            "    .irp reg, ",
            $regs,
            "\n",
            "    vmov.f32 \\reg, ",
            $from,
            "\n",
            "    .endr",
        )
    };
}

/// Assembly lines that put each of the float registers `$regs` through
/// `crate::kernels::math::relu`, the core register `$zero` holding 0 (the bits of +0): a
/// value below zero becomes +0, NaN (unordered: the MI condition fails) and -0 stay;
/// four instructions a register.
#[allow(unused_macros)]
macro_rules! relu8 {
    ($regs:literal, $zero:literal) => {
        concat!(
            "    .irp reg, ",
            $regs,
            "\n",
            "    vcmp.f32 \\reg, #0\n",
            "    vmrs APSR_nzcv, fpscr\n",
            "    it mi\n",
            "    vmovmi \\reg, ",
            $zero,
            "\n",
            "    .endr",
        )
    };
}

// Safety: the declaration matches the routine assembled below: AAPCS-VFP passes and
// returns the float in s0; it reads no memory.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    pub(crate) safe fn tinyonnx_sqrt_vfp(x: f32) -> f32;
}

// The FPU's square root, correctly rounded as IEEE 754 asks (as `libm::sqrtf`, whose
// software version takes about 500 bytes of flash with its table). Not inline assembly:
// rustc gives the single-precision registers to `asm!` only with the `vfp2` feature,
// which these targets do not set.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
thumb_fn!("tinyonnx_sqrt_vfp", "    vsqrt.f32 s0, s0", "    bx lr");

// Safety: the declaration matches the routine this file assembles below (its
// arguments in the AAPCS-VFP registers named there, nothing returned); callers uphold the
// pointer contract stated at each call.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    pub(crate) fn tinyonnx_axpy_vfma(n: u32, a: f32, x: *const f32, y: *mut f32);
}

// AAPCS-VFP: n in r0, a in s0, x in r1, y in r2. s1-s11 are caller-saved scratch here
// (s0-s15 are not preserved across calls).
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    ".fpu fpv4-sp-d16",
    ".section .text.tinyonnx_axpy_vfma,\"ax\",%progbits",
    ".global tinyonnx_axpy_vfma",
    ".type tinyonnx_axpy_vfma,%function",
    ".thumb_func",
    "tinyonnx_axpy_vfma:",
    "    cmp r0, #4",
    "    blo 2f",
    "1:",
    "    vldmia r1!, {{s4-s7}}",
    "    vldmia r2, {{s8-s11}}",
    "    vfma.f32 s8, s0, s4",
    "    vfma.f32 s9, s0, s5",
    "    vfma.f32 s10, s0, s6",
    "    vfma.f32 s11, s0, s7",
    "    vstmia r2!, {{s8-s11}}",
    "    subs r0, #4",
    "    cmp r0, #4",
    "    bhs 1b",
    "2:",
    "    cbz r0, 4f",
    "3:",
    "    vldmia r1!, {{s4}}",
    "    vldr s8, [r2]",
    "    vfma.f32 s8, s0, s4",
    "    vstmia r2!, {{s8}}",
    "    subs r0, #1",
    "    bne 3b",
    "4:",
    "    bx lr",
    ".size tinyonnx_axpy_vfma, . - tinyonnx_axpy_vfma",
);

// Safety: the declaration matches the routine this file assembles below (its
// arguments in the AAPCS-VFP registers and stack slots named there, nothing returned);
// callers uphold the pointer contract stated at each call.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    fn tinyonnx_rows8_vfma(
        a: *const f32,
        panels: *const f32,
        start: *const f32,
        start_step: u32,
        y: *mut f32,
        k: u32,
        count: u32,
        relu: *const (),
        spread: *const (),
    );
}

// One row of A against `count` whole panels: eight accumulators in s0-s7, eight values
// of A in s8-s15, two panel rows in s16-s31 (callee-saved, so pushed). Per panel the
// row starts from the eight values at `start` (advanced by `start_step` bytes, 32 or 0)
// and ends as a run of eight at `y`. Eight steps of k a pass: one load of eight values
// of A, then per two steps one load of sixteen panel values and sixteen fused
// multiply-adds, and the loop: 71 instructions for 64 multiply-accumulates (39 for 32
// with four steps a pass, as before); the last k % 8 steps one at a time (12 for 8; a
// pass of four for them would take 140 bytes more flash). `relu` (`tinyonnx_relu8` or null): each panel's
// eight results go through `math::relu` in registers before their store (four
// instructions a value, where a pass over memory afterwards took eight). `spread`
// (`tinyonnx_spread8` or null): `start` is one value (a convolution's bias for the
// row) that every panel starts from in all eight accumulators, where filling the
// output row with it first and starting from there took about three instructions a
// value. AAPCS-VFP: a in r0, panels in r1, start in r2, start_step in r3; on the stack
// y, k, count, relu, spread.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    ".fpu fpv4-sp-d16",
    ".section .text.tinyonnx_rows8_vfma,\"ax\",%progbits",
    ".global tinyonnx_rows8_vfma",
    ".type tinyonnx_rows8_vfma,%function",
    ".thumb_func",
    "tinyonnx_rows8_vfma:",
    "    push {{r4-r9, lr}}",
    "    vpush {{s16-s31}}",
    // 28 bytes of core registers and 64 of float ones above the arguments.
    // k in r8, count in r9, relu in r6 and spread in r7: low registers, which `cbz`
    // and `cbnz` test.
    "    ldr r5, [sp, #92]",
    "    ldr r8, [sp, #96]",
    "    ldr r9, [sp, #100]",
    "    ldr r6, [sp, #104]",
    "    ldr r7, [sp, #108]",
    "    mov r4, r0",
    "    cmp r9, #0",
    "    beq 9f",
    // Each optional step costs one instruction a panel when it is not asked for.
    "5:",
    "    cbz r7, 11f",
    "    vldr s0, [r2]",
    "    blx r7",
    "    b 8f",
    "11:",
    "    vldmia r2, {{s0-s7}}",
    "8:",
    "    add r2, r3",
    "    mov r0, r4",
    "    subs r12, r8, #8",
    "    blo 3f",
    "1:",
    "    vldmia r0!, {{s8-s15}}",
    "    vldmia r1!, {{s16-s31}}",
    "    vfma.f32 s0, s8, s16",
    "    vfma.f32 s1, s8, s17",
    "    vfma.f32 s2, s8, s18",
    "    vfma.f32 s3, s8, s19",
    "    vfma.f32 s4, s8, s20",
    "    vfma.f32 s5, s8, s21",
    "    vfma.f32 s6, s8, s22",
    "    vfma.f32 s7, s8, s23",
    "    vfma.f32 s0, s9, s24",
    "    vfma.f32 s1, s9, s25",
    "    vfma.f32 s2, s9, s26",
    "    vfma.f32 s3, s9, s27",
    "    vfma.f32 s4, s9, s28",
    "    vfma.f32 s5, s9, s29",
    "    vfma.f32 s6, s9, s30",
    "    vfma.f32 s7, s9, s31",
    "    vldmia r1!, {{s16-s31}}",
    "    vfma.f32 s0, s10, s16",
    "    vfma.f32 s1, s10, s17",
    "    vfma.f32 s2, s10, s18",
    "    vfma.f32 s3, s10, s19",
    "    vfma.f32 s4, s10, s20",
    "    vfma.f32 s5, s10, s21",
    "    vfma.f32 s6, s10, s22",
    "    vfma.f32 s7, s10, s23",
    "    vfma.f32 s0, s11, s24",
    "    vfma.f32 s1, s11, s25",
    "    vfma.f32 s2, s11, s26",
    "    vfma.f32 s3, s11, s27",
    "    vfma.f32 s4, s11, s28",
    "    vfma.f32 s5, s11, s29",
    "    vfma.f32 s6, s11, s30",
    "    vfma.f32 s7, s11, s31",
    "    vldmia r1!, {{s16-s31}}",
    "    vfma.f32 s0, s12, s16",
    "    vfma.f32 s1, s12, s17",
    "    vfma.f32 s2, s12, s18",
    "    vfma.f32 s3, s12, s19",
    "    vfma.f32 s4, s12, s20",
    "    vfma.f32 s5, s12, s21",
    "    vfma.f32 s6, s12, s22",
    "    vfma.f32 s7, s12, s23",
    "    vfma.f32 s0, s13, s24",
    "    vfma.f32 s1, s13, s25",
    "    vfma.f32 s2, s13, s26",
    "    vfma.f32 s3, s13, s27",
    "    vfma.f32 s4, s13, s28",
    "    vfma.f32 s5, s13, s29",
    "    vfma.f32 s6, s13, s30",
    "    vfma.f32 s7, s13, s31",
    "    vldmia r1!, {{s16-s31}}",
    "    vfma.f32 s0, s14, s16",
    "    vfma.f32 s1, s14, s17",
    "    vfma.f32 s2, s14, s18",
    "    vfma.f32 s3, s14, s19",
    "    vfma.f32 s4, s14, s20",
    "    vfma.f32 s5, s14, s21",
    "    vfma.f32 s6, s14, s22",
    "    vfma.f32 s7, s14, s23",
    "    vfma.f32 s0, s15, s24",
    "    vfma.f32 s1, s15, s25",
    "    vfma.f32 s2, s15, s26",
    "    vfma.f32 s3, s15, s27",
    "    vfma.f32 s4, s15, s28",
    "    vfma.f32 s5, s15, s29",
    "    vfma.f32 s6, s15, s30",
    "    vfma.f32 s7, s15, s31",
    "    subs r12, #8",
    "    bhs 1b",
    "3:",
    "    adds r12, #8",
    "    beq 2f",
    "4:",
    "    vldmia r0!, {{s8}}",
    "    vldmia r1!, {{s16-s23}}",
    "    vfma.f32 s0, s8, s16",
    "    vfma.f32 s1, s8, s17",
    "    vfma.f32 s2, s8, s18",
    "    vfma.f32 s3, s8, s19",
    "    vfma.f32 s4, s8, s20",
    "    vfma.f32 s5, s8, s21",
    "    vfma.f32 s6, s8, s22",
    "    vfma.f32 s7, s8, s23",
    "    subs r12, #1",
    "    bne 4b",
    "2:",
    "    cbnz r6, 10f",
    "6:",
    "    vstmia r5!, {{s0-s7}}",
    "    subs r9, #1",
    "    bne 5b",
    "9:",
    "    vpop {{s16-s31}}",
    "    pop {{r4-r9, pc}}",
    "10:",
    "    blx r6",
    "    b 6b",
    ".size tinyonnx_rows8_vfma, . - tinyonnx_rows8_vfma",
);

// Safety: the declaration matches the routine this file assembles below (its
// arguments in the AAPCS-VFP registers and stack slots named there, nothing returned);
// callers uphold the pointer contract stated at each call.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    fn tinyonnx_rows8x2_vfma(
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
        relu: *const (),
        spread: *const (),
    );
}

// Two rows of A against `count` whole panels, sixteen accumulators in s0-s15 (row 0's
// eight, then row 1's), four values of each row of A in s16-s19 and s20-s23, one panel
// row in s24-s31: all 32 registers (s16-s31 and r4-r11 are callee-saved, so pushed). Per panel the rows
// start from the eight values at `start0` and `start1` (each then advanced by
// `start_step` bytes: 32 for a row of start values such as a bias, 0 to repeat them)
// and end as runs of eight at `y0` and `y1` (each advanced by 32 bytes); the panels
// follow each other (a panel's k rows of eight). Four steps of k a pass: one load of
// four values per row of A, then per step one load of eight panel values and sixteen
// fused multiply-adds, and the loop: 72 instructions for 64 multiply-accumulates (21
// for 16 one step at a time, as the last k % 4 steps go); about a dozen more a panel. AAPCS-VFP: a0 in r0,
// a1 in r1, panels in r2, start0 in r3; on the stack start1, start_step, y0, y1, k,
// count, relu and spread (as `tinyonnx_rows8_vfma`'s, `tinyonnx_relu16` and
// `tinyonnx_spread16` for both rows). With
// `count` 1 and the accumulators of one block as start and destination, it is the
// block's tile.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    ".fpu fpv4-sp-d16",
    ".section .text.tinyonnx_rows8x2_vfma,\"ax\",%progbits",
    ".global tinyonnx_rows8x2_vfma",
    ".type tinyonnx_rows8x2_vfma,%function",
    ".thumb_func",
    "tinyonnx_rows8x2_vfma:",
    "    push {{r4-r11, lr}}",
    "    vpush {{s16-s31}}",
    // 36 bytes of core registers and 64 of float ones above the arguments; the
    // optional steps as in `tinyonnx_rows8_vfma`. The rows of A are rewound by k after
    // each panel, which leaves r4 and r5 (low registers) for the helpers.
    "    ldr r11, [sp, #100]",
    "    ldr r10, [sp, #104]",
    "    ldr r6, [sp, #108]",
    "    ldr r7, [sp, #112]",
    "    ldr r8, [sp, #116]",
    "    ldr r9, [sp, #120]",
    "    ldr r4, [sp, #124]",
    "    ldr r5, [sp, #128]",
    "    cmp r9, #0",
    "    beq 9f",
    "5:",
    "    cbz r5, 11f",
    "    vldr s0, [r3]",
    "    vldr s8, [r11]",
    "    blx r5",
    "    b 8f",
    "11:",
    "    vldmia r3, {{s0-s7}}",
    "    vldmia r11, {{s8-s15}}",
    "8:",
    "    add r3, r10",
    "    add r11, r10",
    "    subs r12, r8, #4",
    "    blo 3f",
    "1:",
    "    vldmia r0!, {{s16-s19}}",
    "    vldmia r1!, {{s20-s23}}",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s16, s24",
    "    vfma.f32 s1, s16, s25",
    "    vfma.f32 s2, s16, s26",
    "    vfma.f32 s3, s16, s27",
    "    vfma.f32 s4, s16, s28",
    "    vfma.f32 s5, s16, s29",
    "    vfma.f32 s6, s16, s30",
    "    vfma.f32 s7, s16, s31",
    "    vfma.f32 s8, s20, s24",
    "    vfma.f32 s9, s20, s25",
    "    vfma.f32 s10, s20, s26",
    "    vfma.f32 s11, s20, s27",
    "    vfma.f32 s12, s20, s28",
    "    vfma.f32 s13, s20, s29",
    "    vfma.f32 s14, s20, s30",
    "    vfma.f32 s15, s20, s31",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s17, s24",
    "    vfma.f32 s1, s17, s25",
    "    vfma.f32 s2, s17, s26",
    "    vfma.f32 s3, s17, s27",
    "    vfma.f32 s4, s17, s28",
    "    vfma.f32 s5, s17, s29",
    "    vfma.f32 s6, s17, s30",
    "    vfma.f32 s7, s17, s31",
    "    vfma.f32 s8, s21, s24",
    "    vfma.f32 s9, s21, s25",
    "    vfma.f32 s10, s21, s26",
    "    vfma.f32 s11, s21, s27",
    "    vfma.f32 s12, s21, s28",
    "    vfma.f32 s13, s21, s29",
    "    vfma.f32 s14, s21, s30",
    "    vfma.f32 s15, s21, s31",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s18, s24",
    "    vfma.f32 s1, s18, s25",
    "    vfma.f32 s2, s18, s26",
    "    vfma.f32 s3, s18, s27",
    "    vfma.f32 s4, s18, s28",
    "    vfma.f32 s5, s18, s29",
    "    vfma.f32 s6, s18, s30",
    "    vfma.f32 s7, s18, s31",
    "    vfma.f32 s8, s22, s24",
    "    vfma.f32 s9, s22, s25",
    "    vfma.f32 s10, s22, s26",
    "    vfma.f32 s11, s22, s27",
    "    vfma.f32 s12, s22, s28",
    "    vfma.f32 s13, s22, s29",
    "    vfma.f32 s14, s22, s30",
    "    vfma.f32 s15, s22, s31",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s19, s24",
    "    vfma.f32 s1, s19, s25",
    "    vfma.f32 s2, s19, s26",
    "    vfma.f32 s3, s19, s27",
    "    vfma.f32 s4, s19, s28",
    "    vfma.f32 s5, s19, s29",
    "    vfma.f32 s6, s19, s30",
    "    vfma.f32 s7, s19, s31",
    "    vfma.f32 s8, s23, s24",
    "    vfma.f32 s9, s23, s25",
    "    vfma.f32 s10, s23, s26",
    "    vfma.f32 s11, s23, s27",
    "    vfma.f32 s12, s23, s28",
    "    vfma.f32 s13, s23, s29",
    "    vfma.f32 s14, s23, s30",
    "    vfma.f32 s15, s23, s31",
    "    subs r12, #4",
    "    bhs 1b",
    "3:",
    "    adds r12, #4",
    "    beq 2f",
    "4:",
    "    vldmia r0!, {{s16}}",
    "    vldmia r1!, {{s20}}",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s16, s24",
    "    vfma.f32 s1, s16, s25",
    "    vfma.f32 s2, s16, s26",
    "    vfma.f32 s3, s16, s27",
    "    vfma.f32 s4, s16, s28",
    "    vfma.f32 s5, s16, s29",
    "    vfma.f32 s6, s16, s30",
    "    vfma.f32 s7, s16, s31",
    "    vfma.f32 s8, s20, s24",
    "    vfma.f32 s9, s20, s25",
    "    vfma.f32 s10, s20, s26",
    "    vfma.f32 s11, s20, s27",
    "    vfma.f32 s12, s20, s28",
    "    vfma.f32 s13, s20, s29",
    "    vfma.f32 s14, s20, s30",
    "    vfma.f32 s15, s20, s31",
    "    subs r12, #1",
    "    bne 4b",
    "2:",
    "    sub.w r0, r0, r8, lsl #2",
    "    sub.w r1, r1, r8, lsl #2",
    "    cbnz r4, 10f",
    "6:",
    "    vstmia r6!, {{s0-s7}}",
    "    vstmia r7!, {{s8-s15}}",
    "    subs r9, #1",
    "    bne 5b",
    "9:",
    "    vpop {{s16-s31}}",
    "    pop {{r4-r11, pc}}",
    "10:",
    "    blx r4",
    "    b 6b",
    ".size tinyonnx_rows8x2_vfma, . - tinyonnx_rows8x2_vfma",
);

// Safety: declared only for their addresses, which the panel routines above call with
// `blx` (their own register contract, below, not the C one); never called from Rust.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    fn tinyonnx_relu8();
    fn tinyonnx_relu16();
    fn tinyonnx_spread8();
    fn tinyonnx_spread16();
}

/// The routines' optional steps: each helper's address when asked for, else null.
/// Made once, before a product's loops, and inlined where the flags are constants, so
/// that a firmware that never asks names no helper and links none.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
#[derive(Clone, Copy)]
pub(crate) struct Steps {
    relu8: *const (),
    relu16: *const (),
    spread8: *const (),
    spread16: *const (),
}

/// [`Steps`] for a Relu after the products and a start spread from one value.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
#[inline(always)]
pub(crate) fn steps(relu: bool, spread: bool) -> Steps {
    let helper = |on: bool, f: unsafe extern "C" fn()| {
        if on {
            f as *const ()
        } else {
            core::ptr::null()
        }
    };
    Steps {
        relu8: helper(relu, tinyonnx_relu8),
        relu16: helper(relu, tinyonnx_relu16),
        spread8: helper(spread, tinyonnx_spread8),
        spread16: helper(spread, tinyonnx_spread16),
    }
}

/// One row of A (`k` values at `a`) against `count` whole panels: `tinyonnx_rows8_vfma`
/// with its optional steps (a Relu, a start spread from one value) as [`steps`] made them.
///
/// # Safety
/// `a` readable for `k` floats, `panels` for `count * k * 8`, `start` for what it is
/// read as (eight values, or one when spread, `count` times, `start_step` bytes apart)
/// and `y` writable for `count * 8` floats.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
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
        tinyonnx_rows8_vfma(
            a,
            panels,
            start,
            start_step,
            y,
            k as u32,
            count as u32,
            steps.relu8,
            steps.spread8,
        )
    }
}

/// [`rows8`] for two rows of A against the same panels: `tinyonnx_rows8x2_vfma`.
///
/// # Safety
/// As [`rows8`], for each row.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
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
        tinyonnx_rows8x2_vfma(
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
            steps.relu16,
            steps.spread16,
        )
    }
}

// The panel routines' optional steps, out of line so that a firmware whose products
// never ask for them (an LSTM: no Relu, no bias per row) does not carry them: the
// routines take their addresses as arguments (null: not asked for), and the linker
// keeps them only where Rust code names them.
// `tinyonnx_relu16`: s8-s15, then s0-s7 through `math::relu` (`relu8!`); `tinyonnx_relu8`
// s0-s7 only. Both take +0 from r12, which holds 0 where the routines call them: it
// counted the last steps of k down to 0.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    ".fpu fpv4-sp-d16",
    ".section .text.tinyonnx_relu8,\"ax\",%progbits",
    ".global tinyonnx_relu16",
    ".type tinyonnx_relu16,%function",
    ".thumb_func",
    "tinyonnx_relu16:",
    relu8!("s8, s9, s10, s11, s12, s13, s14, s15", "r12"),
    ".global tinyonnx_relu8",
    ".type tinyonnx_relu8,%function",
    ".thumb_func",
    "tinyonnx_relu8:",
    relu8!("s0, s1, s2, s3, s4, s5, s6, s7", "r12"),
    "    bx lr",
);

// `tinyonnx_spread16`: s8 into s9-s15, then s0 into s1-s7 (`spread!`), the start of
// two rows from one value each; `tinyonnx_spread8` s0 into s1-s7.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    ".fpu fpv4-sp-d16",
    ".section .text.tinyonnx_spread8,\"ax\",%progbits",
    ".global tinyonnx_spread16",
    ".type tinyonnx_spread16,%function",
    ".thumb_func",
    "tinyonnx_spread16:",
    spread!("s8", "s9, s10, s11, s12, s13, s14, s15"),
    ".global tinyonnx_spread8",
    ".type tinyonnx_spread8,%function",
    ".thumb_func",
    "tinyonnx_spread8:",
    spread!("s0", "s1, s2, s3, s4, s5, s6, s7"),
    "    bx lr",
);

// Safety: the declarations match the routines assembled below (arguments in r0-r3 and
// on the stack as named there, nothing returned); callers uphold the pointer contract
// stated at the call.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    pub(crate) fn tinyonnx_narrow1_vfma(
        a: *const f32,
        b: *const f32,
        start: *const f32,
        y: *mut f32,
        k: u32,
        relu: u32,
    );
    pub(crate) fn tinyonnx_narrow2_vfma(
        a: *const f32,
        b: *const f32,
        start: *const f32,
        y: *mut f32,
        k: u32,
        relu: u32,
    );
    pub(crate) fn tinyonnx_narrow3_vfma(
        a: *const f32,
        b: *const f32,
        start: *const f32,
        y: *mut f32,
        k: u32,
        relu: u32,
    );
    pub(crate) fn tinyonnx_narrow4_vfma(
        a: *const f32,
        b: *const f32,
        start: *const f32,
        y: *mut f32,
        k: u32,
        relu: u32,
    );
}

// One row of A against a narrow block of R = 1 to 4 columns (`[k][R]`, the last columns
// of a constant B that has no whole panel for them, `kernels::dot::gemm_narrow`): the R
// accumulators in s0-s3 start from the R values at `start` and end as a run of R at `y`,
// through `math::relu` when `relu` is not 0 (`relu8!`). R = 1, 3, 4: four steps of k a
// pass, four values of A in s4-s7 with one load, the block's 4R values in s8-s15 with
// one or two, 4R fused multiply-adds and the loop; only caller-saved registers, so
// nothing is pushed. R = 2: eight steps a pass (below). r0 = a, r1 = b, r2 = start,
// r3 = y; on the stack k, relu.

/// `tinyonnx_narrow<R>_vfma` (see above) from what differs with R: the accumulators'
/// register list; a pass's steps of k, the registers its values of A load into and the
/// lines that save and restore callee-saved registers around the passes (or empty); the
/// lines of a pass (loads of the block's values and the products); the block's register
/// list for one step, that step's products, and the accumulators for the Relu.
#[allow(unused_macros)]
macro_rules! narrow_fn {
    ($name:literal, $acc:literal, ($steps:literal, $a:literal, $save:literal, $restore:literal), [$($pass:literal),* $(,)?], $step_b:literal, [$($step:literal),* $(,)?], $relu:literal $(,)?) => {
        thumb_fn!(
            $name,
            concat!("    vldmia r2, {{", $acc, "}}"),
            "    ldr r2, [sp]",
            concat!("    subs r2, #", $steps),
            "    blo 3f",
            $save,
            "1:",
            concat!("    vldmia r0!, {{", $a, "}}"),
            $($pass,)*
            concat!("    subs r2, #", $steps),
            "    bhs 1b",
            $restore,
            "3:",
            concat!("    adds r2, #", $steps),
            "    beq 2f",
            "4:",
            "    vldmia r0!, {{s4}}",
            concat!("    vldmia r1!, {{", $step_b, "}}"),
            $($step,)*
            "    subs r2, #1",
            "    bne 4b",
            // r2, the count of k's last steps, is 0 here: the Relu's +0.
            "2:",
            "    ldr r12, [sp, #4]",
            "    cmp r12, #0",
            "    beq 6f",
            relu8!($relu, "r2"),
            "6:",
            concat!("    vstmia r3, {{", $acc, "}}"),
            "    bx lr",
        );
    };
}

#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
narrow_fn!(
    "tinyonnx_narrow1_vfma",
    "s0",
    ("4", "s4-s7", "", ""),
    [
        "    vldmia r1!, {{s8-s11}}",
        "    vfma.f32 s0, s4, s8",
        "    vfma.f32 s0, s5, s9",
        "    vfma.f32 s0, s6, s10",
        "    vfma.f32 s0, s7, s11",
    ],
    "s8",
    ["    vfma.f32 s0, s4, s8"],
    "s0"
);

// R = 2 (a ten-class layer's last columns) takes eight steps of k a pass: eight values
// of A in s2-s9 and sixteen of the block in s10-s25 with one load each, 16 fused
// multiply-adds and the loop, 20 instructions for 16 multiply-accumulates where passes
// of four took 24; s16-s25 are callee-saved, so pushed around the passes.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
narrow_fn!(
    "tinyonnx_narrow2_vfma",
    "s0-s1",
    (
        "8",
        "s2-s9",
        "    vpush {{s16-s25}}",
        "    vpop {{s16-s25}}"
    ),
    [
        "    vldmia r1!, {{s10-s25}}",
        "    vfma.f32 s0, s2, s10",
        "    vfma.f32 s1, s2, s11",
        "    vfma.f32 s0, s3, s12",
        "    vfma.f32 s1, s3, s13",
        "    vfma.f32 s0, s4, s14",
        "    vfma.f32 s1, s4, s15",
        "    vfma.f32 s0, s5, s16",
        "    vfma.f32 s1, s5, s17",
        "    vfma.f32 s0, s6, s18",
        "    vfma.f32 s1, s6, s19",
        "    vfma.f32 s0, s7, s20",
        "    vfma.f32 s1, s7, s21",
        "    vfma.f32 s0, s8, s22",
        "    vfma.f32 s1, s8, s23",
        "    vfma.f32 s0, s9, s24",
        "    vfma.f32 s1, s9, s25",
    ],
    "s8-s9",
    ["    vfma.f32 s0, s4, s8", "    vfma.f32 s1, s4, s9"],
    "s0, s1"
);

#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
narrow_fn!(
    "tinyonnx_narrow3_vfma",
    "s0-s2",
    ("4", "s4-s7", "", ""),
    [
        "    vldmia r1!, {{s8-s15}}",
        "    vfma.f32 s0, s4, s8",
        "    vfma.f32 s1, s4, s9",
        "    vfma.f32 s2, s4, s10",
        "    vfma.f32 s0, s5, s11",
        "    vfma.f32 s1, s5, s12",
        "    vfma.f32 s2, s5, s13",
        "    vfma.f32 s0, s6, s14",
        "    vfma.f32 s1, s6, s15",
        "    vldmia r1!, {{s8-s11}}",
        "    vfma.f32 s2, s6, s8",
        "    vfma.f32 s0, s7, s9",
        "    vfma.f32 s1, s7, s10",
        "    vfma.f32 s2, s7, s11",
    ],
    "s8-s10",
    [
        "    vfma.f32 s0, s4, s8",
        "    vfma.f32 s1, s4, s9",
        "    vfma.f32 s2, s4, s10"
    ],
    "s0, s1, s2"
);

#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
narrow_fn!(
    "tinyonnx_narrow4_vfma",
    "s0-s3",
    ("4", "s4-s7", "", ""),
    [
        "    vldmia r1!, {{s8-s15}}",
        "    vfma.f32 s0, s4, s8",
        "    vfma.f32 s1, s4, s9",
        "    vfma.f32 s2, s4, s10",
        "    vfma.f32 s3, s4, s11",
        "    vfma.f32 s0, s5, s12",
        "    vfma.f32 s1, s5, s13",
        "    vfma.f32 s2, s5, s14",
        "    vfma.f32 s3, s5, s15",
        "    vldmia r1!, {{s8-s15}}",
        "    vfma.f32 s0, s6, s8",
        "    vfma.f32 s1, s6, s9",
        "    vfma.f32 s2, s6, s10",
        "    vfma.f32 s3, s6, s11",
        "    vfma.f32 s0, s7, s12",
        "    vfma.f32 s1, s7, s13",
        "    vfma.f32 s2, s7, s14",
        "    vfma.f32 s3, s7, s15",
    ],
    "s8-s11",
    [
        "    vfma.f32 s0, s4, s8",
        "    vfma.f32 s1, s4, s9",
        "    vfma.f32 s2, s4, s10",
        "    vfma.f32 s3, s4, s11"
    ],
    "s0, s1, s2, s3"
);

// Safety: the declarations match the routines assembled below (arguments in the
// AAPCS-VFP registers named there, nothing returned); callers pass `n` readable bytes at
// `a` and `b` and `n` writable bytes at `y`.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    pub(crate) fn tinyonnx_qadd_s8(
        a: *const i8,
        b: *const i8,
        y: *mut i8,
        n: u32,
        ra: f32,
        rb: f32,
        fixed: f32,
    );
    pub(crate) fn tinyonnx_qadd_u8(
        a: *const u8,
        b: *const u8,
        y: *mut u8,
        n: u32,
        ra: f32,
        rb: f32,
        fixed: f32,
    );
}

/// `crate::kernels::quant::qlinear_add` on bytes loaded with `$load` and saturated with
/// `$sat`: r0 = a, r1 = b, r2 = y, r3 = n, s0 = ra, s1 = rb, s2 = fixed; per byte two
/// `VFMA`s (`fixed + b * rb`, then `+ a * ra`), rounded to even by adding 1.5 * 2^23 and
/// taking the low bits (`quant::round_even`), saturated into the byte.
macro_rules! qadd {
    ($name:literal, $load:literal, $sat:literal) => {
        #[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
        thumb_fn!(
            $name,
            "    cbz r3, 2f",
            "    push {{r4-r6}}",
            "    movw r6, #0",
            "    movt r6, #0x4b40",
            "    vmov s3, r6",
            "1:",
            concat!("    ", $load, " r4, [r0], #1"),
            concat!("    ", $load, " r5, [r1], #1"),
            "    vmov s4, r4",
            "    vmov s5, r5",
            "    vcvt.f32.s32 s4, s4",
            "    vcvt.f32.s32 s5, s5",
            "    vmov.f32 s6, s2",
            "    vfma.f32 s6, s5, s1",
            "    vfma.f32 s6, s4, s0",
            "    vadd.f32 s6, s6, s3",
            "    vmov r4, s6",
            "    subs r4, r4, r6",
            concat!("    ", $sat, " r4, #8, r4"),
            "    strb r4, [r2], #1",
            "    subs r3, #1",
            "    bne 1b",
            "    pop {{r4-r6}}",
            "2:",
            "    bx lr",
        );
    };
}

qadd!("tinyonnx_qadd_s8", "ldrsb", "ssat");
qadd!("tinyonnx_qadd_u8", "ldrb", "usat");

/// The assembly of one pass of [`dot_vmla`]: the next four values of each side, four
/// multiply-adds into s12.
#[allow(unused_macros)]
macro_rules! dot_pass {
    () => {
        concat!(
            "vldmia {pa}!, {{s4-s7}}\n",
            "vldmia {pb}!, {{s8-s11}}\n",
            "vmla.f32 s12, s4, s8\n",
            "vmla.f32 s12, s5, s9\n",
            "vmla.f32 s12, s6, s10\n",
            "vmla.f32 s12, s7, s11\n",
        )
    };
}

/// [`dot_vmla`]'s passes written out, `$pass` each (so LLVM, which sizes an `asm!` by
/// its lines to place its constant pools, sees them all: a `.rept` looks like one line
/// and put a pool out of reach).
#[allow(unused_macros)]
macro_rules! dot_passes {
    ($bits:ident, $pa:ident, $pb:ident, $($pass:expr),+) => {
        // Safety: each pass reads the next four values of `a` and of `b`, at most K / 4
        // passes: the first 4 * (K / 4) <= K of each array. Only the clobbered s4-s12
        // are written.
        unsafe {
            core::arch::asm!(
                "vmov s12, {bits}",
                $($pass,)+
                "vmov {bits}, s12",
                bits = inout(reg) $bits,
                pa = inout(reg) $pa => _,
                pb = inout(reg) $pb => _,
                out("s4") _, out("s5") _, out("s6") _, out("s7") _, out("s8") _,
                out("s9") _, out("s10") _, out("s11") _, out("s12") _,
                options(pure, readonly, nostack, preserves_flags),
            )
        }
    };
}

/// `acc + sum_k a[k] * b[k]` in order of `k`, each product rounded before it is added
/// (`VMLA`, what the portable loop `acc += a[k] * b[k]` compiles to, so the result is
/// the same bit for bit), four values of each side a `VLDM` where LLVM's code loads every
/// value on its own: six instructions for four multiply-accumulates instead of twelve
/// for up to four passes, eight with the loop beyond (which keeps a long dot product's
/// code small). `kernels::dot::gemm_dot` inlines it with `K` known. (The accumulator
/// goes in and out through a core register: Rust takes a float register operand only
/// with the `vfp2` feature, which implies double precision, which these FPUs lack.)
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
#[inline(always)]
pub(crate) fn dot_vmla<const K: usize>(a: &[f32; K], b: &[f32; K], acc: f32) -> f32 {
    let mut bits = acc.to_bits();
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    match K / 4 {
        0 => {}
        1 => dot_passes!(bits, pa, pb, dot_pass!()),
        2 => dot_passes!(bits, pa, pb, dot_pass!(), dot_pass!()),
        3 => dot_passes!(bits, pa, pb, dot_pass!(), dot_pass!(), dot_pass!()),
        4 => dot_passes!(
            bits,
            pa,
            pb,
            dot_pass!(),
            dot_pass!(),
            dot_pass!(),
            dot_pass!()
        ),
        passes => {
            // Safety: as in `dot_passes!`, the passes counted down in `n`.
            unsafe {
                core::arch::asm!(
                    "vmov s12, {bits}",
                    "2:",
                    dot_pass!(),
                    "subs {n}, #1",
                    "bne 2b",
                    "vmov {bits}, s12",
                    bits = inout(reg) bits,
                    pa = inout(reg) pa => _,
                    pb = inout(reg) pb => _,
                    n = inout(reg) passes => _,
                    out("s4") _, out("s5") _, out("s6") _, out("s7") _, out("s8") _,
                    out("s9") _, out("s10") _, out("s11") _, out("s12") _,
                    options(pure, readonly, nostack),
                );
            }
        }
    }
    let mut acc = f32::from_bits(bits);
    for k in K / 4 * 4..K {
        acc += a[k] * b[k];
    }
    acc
}
