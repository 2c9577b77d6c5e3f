//! The 8-bit integer product's inner loop for cores with the DSP extension (Cortex-M4,
//! M7, M33 with DSP; the `dsp` feature): `SMLAD` adds two 16 x 16-bit products a cycle,
//! on operands `SXTB16`/`UXTB16` widen from bytes two at a time.
//!
//! One call runs a panel of four columns of a `tinyonnx_layout::q8` packed operand
//! over `groups` groups of four rows: per group, one load of four activations, two
//! widenings, two `LDRD`s of the four columns' words, eight widenings and eight
//! `SMLAD`s (21 instructions for 16 multiply-accumulates), two groups a pass of the loop.

// Safety: the declarations match the routines this file assembles below (arguments in
// r0-r3 as named there, nothing returned); callers uphold the pointer contract stated at
// each call.
unsafe extern "C" {
    /// `acc[c] += sum over the groups' rows r of x[r] * w[r][c]`, x signed bytes.
    /// `x`: `4 * groups` readable bytes (any alignment); `w`: `16 * groups` readable
    /// bytes at a 4-byte aligned address; `acc`: four writable `i32`.
    pub(crate) fn tinyonnx_q8x4_s8(x: *const i8, w: *const i8, groups: u32, acc: *mut i32);
    /// [`tinyonnx_q8x4_s8`] with `x` unsigned bytes.
    pub(crate) fn tinyonnx_q8x4_u8(x: *const u8, w: *const i8, groups: u32, acc: *mut i32);
}

/// The instructions of one group of four rows (see the module's text), activations
/// widened with `$widen`: one string of lines.
macro_rules! group {
    ($widen:literal) => {
        concat!(
            "    ldr r8, [r0], #4\n",
            "    ",
            $widen,
            " r9, r8\n",
            "    ",
            $widen,
            " r8, r8, ror #8\n",
            "    ldrd r10, r11, [r1], #8\n",
            "    sxtb16 r12, r10\n",
            "    sxtb16 r10, r10, ror #8\n",
            "    smlad r4, r9, r12, r4\n",
            "    smlad r4, r8, r10, r4\n",
            "    sxtb16 r12, r11\n",
            "    sxtb16 r11, r11, ror #8\n",
            "    smlad r5, r9, r12, r5\n",
            "    smlad r5, r8, r11, r5\n",
            "    ldrd r10, r11, [r1], #8\n",
            "    sxtb16 r12, r10\n",
            "    sxtb16 r10, r10, ror #8\n",
            "    smlad r6, r9, r12, r6\n",
            "    smlad r6, r8, r10, r6\n",
            "    sxtb16 r12, r11\n",
            "    sxtb16 r11, r11, ror #8\n",
            "    smlad r7, r9, r12, r7\n",
            "    smlad r7, r8, r11, r7",
        )
    };
}

/// One routine: `$name`, widening the activations with `$widen`.
macro_rules! q8x4 {
    ($name:literal, $widen:literal) => {
        core::arch::global_asm!(
            ".syntax unified",
            ".thumb",
            // Armv8-M Mainline has the DSP instructions only as an extension, which the
            // assembler takes from the architecture that always has them (the same
            // Thumb-2 encodings).
            ".arch armv7e-m",
            concat!(".section .text.", $name, ",\"ax\",%progbits"),
            concat!(".global ", $name),
            concat!(".type ", $name, ",%function"),
            ".thumb_func",
            concat!($name, ":"),
            // r0 = x, r1 = w, r2 = groups, r3 = acc; sums in r4-r7.
            "    push {{r4-r11}}",
            "    ldm r3, {{r4-r7}}",
            // An odd group first, then two groups a pass (one loop test for 32
            // multiply-accumulates).
            "    lsrs r2, r2, #1",
            "    bcc 3f",
            group!($widen),
            "3:",
            "    cmp r2, #0",
            "    beq 2f",
            "1:",
            group!($widen),
            group!($widen),
            "    subs r2, #1",
            "    bne 1b",
            "2:",
            "    stm r3, {{r4-r7}}",
            "    pop {{r4-r11}}",
            "    bx lr",
            concat!(".size ", $name, ", . - ", $name),
        );
    };
}

q8x4!("tinyonnx_q8x4_s8", "sxtb16");
q8x4!("tinyonnx_q8x4_u8", "uxtb16");
