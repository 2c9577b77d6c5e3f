//! The 2x2 stride-2 MaxPool on the Arm FPU cores (`fma-vfp4`): a window's max is three
//! ordered compares; the routine reports a NaN by the FPU's sticky invalid-operation
//! flag, and only then are the windows holding one looked for.

/// Assembly lines that set the float register `$a` to the larger of `$a` and `$b`, the
/// first on ties: a signalling compare (`VCMPE`: any NaN raises the invalid-operation
/// flag, FPSCR.IOC, and leaves `$a`), the flags, and a move when `$a < $b`.
macro_rules! max_into {
    ($a:literal, $b:literal) => {
        concat!(
            "    vcmpe.f32 ",
            $a,
            ", ",
            $b,
            "\n",
            "    vmrs APSR_nzcv, fpscr\n",
            "    it mi\n",
            "    vmovmi.f32 ",
            $a,
            ", ",
            $b,
        )
    };
}

/// The lines of one output row (label `$row`, inner loop `$pair`, one window left
/// `$one`, row done `$next`): two windows a pass, from four values of each input row
/// (s0-s3 over s4-s7), their maxima in s0 and s2 stored by `$store2`; an odd last window
/// stored from s0 by `$store1`. r0 and r7: the two input rows, lr: the next pair of rows,
/// r1: the output, r3: windows a row, r2: rows left, r4: an input row's bytes.
macro_rules! pool_rows {
    ($row:literal, $pair:literal, $one:literal, $next:literal, [$($store2:literal),*], [$($store1:literal),*]) => {
        concat!(
            $row, ":\n",
            "    add r7, r0, r4\n",
            "    add lr, r7, r4\n",
            "    subs r6, r3, #2\n",
            "    blo ", $one, "f\n",
            $pair, ":\n",
            "    vldmia r0!, {{s0-s3}}\n",
            "    vldmia r7!, {{s4-s7}}\n",
            max_into!("s0", "s1"), "\n",
            max_into!("s4", "s5"), "\n",
            max_into!("s0", "s4"), "\n",
            max_into!("s2", "s3"), "\n",
            max_into!("s6", "s7"), "\n",
            max_into!("s2", "s6"), "\n",
            $($store2, "\n",)*
            "    subs r6, #2\n",
            "    bhs ", $pair, "b\n",
            $one, ":\n",
            "    adds r6, #2\n",
            "    beq ", $next, "f\n",
            "    vldmia r0, {{s0-s1}}\n",
            "    vldmia r7, {{s4-s5}}\n",
            max_into!("s0", "s1"), "\n",
            max_into!("s4", "s5"), "\n",
            max_into!("s0", "s4"), "\n",
            $($store1, "\n",)*
            $next, ":\n",
            "    mov r0, lr\n",
            "    subs r2, #1\n",
            "    bne ", $row, "b\n",
        )
    };
}

// Safety: the declaration matches the routine assembled below (arguments in r0-r3 and
// on the stack, the flag returned in r0); callers uphold the contract of
// [`max_pool_2x2`].
unsafe extern "C" {
    fn tinyonnx_max_pool2x2_vfp(
        x: *const f32,
        y: *mut f32,
        rows: u32,
        ow: u32,
        w: u32,
        relu: u32,
    ) -> u32;
}

// `rows` output rows of `ow` windows each: output row r reads input rows 2r and 2r + 1
// (`w` values each, from `x`) and writes `ow` values at `y` (the rows follow each
// other). Per two windows 30 instructions (33 with the Relu): two loads, six compares
// of four instructions, the store and the loop. With `relu` the maxima go through
// `math::relu` as integers (`bic` of the sign: below zero and -0 become +0), which is
// exact for every window without a NaN (those with one are overwritten). FPSCR is
// restored on return; r0 = 1 when a compare met a NaN (then `nan_windows` runs).
// An interrupt handler cannot hide the flag: exception entry stacks FPSCR and the return
// restores it (lazy FP state preservation, the reset default); where a user turned that
// off, a handler that raised the flag only costs a search that finds no NaN.
// r0 = x, r1 = y, r2 = rows, r3 = ow; on the stack w, relu.
thumb_fn!(
    "tinyonnx_max_pool2x2_vfp",
    "    push {{r4-r8, lr}}",
    "    ldr r4, [sp, #24]",
    "    ldr r5, [sp, #28]",
    "    lsls r4, r4, #2",
    "    vmrs r8, fpscr",
    "    bic r12, r8, #1",
    "    vmsr fpscr, r12",
    "    cmp r2, #0",
    "    beq 9f",
    "    cmp r5, #0",
    "    bne 20f",
    pool_rows!(
        "10",
        "11",
        "12",
        "13",
        ["    vmov.f32 s1, s2", "    vstmia r1!, {{s0-s1}}"],
        ["    vstmia r1!, {{s0}}"]
    ),
    "    b 9f",
    pool_rows!(
        "20",
        "21",
        "22",
        "23",
        [
            "    vmov r5, s0",
            "    vmov r12, s2",
            "    bic r5, r5, r5, asr #31",
            "    bic r12, r12, r12, asr #31",
            "    strd r5, r12, [r1], #8"
        ],
        [
            "    vmov r5, s0",
            "    bic r5, r5, r5, asr #31",
            "    str r5, [r1], #4"
        ]
    ),
    "9:",
    "    vmrs r0, fpscr",
    "    and r0, r0, #1",
    "    vmsr fpscr, r8",
    "    pop {{r4-r8, pc}}",
);

