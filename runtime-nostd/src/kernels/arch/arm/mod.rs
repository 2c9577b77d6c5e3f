//! Arm: the hand-written `VFMA.F32` loops of the Gemm and Conv kernels, for FPUs with
//! VFPv4 or later and single precision (Cortex-M4F, M7, M33 with FPU; the `fma-vfp4`
//! feature).

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
// arguments in the AAPCS-VFP registers named there, nothing returned); callers uphold the
// pointer contract stated at each call.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    pub(crate) fn tinyonnx_panel8_vfma(a: *const f32, panel: *const f32, acc: *mut f32, k: u32);
}

// AAPCS-VFP: a in r0, panel in r1, acc in r2, k in r3. Eight accumulators in s0-s7,
// four values of A in s8-s11, one panel row in s16-s23 (callee-saved, so pushed). Four
// steps of k a pass: one load of four values of A, then per step one load of eight
// panel values and eight fused multiply-adds, and the loop: 39 instructions for 32
// multiply-accumulates (12 for 8 one step at a time, as the last k % 4 steps go).
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    ".fpu fpv4-sp-d16",
    ".section .text.tinyonnx_panel8_vfma,\"ax\",%progbits",
    ".global tinyonnx_panel8_vfma",
    ".type tinyonnx_panel8_vfma,%function",
    ".thumb_func",
    "tinyonnx_panel8_vfma:",
    "    vpush {{s16-s23}}",
    "    vldmia r2, {{s0-s7}}",
    "    subs r3, #4",
    "    blo 3f",
    "1:",
    "    vldmia r0!, {{s8-s11}}",
    "    vldmia r1!, {{s16-s23}}",
    "    vfma.f32 s0, s8, s16",
    "    vfma.f32 s1, s8, s17",
    "    vfma.f32 s2, s8, s18",
    "    vfma.f32 s3, s8, s19",
    "    vfma.f32 s4, s8, s20",
    "    vfma.f32 s5, s8, s21",
    "    vfma.f32 s6, s8, s22",
    "    vfma.f32 s7, s8, s23",
    "    vldmia r1!, {{s16-s23}}",
    "    vfma.f32 s0, s9, s16",
    "    vfma.f32 s1, s9, s17",
    "    vfma.f32 s2, s9, s18",
    "    vfma.f32 s3, s9, s19",
    "    vfma.f32 s4, s9, s20",
    "    vfma.f32 s5, s9, s21",
    "    vfma.f32 s6, s9, s22",
    "    vfma.f32 s7, s9, s23",
    "    vldmia r1!, {{s16-s23}}",
    "    vfma.f32 s0, s10, s16",
    "    vfma.f32 s1, s10, s17",
    "    vfma.f32 s2, s10, s18",
    "    vfma.f32 s3, s10, s19",
    "    vfma.f32 s4, s10, s20",
    "    vfma.f32 s5, s10, s21",
    "    vfma.f32 s6, s10, s22",
    "    vfma.f32 s7, s10, s23",
    "    vldmia r1!, {{s16-s23}}",
    "    vfma.f32 s0, s11, s16",
    "    vfma.f32 s1, s11, s17",
    "    vfma.f32 s2, s11, s18",
    "    vfma.f32 s3, s11, s19",
    "    vfma.f32 s4, s11, s20",
    "    vfma.f32 s5, s11, s21",
    "    vfma.f32 s6, s11, s22",
    "    vfma.f32 s7, s11, s23",
    "    subs r3, #4",
    "    bhs 1b",
    "3:",
    "    adds r3, #4",
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
    "    subs r3, #1",
    "    bne 4b",
    "2:",
    "    vstmia r2, {{s0-s7}}",
    "    vpop {{s16-s23}}",
    "    bx lr",
    ".size tinyonnx_panel8_vfma, . - tinyonnx_panel8_vfma",
);

// Safety: the declaration matches the routine this file assembles below (its
// arguments in the AAPCS-VFP registers named there, nothing returned); callers uphold the
// pointer contract stated at each call.
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
unsafe extern "C" {
    pub(crate) fn tinyonnx_panel8x2_vfma(
        a0: *const f32,
        a1: *const f32,
        panel: *const f32,
        acc: *mut f32,
        k: u32,
    );
}

