//! The 8-bit integer product's inner loop for cores with the DSP extension (Cortex-M4,
//! M7, M33 with DSP; the `dsp` feature): `SMLAD` adds two 16 x 16-bit products a cycle,
//! on operands `SXTB16`/`UXTB16` widen from bytes two at a time.
//!
//! One call runs a panel of four columns of a `tinyonnx_layout::q8` packed operand
//! over `groups` groups of four rows: per group, one load of four activations, two
//! widenings, two `LDRD`s of the four columns' words, eight widenings and eight
//! `SMLAD`s (21 instructions for 16 multiply-accumulates), two groups a pass of the loop.
//!
//! The depthwise 3x3 routine computes two neighbouring outputs of a row at a time from
//! one word of each of the three input rows: `SXTB16` splits the word's four values
//! `x0..x3` into `(x0, x2)` and `(x1, x3)`, so one `SMLAD` with the row's weights
//! `(w0, w2)` gives the first output's outer products and one with the odd pair the
//! second's, and a halfword multiply-accumulate adds each middle product: 21
//! instructions for 18 multiply-accumulates, no state carried between pairs.

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
    /// `pairs` pairs of a depthwise 3x3 convolution's consecutive outputs (unit steps)
    /// into `out`: output `i` is `base + sum over r, k of rows[r][i + k] * w[r][k]`, x
    /// signed bytes. `args`: the three rows' addresses, then [`Dw3Weights`] (each row
    /// readable for `2 * pairs + 2` bytes at any alignment); `out`: `2 * pairs`
    /// writable `i32`.
    pub(crate) fn tinyonnx_dw3x3_s8(args: *const Dw3Args, out: *mut i32, pairs: u32);
    /// [`tinyonnx_dw3x3_s8`] with x unsigned bytes.
    pub(crate) fn tinyonnx_dw3x3_u8(args: *const Dw3Args, out: *mut i32, pairs: u32);
}

/// The arguments of [`tinyonnx_dw3x3_s8`], in the order its `LDM` takes them.
#[repr(C)]
pub(crate) struct Dw3Args {
    /// The three input rows, each at the first output's first column.
    pub rows: [*const u8; 3],
    /// Per row `r`, `w[r][0]` in the low and `w[r][2]` in the high halfword.
    pub outer: [u32; 3],
    /// `w[0][1]` low, `w[1][1]` high.
    pub middle: u32,
    /// `w[2][1]` low.
    pub last: u32,
    /// Added to every output.
    pub base: i32,
}

impl Dw3Args {
    /// The arguments for rows `rows` and weights `wt` (row-major 3x3, each within
    /// `i16`).
    pub(crate) fn new(rows: [*const u8; 3], wt: &[i32; 9], base: i32) -> Self {
        let pair = |lo: i32, hi: i32| (lo as u32 & 0xffff) | ((hi as u32) << 16);
        Self {
            rows,
            outer: [0, 3, 6].map(|r| pair(wt[r], wt[r + 2])),
            middle: pair(wt[1], wt[4]),
            last: pair(wt[7], 0),
            base,
        }
    }
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

/// One row's part of a pair of depthwise outputs (see the module's text): `$ptr` the
/// row, `$outer` its `(w0, w2)`, `$mid`/`$half` the register and halfword (`b`/`t`) of
/// its `w1`; sums in r10 and r11, which `$acc0`/`$acc1` start from.
macro_rules! dw_row {
    ($widen:literal, $ptr:literal, $outer:literal, $mid:literal, $half:literal, $acc0:literal, $acc1:literal) => {
        concat!(
            "    ldr lr, [",
            $ptr,
            "], #2\n",
            "    ",
            $widen,
            " r12, lr\n",
            "    ",
            $widen,
            " lr, lr, ror #8\n",
            "    smlad r10, r12, ",
            $outer,
            ", ",
            $acc0,
            "\n",
            "    smlab",
            $half,
            " r10, lr, ",
            $mid,
            ", r10\n",
            "    smlad r11, lr, ",
            $outer,
            ", ",
            $acc1,
            "\n",
            "    smlat",
            $half,
            " r11, r12, ",
            $mid,
            ", r11\n",
        )
    };
}

/// A pair of outputs: the three rows, then both sums stored.
macro_rules! dw_pair {
    ($widen:literal) => {
        concat!(
            dw_row!($widen, "r0", "r4", "r7", "b", "r9", "r9"),
            dw_row!($widen, "r1", "r5", "r7", "t", "r10", "r11"),
            dw_row!($widen, "r2", "r6", "r8", "b", "r10", "r11"),
            "    strd r10, r11, [r3], #8",
        )
    };
}

/// One depthwise routine: `$name`, widening the activations with `$widen`.
macro_rules! dw3x3 {
    ($name:literal, $widen:literal) => {
        core::arch::global_asm!(
            ".syntax unified",
            ".thumb",
            ".arch armv7e-m",
            concat!(".section .text.", $name, ",\"ax\",%progbits"),
            concat!(".global ", $name),
            concat!(".type ", $name, ",%function"),
            ".thumb_func",
            concat!($name, ":"),
            // r0 = args, r1 = out, r2 = pairs. Rows in r0-r2, outer weights r4-r6,
            // middle r7, last r8, base r9, sums r10-r11, r3 = out.
            "    push {{r4-r11, lr}}",
            "    mov r3, r1",
            // An odd pair first, then two pairs a pass until r3 reaches the end, kept
            // on the stack (no register is free).
            "    add r12, r1, r2, lsl #3",
            "    push {{r12}}",
            "    tst r2, #1",
            "    ldm r0, {{r0-r2, r4-r9}}",
            "    beq 3f",
            dw_pair!($widen),
            "3:",
            "    ldr r12, [sp]",
            "    cmp r3, r12",
            "    beq 2f",
            "1:",
            dw_pair!($widen),
            dw_pair!($widen),
            "    ldr r12, [sp]",
            "    cmp r3, r12",
            "    bne 1b",
            "2:",
            "    add sp, #4",
            "    pop {{r4-r11, pc}}",
            concat!(".size ", $name, ", . - ", $name),
        );
    };
}

dw3x3!("tinyonnx_dw3x3_s8", "sxtb16");
dw3x3!("tinyonnx_dw3x3_u8", "uxtb16");
