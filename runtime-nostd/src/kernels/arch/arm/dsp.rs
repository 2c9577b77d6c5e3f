//! The 8-bit integer product's inner loop for cores with the DSP extension (Cortex-M4,
//! M7, M33 with DSP; the `dsp` feature): `SMLAD` adds two 16 x 16-bit products a cycle,
//! on operands `SXTB16`/`UXTB16` widen from bytes two at a time.
//!
//! One call runs a panel of four columns of a `tinyonnx_layout::q8` packed operand
//! over `groups` groups of four rows: per group, one load of four activations, two
//! widenings, one `LDM` of the four columns' words, eight widenings and eight `SMLAD`s
//! (20 instructions for 16 multiply-accumulates), two groups a pass of the loop.
//!
//! The row routines (`tinyonnx_q8row*`) run a whole row of such products with their
//! requantization: panel after panel, the pair order's sums (`q8x4p!`), each column's
//! offset, the float multiply and rounding of `requantize_finite`, `QADD` of the zero
//! point, `SSAT`/`USAT` and `STRB`, the row's state between panels in float registers.
//!
//! The depthwise 3x3 routine computes two neighbouring outputs of a row at a time from
//! one word of each of the three input rows: `SXTB16` splits the word's four values
//! `x0..x3` into `(x0, x2)` and `(x1, x3)`, so one `SMLAD` with the row's weights
//! `(w0, w2)` gives the first output's outer products and one with the odd pair the
//! second's, and a halfword multiply-accumulate adds each middle product: 21
//! instructions for 18 multiply-accumulates, no state carried between pairs; each sum
//! is then requantized into its byte in eight more (the float multiply and rounding of
//! `requantize_finite`, `QADD` of the zero point, `SSAT`/`USAT`, `STRB`).
//!
//! The 2x2 stride-2 MaxPool of bytes takes four byte maxima in two instructions
//! (`SSUB8`/`USUB8`, `SEL`), two windows from a word of each input row.

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
    /// One pass of a panel in `tinyonnx_layout::q8::pair_order` over `groups` groups of
    /// four rows, x signed bytes: adds column `c`'s sum of `x[r] * w[r][c]` to `acc[c]`
    /// (wrapping), for `c` in 0..4: per column pair `p`, the sum of `x[r] * (256 *
    /// w[r][2 p + 1] + w[r][2 p])` and that of `x[r] * w[r][2 p]` unpaired (exact while
    /// the upper column's sum stays within 24 bits: `q8::pair_groups`). Pointers as
    /// [`tinyonnx_q8x4_s8`]'s.
    pub(crate) fn tinyonnx_q8x4p_s8(x: *const i8, w: *const i8, groups: u32, acc: *mut i32);
    /// [`tinyonnx_q8x4p_s8`] with `x` unsigned bytes.
    pub(crate) fn tinyonnx_q8x4p_u8(x: *const u8, w: *const i8, groups: u32, acc: *mut i32);
    /// A whole row of a packed operand in `tinyonnx_layout::q8::pair_order`, its
    /// sums requantized into bytes, x and outputs signed bytes, one multiplier a
    /// column: for each panel of `w` (one after another, `16 * groups` bytes each,
    /// 4-byte aligned), one pass of [`tinyonnx_q8x4p_s8`] from zero sums over the
    /// row's `groups` groups (at least 1 and at most `q8::pair_groups`, so the pass is
    /// exact), each column's sum plus its offset requantized as `requantize_finite`
    /// does, the column's byte stored `stride` bytes after the previous column's;
    /// `args` as [`PairRowArgs`] states.
    pub(crate) fn tinyonnx_q8rowc_s8_s8(args: *const PairRowArgs, w: *const i8);
    /// x signed, outputs unsigned bytes.
    pub(crate) fn tinyonnx_q8rowc_s8_u8(args: *const PairRowArgs, w: *const i8);
    /// x unsigned, outputs signed bytes.
    pub(crate) fn tinyonnx_q8rowc_u8_s8(args: *const PairRowArgs, w: *const i8);
    /// x and outputs unsigned bytes.
    pub(crate) fn tinyonnx_q8rowc_u8_u8(args: *const PairRowArgs, w: *const i8);
    /// [`tinyonnx_q8rowc_s8_s8`] with one multiplier for every column.
    pub(crate) fn tinyonnx_q8rowt_s8_s8(args: *const PairRowArgs, w: *const i8);
    /// x signed, outputs unsigned bytes.
    pub(crate) fn tinyonnx_q8rowt_s8_u8(args: *const PairRowArgs, w: *const i8);
    /// x unsigned, outputs signed bytes.
    pub(crate) fn tinyonnx_q8rowt_u8_s8(args: *const PairRowArgs, w: *const i8);
    /// x and outputs unsigned bytes.
    pub(crate) fn tinyonnx_q8rowt_u8_u8(args: *const PairRowArgs, w: *const i8);
    /// `pairs` pairs of a depthwise 3x3 convolution's consecutive outputs (unit steps)
    /// into `out`, x and outputs signed bytes: output `i` is
    /// `base + sum over r, k of rows[r][i + k] * w[r][k]` requantized as
    /// `requantize_finite` does (`sum as f32 * multiplier`, rounded half to even, plus
    /// the zero point, saturated); `args` as [`Dw3Args`] states (each row readable for
    /// `2 * pairs + 2` bytes at any alignment); `out`: `2 * pairs` writable bytes.
    pub(crate) fn tinyonnx_dw3x3_s8_s8(args: *const Dw3Args, out: *mut u8, pairs: u32);
    /// x signed, outputs unsigned bytes.
    pub(crate) fn tinyonnx_dw3x3_s8_u8(args: *const Dw3Args, out: *mut u8, pairs: u32);
    /// x unsigned, outputs signed bytes.
    pub(crate) fn tinyonnx_dw3x3_u8_s8(args: *const Dw3Args, out: *mut u8, pairs: u32);
    /// x and outputs unsigned bytes.
    pub(crate) fn tinyonnx_dw3x3_u8_u8(args: *const Dw3Args, out: *mut u8, pairs: u32);
    /// Copies `words` words from `src` to `dst`, both at any alignment (LLVM makes a
    /// loop of word copies a call to its `memcpy`, several times slower on a few
    /// dozen unaligned bytes).
    pub(crate) fn tinyonnx_copy_words(dst: *mut u8, src: *const u8, words: u32);
}