// Two rows of A against one panel. AAPCS-VFP: a0 in r0, a1 in r1, panel in r2, acc in
// r3, k on the stack. Sixteen accumulators in s0-s15 (row 0's eight, then row 1's), two
// values of each row of A in s16-s17 and s18-s19, one panel row in s24-s31 (s16-s31
// are callee-saved, so pushed). Two steps of k a pass: one load of two values per row
// of A, then per step one load of eight panel values and sixteen fused multiply-adds,
// and the loop: 38 instructions for 32 multiply-accumulates (21 for 16 when k is odd,
// for the last step).
#[cfg(all(feature = "fma-vfp4", target_arch = "arm"))]
core::arch::global_asm!(
    ".syntax unified",
    ".thumb",
    ".fpu fpv4-sp-d16",
    ".section .text.tinyonnx_panel8x2_vfma,\"ax\",%progbits",
    ".global tinyonnx_panel8x2_vfma",
    ".type tinyonnx_panel8x2_vfma,%function",
    ".thumb_func",
    "tinyonnx_panel8x2_vfma:",
    "    ldr r12, [sp]",
    "    vpush {{s16-s31}}",
    "    vldmia r3, {{s0-s15}}",
    "    subs r12, #2",
    "    blo 3f",
    "1:",
    "    vldmia r0!, {{s16-s17}}",
    "    vldmia r1!, {{s18-s19}}",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s16, s24",
    "    vfma.f32 s1, s16, s25",
    "    vfma.f32 s2, s16, s26",
    "    vfma.f32 s3, s16, s27",
    "    vfma.f32 s4, s16, s28",
    "    vfma.f32 s5, s16, s29",
    "    vfma.f32 s6, s16, s30",
    "    vfma.f32 s7, s16, s31",
    "    vfma.f32 s8, s18, s24",
    "    vfma.f32 s9, s18, s25",
    "    vfma.f32 s10, s18, s26",
    "    vfma.f32 s11, s18, s27",
    "    vfma.f32 s12, s18, s28",
    "    vfma.f32 s13, s18, s29",
    "    vfma.f32 s14, s18, s30",
    "    vfma.f32 s15, s18, s31",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s17, s24",
    "    vfma.f32 s1, s17, s25",
    "    vfma.f32 s2, s17, s26",
    "    vfma.f32 s3, s17, s27",
    "    vfma.f32 s4, s17, s28",
    "    vfma.f32 s5, s17, s29",
    "    vfma.f32 s6, s17, s30",
    "    vfma.f32 s7, s17, s31",
    "    vfma.f32 s8, s19, s24",
    "    vfma.f32 s9, s19, s25",
    "    vfma.f32 s10, s19, s26",
    "    vfma.f32 s11, s19, s27",
    "    vfma.f32 s12, s19, s28",
    "    vfma.f32 s13, s19, s29",
    "    vfma.f32 s14, s19, s30",
    "    vfma.f32 s15, s19, s31",
    "    subs r12, #2",
    "    bhs 1b",
    "3:",
    "    adds r12, #2",
    "    beq 2f",
    "    vldmia r0!, {{s16}}",
    "    vldmia r1!, {{s18}}",
    "    vldmia r2!, {{s24-s31}}",
    "    vfma.f32 s0, s16, s24",
    "    vfma.f32 s1, s16, s25",
    "    vfma.f32 s2, s16, s26",
    "    vfma.f32 s3, s16, s27",
    "    vfma.f32 s4, s16, s28",
    "    vfma.f32 s5, s16, s29",
    "    vfma.f32 s6, s16, s30",
    "    vfma.f32 s7, s16, s31",
    "    vfma.f32 s8, s18, s24",
    "    vfma.f32 s9, s18, s25",
    "    vfma.f32 s10, s18, s26",
    "    vfma.f32 s11, s18, s27",
    "    vfma.f32 s12, s18, s28",
    "    vfma.f32 s13, s18, s29",
    "    vfma.f32 s14, s18, s30",
    "    vfma.f32 s15, s18, s31",
    "2:",
    "    vstmia r3, {{s0-s15}}",
    "    vpop {{s16-s31}}",
    "    bx lr",
    ".size tinyonnx_panel8x2_vfma, . - tinyonnx_panel8x2_vfma",
);