/// MaxPool with 2x2 windows, stride 2, no padding or dilation, over `nc` planes of
/// `h x w` (`x`) into `oh x ow` (`y`), then a Relu when `relu`: true when done; false
/// when the sizes do not fit (`2 oh <= h`, `2 ow <= w`, the slices long enough), and `y`
/// is then to be computed by the portable kernel. Where the routine met a NaN, the
/// windows holding one are set to it afterwards ([`nan_windows`]). Inlined: with a
/// layer's sizes as constants the checks fold away.
#[inline(always)]
pub(crate) fn max_pool_2x2(
    (nc, h, w, oh, ow): (usize, usize, usize, usize, usize),
    x: &[f32],
    y: &mut [f32],
    relu: bool,
) -> bool {
    let fits = |a: usize, b: usize| a.checked_mul(b);
    let (Some(plane_in), Some(plane_out)) = (fits(h, w), fits(oh, ow)) else {
        return false;
    };
    let (Some(total_in), Some(total_out)) = (fits(nc, plane_in), fits(nc, plane_out)) else {
        return false;
    };
    if oh == 0
        || ow == 0
        || nc == 0
        || oh > h / 2
        || ow > w / 2
        || x.len() < total_in
        || y.len() < total_out
        || u32::try_from(total_out).is_err()
        || u32::try_from(w).is_err()
    {
        return false;
    }
    // When the planes hold no odd last row, the pairs of rows follow each other across
    // them: one call.
    let (calls, rows) = if h == 2 * oh { (1, nc * oh) } else { (nc, oh) };
    let mut met_nan = 0;
    for p in 0..calls {
        // Safety: call p reads input rows from `p * plane_in`: `rows` pairs of `w`
        // values, the last ending at `p * plane_in + 2 * rows * w <= total_in` (one
        // call: `2 * nc * oh * w = nc * h * w`; per plane: `2 * oh <= h`), each pair
        // reading its first `2 * ow <= w` values of both rows; it writes `rows * ow`
        // values from `p * plane_out`, at most `total_out`. Both slices are that long
        // (checked above), and `y` is exclusively borrowed.
        met_nan |= unsafe {
            tinyonnx_max_pool2x2_vfp(
                x.as_ptr().add(p * plane_in),
                y.as_mut_ptr().add(p * plane_out),
                rows as u32,
                ow as u32,
                w as u32,
                u32::from(relu),
            )
        };
    }
    if met_nan != 0 {
        nan_windows(
            (plane_in, plane_out, w, ow),
            &x[..total_in],
            &mut y[..total_out],
        );
    }
    true
}

/// After the routine met a NaN: the output of each window that holds one, that NaN (the
/// portable kernels' max lets NaN win, as ONNX's reference does). The routine's other
/// maxima are exact, its compares having been ordered there, so this replaces a second
/// pass of the portable kernel (408 B of flash on the Cortex-M4F, 288 B here). `x` and
/// `y`: whole planes of `plane_in` and `plane_out` values, two input rows of `w` values
/// an output row of `ow`, `2 * ow <= w`.
#[inline(never)]
fn nan_windows(
    (plane_in, plane_out, w, ow): (usize, usize, usize, usize),
    x: &[f32],
    y: &mut [f32],
) {
    for (xp, yp) in x.chunks_exact(plane_in).zip(y.chunks_exact_mut(plane_out)) {
        for (rows, yrow) in xp.chunks_exact(2 * w).zip(yp.chunks_exact_mut(ow)) {
            let (top, bottom) = rows.split_at(w);
            let windows = top.chunks_exact(2).zip(bottom.chunks_exact(2));
            for (out, (a, b)) in yrow.iter_mut().zip(windows) {
                if let Some(&nan) = a.iter().chain(b).find(|v| v.is_nan()) {
                    *out = nan;
                }
            }
        }
    }
}