/// The arguments of the requantizing row routines (`tinyonnx_q8row*`), in the order
/// their `LDM`s take them.
#[repr(C)]
pub(crate) struct PairRowArgs {
    /// Where the first column's byte goes.
    pub out: *mut u8,
    /// Bytes from one column's output to the next's.
    pub stride: usize,
    /// `stride` times the columns (whole panels): the routine stops at `out + span`.
    pub span: usize,
    /// The zero point minus the bits of `magic`.
    pub offset_zp: i32,
    /// The row of activations, `4 * groups` readable bytes at any alignment.
    pub x: *const u8,
    /// Groups of four rows a panel.
    pub groups: u32,
    /// Per column, the `i32` added to its sum.
    pub offset: *const i32,
    /// Per column a multiplier (`tinyonnx_q8rowc_*`), or one for all
    /// (`tinyonnx_q8rowt_*`); 4-byte aligned.
    pub multiplier: *const f32,
    /// `1.5 * 2^23` (the addition rounds).
    pub magic: f32,
}

/// The arguments of the depthwise routines, in the order their `LDM` and `VLDM` take
/// them.
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
    /// Added to every sum.
    pub base: i32,
    /// The multiplier.
    pub multiplier: f32,
    /// `1.5 * 2^23` (the addition rounds).
    pub magic: f32,
    /// The zero point minus the bits of `magic` (one saturating addition after the
    /// rounding).
    pub offset: i32,
}

impl Dw3Args {
    /// The arguments for weights `wt` (row-major 3x3, each within `i16`), sums from
    /// `base`, requantized with `(multiplier, magic, offset)` as the fields state (rows
    /// to be set before a call).
    pub(crate) fn new(
        wt: &[i32; 9],
        base: i32,
        (multiplier, magic, offset): (f32, f32, i32),
    ) -> Self {
        let pair = |lo: i32, hi: i32| (lo as u32 & 0xffff) | ((hi as u32) << 16);
        Self {
            rows: [core::ptr::null(); 3],
            outer: [0, 3, 6].map(|r| pair(wt[r], wt[r + 2])),
            middle: pair(wt[1], wt[4]),
            last: pair(wt[7], 0),
            base,
            multiplier,
            magic,
            offset,
        }
    }
}

/// One column's word `$w` of a group: widened into `r3` and itself, each half times
/// the activations' pair it meets, into the column's sum `$acc`.
macro_rules! column {
    ($w:literal, $acc:literal) => {
        concat!(
            concat!("    sxtb16 r3, ", $w, "\n"),
            concat!("    sxtb16 ", $w, ", ", $w, ", ror #8\n"),
            concat!("    smlad ", $acc, ", r9, r3, ", $acc, "\n"),
            concat!("    smlad ", $acc, ", r8, ", $w, ", ", $acc, "\n"),
        )
    };
}

/// One word `$w` of a group in the pair order, with the activations' pair `$x`: both
/// columns' products into `$raw`, the lower column's (its bytes widened into `r3`)
/// into `$lo`.
macro_rules! pair {
    ($w:literal, $x:literal, $raw:literal, $lo:literal) => {
        concat!(
            concat!("    smlad ", $raw, ", ", $x, ", ", $w, ", ", $raw, "\n"),
            concat!("    sxtb16 r3, ", $w, "\n"),
            concat!("    smlad ", $lo, ", ", $x, ", r3, ", $lo, "\n"),
        )
    };
}

/// The first word of a pair in a group that starts the sums: `pair!` with `SMUAD`.
macro_rules! pair_first {
    ($w:literal, $x:literal, $raw:literal, $lo:literal) => {
        concat!(
            concat!("    smuad ", $raw, ", ", $x, ", ", $w, "\n"),
            concat!("    sxtb16 r3, ", $w, "\n"),
            concat!("    smuad ", $lo, ", ", $x, ", r3\n"),
        )
    };
}

/// A group's loads: four activations widened into the pairs r9 (rows 0 and 2) and r8
/// (rows 1 and 3) with `$widen`, the four columns' words into r10-r12 and lr.
macro_rules! group_load {
    ($widen:literal) => {
        concat!(
            "    ldr r8, [r0], #4\n",
            concat!("    ", $widen, " r9, r8\n"),
            concat!("    ", $widen, " r8, r8, ror #8\n"),
            "    ldm r1!, {{r10, r11, r12, lr}}\n",
        )
    };
}

/// The instructions of one group of four rows (see the module's text), activations
/// widened with `$widen`: one string of lines (`first`: the pair order's, starting the
/// sums; `pairs`: the pair order's; else the plain order's).
macro_rules! group {
    ((first $widen:literal)) => {
        concat!(
            group_load!($widen),
            pair_first!("r10", "r9", "r4", "r5"),
            pair!("r11", "r8", "r4", "r5"),
            pair_first!("r12", "r9", "r6", "r7"),
            pair!("lr", "r8", "r6", "r7"),
        )
    };
    ((pairs $widen:literal)) => {
        concat!(
            group_load!($widen),
            pair!("r10", "r9", "r4", "r5"),
            pair!("r11", "r8", "r4", "r5"),
            pair!("r12", "r9", "r6", "r7"),
            pair!("lr", "r8", "r6", "r7"),
        )
    };
    ($widen:literal) => {
        concat!(
            group_load!($widen),
            column!("r10", "r4"),
            column!("r11", "r5"),
            column!("r12", "r6"),
            column!("lr", "r7"),
        )
    };
}

/// The loop over the r2 groups of four rows (`group!($group)` each), two a pass, to
/// the label `2:`.
macro_rules! groups {
    ($group:tt) => {
        concat!(
            "    lsrs r2, r2, #1\n",
            "    bcc 3f\n",
            group!($group),
            "3:\n",
            "    cmp r2, #0\n",
            "    beq 2f\n",
            "1:\n",
            group!($group),
            group!($group),
            "    subs r2, #1\n",
            "    bne 1b\n",
            "2:",
        )
    };
}

/// One routine: `$name`, widening the activations with `$widen`. r0: the activations,
/// r1: the weights, r2: the groups left (halved), r3: a widened weight (the sums'
/// address waits on the stack), r4-r7: the sums, r8/r9: the activations' pairs,
/// r10-r12 and lr: a group's four words.
macro_rules! q8x4 {
    ($name:literal, $widen:literal) => {
        thumb_fn!(
            $name,
            "    push {{r3-r11, lr}}",
            "    ldm r3, {{r4-r7}}",
            groups!($widen),
            "    ldr r3, [sp]",
            "    stm r3, {{r4-r7}}",
            "    pop {{r3-r11, pc}}",
        );
    };
}

q8x4!("tinyonnx_q8x4_s8", "sxtb16");
q8x4!("tinyonnx_q8x4_u8", "uxtb16");

/// One routine of the pair order: `$name`, widening the activations with `$widen`.
/// Registers as in `q8x4!`'s, the sums starting from zero: r4 both columns of the
/// first pair, r5 its lower column, r6 and r7 the second pair's. Unpaired at the end:
/// the upper column's sum is the difference over 256.
macro_rules! q8x4p {
    ($name:literal, $widen:literal) => {
        thumb_fn!(
            $name,
            "    push {{r3-r11, lr}}",
            "    movs r4, #0",
            "    movs r5, #0",
            "    movs r6, #0",
            "    movs r7, #0",
            groups!((pairs $widen)),
            "    ldr r3, [sp]",
            "    subs r4, r4, r5",
            "    subs r6, r6, r7",
            "    ldm r3, {{r8-r11}}",
            "    add r8, r8, r5",
            "    add r9, r9, r4, asr #8",
            "    add r10, r10, r7",
            "    add r11, r11, r6, asr #8",
            "    stm r3, {{r8-r11}}",
            "    pop {{r3-r11, pc}}",
        );
    };
}

q8x4p!("tinyonnx_q8x4p_s8", "sxtb16");
q8x4p!("tinyonnx_q8x4p_u8", "uxtb16");

/// Both columns' sums of a pair, as `SMLAD`s leave them in `$both`/`$lo` (see
/// `q8x4p!`), plus their offsets `$o0`/`$o1`: the lower column in `$lo`, the upper one
/// in `$both`.
macro_rules! unpair {
    ($both:literal, $lo:literal, $o0:literal, $o1:literal) => {
        concat!(
            concat!("    subs ", $both, ", ", $both, ", ", $lo, "\n"),
            concat!("    add ", $lo, ", ", $lo, ", ", $o0, "\n"),
            concat!("    add ", $both, ", ", $o1, ", ", $both, ", asr #8\n"),
        )
    };
}

/// One routine of a whole requantized row: `$name`, activations widened with
/// `$widen`, bytes saturated with `$sat`, the multipliers of the four columns `$m`
/// (s0-s3 loaded for each panel by `$load`, or s0 once by `$init`). In the panel loop
/// the registers are `q8x4p!`'s, the first group starting the sums; between panels
/// the row's state waits in s8-s14 (`1.5 * 2^23`, -, x, the groups, -, the offsets'
/// and the multipliers' addresses) and on the stack (out, stride, end, the zero
/// point's offset); s4-s7 hold a panel's sums as floats.
macro_rules! q8row {
    ($name:literal, $widen:literal, $sat:literal, $init:literal, $load:literal, [$m0:literal, $m1:literal, $m2:literal, $m3:literal]) => {
        thumb_fn!(
            $name,
            "    push {{r4-r11, lr}}",
            "    sub sp, #16",
            "    ldm r0!, {{r2-r5}}",
            "    add r4, r2, r4",
            "    stm sp, {{r2-r5}}",
            "    ldm r0, {{r2-r6}}",
            "    vmov s10, s11, r2, r3",
            "    vmov s13, s14, r4, r5",
            "    vmov s8, r6",
            $init,
            "4:",
            "    vmov r0, r2, s10, s11",
            group!((first $widen)),
            "    subs r2, #1",
            groups!((pairs $widen)),
            "    vmov r0, s13",
            "    ldm r0!, {{r2, r3, r8, r9}}",
            "    vmov s13, r0",
            unpair!("r4", "r5", "r2", "r3"),
            unpair!("r6", "r7", "r8", "r9"),
            // Columns 0-3 now in r5, r4, r7, r6.
            $load,
            "    vmov s4, s5, r5, r4",
            "    vmov s6, s7, r7, r6",
            "    vcvt.f32.s32 s4, s4",
            "    vcvt.f32.s32 s5, s5",
            "    vcvt.f32.s32 s6, s6",
            "    vcvt.f32.s32 s7, s7",
            concat!("    vmul.f32 s4, s4, ", $m0),
            concat!("    vmul.f32 s5, s5, ", $m1),
            concat!("    vmul.f32 s6, s6, ", $m2),
            concat!("    vmul.f32 s7, s7, ", $m3),
            "    vadd.f32 s4, s4, s8",
            "    vadd.f32 s5, s5, s8",
            "    vadd.f32 s6, s6, s8",
            "    vadd.f32 s7, s7, s8",
            "    vmov r5, r4, s4, s5",
            "    vmov r7, r6, s6, s7",
            "    ldm sp, {{r0, r2, r3, r12}}",
            "    qadd r5, r5, r12",
            "    qadd r4, r4, r12",
            "    qadd r7, r7, r12",
            "    qadd r6, r6, r12",
            concat!("    ", $sat, " r5, #8, r5"),
            concat!("    ", $sat, " r4, #8, r4"),
            concat!("    ", $sat, " r7, #8, r7"),
            concat!("    ", $sat, " r6, #8, r6"),
            "    strb r5, [r0]",
            "    strb r4, [r0, r2]",
            "    add r0, r0, r2, lsl #1",
            "    strb r7, [r0]",
            "    strb r6, [r0, r2]",
            "    add r0, r0, r2, lsl #1",
            "    str r0, [sp]",
            "    cmp r0, r3",
            "    bne 4b",
            "    add sp, #16",
            "    pop {{r4-r11, pc}}",
        );
    };
}

/// The four routines of one multiplier layout, named `$names` (x, outputs: s8 s8,
/// s8 u8, u8 s8, u8 u8).
macro_rules! q8rows {
    ([$ss:literal, $su:literal, $us:literal, $uu:literal], $init:literal, $load:literal, $m:tt) => {
        q8row!($ss, "sxtb16", "ssat", $init, $load, $m);
        q8row!($su, "sxtb16", "usat", $init, $load, $m);
        q8row!($us, "uxtb16", "ssat", $init, $load, $m);
        q8row!($uu, "uxtb16", "usat", $init, $load, $m);
    };
}

// A multiplier a column, loaded for each panel.
q8rows!(
    [
        "tinyonnx_q8rowc_s8_s8",
        "tinyonnx_q8rowc_s8_u8",
        "tinyonnx_q8rowc_u8_s8",
        "tinyonnx_q8rowc_u8_u8"
    ],
    "",
    "    vmov r0, s14\n    vldm r0!, {{s0-s3}}\n    vmov s14, r0",
    ["s0", "s1", "s2", "s3"]
);
// One multiplier, loaded once.
q8rows!(
    [
        "tinyonnx_q8rowt_s8_s8",
        "tinyonnx_q8rowt_s8_u8",
        "tinyonnx_q8rowt_u8_s8",
        "tinyonnx_q8rowt_u8_u8"
    ],
    "    vldr s0, [r5]",
    "",
    ["s0", "s0", "s0", "s0"]
);

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

/// The three rows of a pair of outputs, the sums starting from `$acc0`/`$acc1`.
macro_rules! dw_sums {
    ($widen:literal, $acc0:literal, $acc1:literal) => {
        concat!(
            dw_row!($widen, "r0", "r4", "r7", "b", $acc0, $acc1),
            dw_row!($widen, "r1", "r5", "r7", "t", "r10", "r11"),
            dw_row!($widen, "r2", "r6", "r8", "b", "r10", "r11"),
        )
    };
}

/// Requantizes sum register `$r` through `$s` and `$t` and stores its byte: the sum
/// as a float times the multiplier (s0) plus 1.5 * 2^23 (s1, so the addition rounds
/// half to even), the float's bits plus r9 (the zero point minus those of 1.5 * 2^23,
/// saturating), `$sat`urated to a byte.
macro_rules! dw_requant {
    ($sat:literal, $r:literal, $s:literal, $t:literal) => {
        concat!(
            "    vmov ",
            $s,
            ", ",
            $r,
            "\n",
            "    vcvt.f32.s32 ",
            $s,
            ", ",
            $s,
            "\n",
            "    vmov.f32 ",
            $t,
            ", s1\n",
            "    vmla.f32 ",
            $t,
            ", ",
            $s,
            ", s0\n",
            "    vmov ",
            $r,
            ", ",
            $t,
            "\n",
            "    qadd ",
            $r,
            ", ",
            $r,
            ", r12\n",
            "    ",
            $sat,
            " ",
            $r,
            ", #8, ",
            $r,
            "\n",
            "    strb ",
            $r,
            ", [r3], #1\n",
        )
    };
}

/// A pair of requantized outputs: sums from the base in r9, the zero point's offset
/// from s2 into r12 (free after the products).
macro_rules! dw_q8_pair {
    ($widen:literal, $sat:literal) => {
        concat!(
            dw_sums!($widen, "r9", "r9"),
            "    vmov r12, s2\n",
            dw_requant!($sat, "r10", "s4", "s5"),
            dw_requant!($sat, "r11", "s6", "s7"),
        )
    };
}

/// One depthwise routine, `$name`, its pairs `$pair`.
macro_rules! dw3x3 {
    ($name:literal, $pair:expr) => {
        thumb_fn!(
            $name,
            // r0 = args, r1 = out, r2 = pairs. Rows in r0-r2, outer weights r4-r6,
            // middle r7, last r8, base r9, sums r10-r11, r3 = out; multiplier,
            // 1.5 * 2^23 and the zero point's offset in s0-s2 (caller-saved, as
            // s4-s7).
            "    push {{r4-r11, lr}}",
            "    mov r3, r1",
            // An odd pair first, then two pairs a pass until r3 reaches the end, kept
            // on the stack (no register is free).
            "    add r12, r1, r2, lsl #1",
            "    push {{r12}}",
            "    add r12, r0, #36",
            "    vldm r12, {{s0-s2}}",
            "    tst r2, #1",
            "    ldm r0, {{r0-r2, r4-r9}}",
            "    beq 3f",
            $pair,
            "3:",
            "    ldr r12, [sp]",
            "    cmp r3, r12",
            "    beq 2f",
            "1:",
            $pair,
            $pair,
            "    ldr r12, [sp]",
            "    cmp r3, r12",
            "    bne 1b",
            "2:",
            "    add sp, #4",
            "    pop {{r4-r11, pc}}",
        );
    };
}

dw3x3!("tinyonnx_dw3x3_s8_s8", dw_q8_pair!("sxtb16", "ssat"));
dw3x3!("tinyonnx_dw3x3_s8_u8", dw_q8_pair!("sxtb16", "usat"));
dw3x3!("tinyonnx_dw3x3_u8_s8", dw_q8_pair!("uxtb16", "ssat"));
dw3x3!("tinyonnx_dw3x3_u8_u8", dw_q8_pair!("uxtb16", "usat"));

thumb_fn!(
    "tinyonnx_copy_words",
    "    cbz r2, 2f",
    "1:",
    "    ldr r3, [r1], #4",
    "    str r3, [r0], #4",
    "    subs r2, #1",
    "    bne 1b",
    "2:",
    "    bx lr",
);

/// `kernels::pool::max_pool2d_int`'s 2x2 stride-2 window over bytes (`signed`: `i8`, else `u8`) on
/// the DSP cores, every layer's sizes `(nc, h, w, oh, ow)` as values (`2 oh <= h`,
/// `2 ow <= w`): per pair of windows one word of each input row, the rows' byte maxima
/// (`SSUB8`/`USUB8` set a flag per byte where the first is not below the second, `SEL`
/// takes those bytes from it), then those of each byte and its right neighbour; an odd
/// last window from the row's last word. False (nothing written) when the sizes do not
/// fit or a row has one window only.
#[inline(never)]
pub(crate) fn max_pool_2x2_bytes(
    signed: bool,
    (nc, h, w, oh, ow): (usize, usize, usize, usize, usize),
    x: &[u8],
    y: &mut [u8],
) -> bool {
    // The instructions by their encodings, with fixed registers (a in r2, b in r3, the
    // result in r12): the Armv8-M Mainline target (M33) takes DSP mnemonics only in
    // global assembly that names another architecture (as above).
    // `ssub8`/`usub8 r12, r2, r3`, then `sel r12, r2, r3`.
    let max4 = |a: u32, b: u32| -> u32 {
        let m: u32;
        // Safety: register operations only (the GE flags, which `SEL` reads right
        // after the subtraction sets them, are no state any Rust code keeps).
        unsafe {
            if signed {
                core::arch::asm!(".inst.w 0xfac2fc03", ".inst.w 0xfaa2fc83", in("r2") a, in("r3") b, out("r12") m, options(pure, nomem, nostack));
            } else {
                core::arch::asm!(".inst.w 0xfac2fc43", ".inst.w 0xfaa2fc83", in("r2") a, in("r3") b, out("r12") m, options(pure, nomem, nostack));
            }
        }
        m
    };
    let size = |a: usize, b: usize, c: usize| a.checked_mul(b).and_then(|ab| ab.checked_mul(c));
    let (Some(total_in), Some(total_out)) = (size(nc, h, w), size(nc, oh, ow)) else {
        return false;
    };
    if ow < 2 || 2 * oh > h || 2 * ow > w || x.len() < total_in || y.len() < total_out {
        return false;
    }
    let (xp, yp) = (x.as_ptr(), y.as_mut_ptr());
    let word = |at: usize| {
        // Safety: every `at` below starts four bytes inside `x`: a pair of windows
        // `j, j + 1 < ow` of output row `r < oh` of plane `p < nc` reads bytes
        // `2 j..2 j + 4 <= 2 ow <= w` of input rows `2 r` and `2 r + 1 < h`, so at most
        // `p h w + (2 r + 1) w + w <= nc h w = total_in <= x.len()`; the odd last
        // window reads the row's word at `2 ow - 4 >= 0` (`ow >= 2`, checked).
        // (`read_unaligned`: the cores load words at any address.)
        unsafe { xp.add(at).cast::<u32>().read_unaligned() }
    };
    let mut out = 0;
    for p in 0..nc {
        for r in 0..oh {
            let top = (p * h + 2 * r) * w;
            let mut j = 0;
            while j + 2 <= ow {
                let v = max4(word(top + 2 * j), word(top + w + 2 * j));
                let m = max4(v, v >> 8);
                // Safety: `out + j + 1 < (p oh + r) ow + ow <= total_out <= y.len()`.
                unsafe {
                    *yp.add(out + j) = m as u8;
                    *yp.add(out + j + 1) = (m >> 16) as u8;
                }
                j += 2;
            }
            if j < ow {
                // The odd last window: bytes 2 and 3 of the word ending at its columns.
                let v = max4(word(top + 2 * j - 2), word(top + w + 2 * j - 2));
                let m = max4(v, v >> 8) >> 16;
                // Safety: `out + j < total_out`, as above.
                unsafe { *yp.add(out + j) = m as u8 };
            }
            out += ow;
        }
    }
    true
}
