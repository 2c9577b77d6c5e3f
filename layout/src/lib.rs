//! Every memory-layout fact that the compiler (`tinyonnx-core`, when it plans scratch
//! and packs weights) and the kernels (`tinyonnx`, when they carve that scratch) both
//! rely on, each written once as a `const fn`. A formula that differed between the two
//! would be an out-of-bounds panic on a device; here there is only one.
//!
//! Sizes are counted in `f32` values unless a name says bytes.

#![no_std]
#![deny(missing_docs)]

/// Columns of one packed panel of a matrix product's right-hand side: `B[K, N]` is
/// stored as `ceil(N / NR)` panels of `[K][NR]`, the last one padded with zeros.
pub const NR: usize = 8;

/// Most columns a constant `B[K, N]` keeps beyond its whole panels as one narrow block
/// `[K][N % NR]` (row-major, after the panels) instead of a last panel padded with
/// zeros: flash for the padding not stored, and a few columns cost fewer instructions
/// in a block of their own than as a mostly empty panel. Wider remainders stay a padded
/// panel, which the panel routines run faster.
pub const NARROW_MAX: usize = 4;

/// [`NARROW_MAX`] on microcontrollers with floats in hardware, where remainders of up
/// to 7 columns are a narrow block too. There a model whose only padded panel is its
/// last layer's links no panel tail code at all, which is more flash than the block's
/// loop; without an FPU the panel code is linked anyway and the wider block's code
/// comes on top. The compiler emits both layouts and the runtime keeps its target's
/// (`__narrow_wide!`).
pub const NARROW_MAX_FPU: usize = 7;

/// Columns of `N` a constant `B` keeps as its narrow block ([`NARROW_MAX`]); 0 for none.
pub const fn narrow_cols(n: usize) -> usize {
    narrow_cols_within(n, NARROW_MAX)
}

/// Columns of `N` a constant `B` keeps as its narrow block where blocks of up to `max`
/// columns are kept; 0 for none.
pub const fn narrow_cols_within(n: usize, max: usize) -> usize {
    let r = n % NR;
    if r <= max { r } else { 0 }
}

/// Values of slack a kernel's scratch carries so that its packed panels can start at a
/// 64-byte boundary: the arena is 16-byte aligned and buffers start at any multiple of
/// 4 bytes, so at most 15 values are skipped.
pub const ALIGN_SLACK: usize = 15;

/// Values of a packed `[k, n]` operand: `n` rounded up to whole panels of [`NR`].
pub const fn packed_len(k: usize, n: usize) -> usize {
    n.div_ceil(NR) * NR * k
}

/// Scratch values of one im2col tile of `positions` output positions with patches of
/// `k` values: the packed patches and the alignment slack.
pub const fn patch_len(k: usize, positions: usize) -> usize {
    packed_len(k, positions) + ALIGN_SLACK
}

/// The output channels a group from which a convolution with packed weights (or a max
/// pooling: channels) runs, on the microcontrollers, through a gathering shared by
/// every such layer with its kernel window (the runtime's `kernels::SHARED_CHANNELS`
/// says why); the compiler leaves those layers out of the convolutions it gives a copy
/// sized at run time.
pub const SHARED_CHANNELS: usize = 32;

/// An `LSTM` with its weights known at compile time: per direction the packed
/// `[W; R]^T` and the summed biases, and the scratch of one step.
pub mod lstm {
    use super::NR;

    /// Values of one batch row of the gates (`4 * hidden`) rounded up to whole panels:
    /// the row stride of the gates in scratch and the length of one direction's summed
    /// biases (zeros after the gates), so that the panel routines compute every column
    /// and no partial last panel needs the portable tile's code.
    pub const fn gate_row(hidden: usize) -> usize {
        (4 * hidden).div_ceil(NR) * NR
    }

    /// Scratch values: the gates of each batch row, then with packed weights the
    /// concatenated `[x_t, h]` rows of one step.
    pub const fn scratch(batch: usize, input: usize, hidden: usize, packed: bool) -> usize {
        if packed {
            batch * (gate_row(hidden) + input + hidden)
        } else {
            batch * 4 * hidden
        }
    }
}

/// A `GRU` with its weights known at compile time: per direction three packed matrices
/// (`[W_zr; R_zr]^T` over the concatenated input and state, `W_h^T`, `R_h^T`), and the
/// scratch of one step.
pub mod gru {
    use super::packed_len;

    /// Values of one direction's packed weights.
    pub const fn packed_len_per_dir(input: usize, hidden: usize) -> usize {
        packed_len(input + hidden, 2 * hidden)
            + packed_len(input, hidden)
            + packed_len(hidden, hidden)
    }

    /// Scratch values: with packed weights the `[x_t, h]` rows, the z and r gates and
    /// three `batch x hidden` blocks (the candidate's input product, its recurrence
    /// product, the reset state); else five rows of `hidden` (the per-row path).
    pub const fn scratch(batch: usize, input: usize, hidden: usize, packed: bool) -> usize {
        if packed {
            batch * (input + 6 * hidden)
        } else {
            5 * hidden
        }
    }
}

/// The direct convolution x86-64 CPUs with AVX-512 run instead of im2col: the zero-padded
/// input rows under the output rows of one tile, per channel, each row split into its
/// `SW` phases (phase `r` holds padded columns `r, r + SW, ..`), in a ring in scratch.
///
/// It is a host-only path, so no plan reserves scratch for it: it runs where its ring
/// fits in the scratch planned for im2col ([`fits`]), which every target plans alike.
pub mod direct {
    use super::{ALIGN_SLACK, patch_len};

    /// Whether the direct kernel takes a convolution of `groups` groups with output rows
    /// of `ow` positions: one group, and at least one full 16-lane register of positions
    /// a row, or exactly half of one (two rows a register).
    pub const fn applies(groups: usize, ow: usize) -> bool {
        groups == 1 && (ow >= 16 || ow == 8)
    }

    /// Values of one phase of a padded input row: the output positions plus the reach
    /// of the kernel's columns in that phase.
    pub const fn phase_len(ow: usize, kw: usize, sw: usize, dw: usize) -> usize {
        ow + (kw - 1) * dw / sw
    }

    /// Output rows a tile covers: four rows of 8 positions (two a register), two where a
    /// row fills at most one register, else one.
    pub const fn tile_rows(ow: usize) -> usize {
        if ow == 8 {
            4
        } else if ow <= 16 {
            2
        } else {
            1
        }
    }

    /// Padded input rows per channel in the ring: those under one tile's output rows.
    pub const fn ring_rows(kh: usize, dh: usize, sh: usize, ow: usize) -> usize {
        (kh - 1) * dh + 1 + (tile_rows(ow) - 1) * sh
    }

    /// Scratch values of the ring for `c` channels and the kernel geometry
    /// `(kh, dh, sh)` by rows and `(ow, kw, sw, dw)` by columns, with the slack for
    /// starting it at a 64-byte boundary; 0 where the kernel does not apply.
    pub const fn ring_len(
        (c, groups): (usize, usize),
        (kh, dh, sh): (usize, usize, usize),
        (ow, kw, sw, dw): (usize, usize, usize, usize),
    ) -> usize {
        if !applies(groups, ow) {
            return 0;
        }
        c * ring_rows(kh, dh, sh, ow) * sw * phase_len(ow, kw, sw, dw) + ALIGN_SLACK
    }

    /// Whether the direct kernel takes a convolution whose im2col tiles hold `pb`
    /// positions of patches of `k` values: it applies, and its ring fits in the
    /// [`patch_len`] values planned for those tiles. Arguments as [`ring_len`]'s.
    pub const fn fits(
        (c, groups): (usize, usize),
        (kh, dh, sh): (usize, usize, usize),
        (ow, kw, sw, dw): (usize, usize, usize, usize),
        (k, pb): (usize, usize),
    ) -> bool {
        applies(groups, ow)
            && ring_len((c, groups), (kh, dh, sh), (ow, kw, sw, dw)) <= patch_len(k, pb)
    }
}

/// Winograd F(2x2, 3x3): per block of `tb` tiles (2x2 outputs) and pass of `r` rows of
/// the 4x4 elements, `4 r` transformed input blocks `[C, tb]` (packed), `4 r` product
/// blocks `[M, tb]` (rows padded to whole panels), and per channel the zero-padded
/// input rows under one block.
pub mod winograd {
    use super::{ALIGN_SLACK, NR, packed_len};

    /// Values added to the stride between the 16 transformed blocks and between the 16
    /// product blocks: at whole pages apart, the 16 streams would share one set of the
    /// L1 cache.
    pub const SKEW: usize = 16;

    /// Values before and after the padded input band: a panel's window rows start up to
    /// `2 NR` columns before its first tile's row and read `2 NR + 4` values.
    pub const SLACK: usize = 2 * NR + 4;

    /// Where each part of the scratch lies (in values, after the alignment slack).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Layout {
        /// Stride between transformed input blocks.
        pub vs: usize,
        /// Stride between product blocks.
        pub os: usize,
        /// Row stride inside a product block (`tb` rounded up to whole panels).
        pub ors: usize,
        /// Rows of the padded input band, per channel.
        pub band_rows: usize,
        /// Columns of the padded input band.
        pub band_cols: usize,
        /// Values of the whole scratch, the alignment slack included.
        pub len: usize,
    }

    /// The layout for `c` input and `m` output channels, `oh x ow` outputs per channel,
    /// blocks of `tb` tiles and passes of `r` element rows (1, 2 or 4).
    pub const fn layout(
        (c, m, oh, ow): (usize, usize, usize, usize),
        tb: usize,
        r: usize,
    ) -> Layout {
        let vs = packed_len(c, tb) + SKEW;
        let ors = tb.div_ceil(NR) * NR;
        let os = m * ors + SKEW;
        let (th, tw) = (oh.div_ceil(2), ow.div_ceil(2));
        let band = 2 * (tb.div_ceil(tw) + 1) + 2;
        let band_rows = if band < 2 * th + 2 { band } else { 2 * th + 2 };
        let band_cols = 2 * tw + 2;
        Layout {
            vs,
            os,
            ors,
            band_rows,
            band_cols,
            len: 4 * r * (vs + os) + c * band_rows * band_cols + 2 * SLACK + ALIGN_SLACK,
        }
    }

    /// Scratch values of the whole layout.
    pub const fn scratch_len(
        c: usize,
        m: usize,
        oh: usize,
        ow: usize,
        tb: usize,
        r: usize,
    ) -> usize {
        layout((c, m, oh, ow), tb, r).len
    }
}

pub mod narrow;

pub mod qadd;

/// A constant 8-bit `B[K, N]` of an integer product, in the order the Arm DSP
/// instructions take it: `ceil(N / PANEL)` panels; in a panel, `ceil(K / 4)` groups of
/// four rows; in a group, for each of the panel's columns, its four values of those rows
/// in one 32-bit word (one load, then `SXTB16` twice gives the pairs of rows 0 and 2
/// and rows 1 and 3 for `SMLAD`). Missing rows and columns hold zeros. Counted in
/// bytes (one per value).
pub mod q8 {
    /// Columns of one panel: the sums of a panel stay in four registers.
    pub const PANEL: usize = 4;

    /// Groups of four rows in a panel.
    pub const fn groups(k: usize) -> usize {
        k.div_ceil(4)
    }

    /// Bytes of the packed `[k, n]` operand.
    pub const fn packed_len(k: usize, n: usize) -> usize {
        n.div_ceil(PANEL) * groups(k) * 4 * PANEL
    }

    /// Where element `(row, col)` of `B[k, ..]` goes.
    pub const fn index(k: usize, row: usize, col: usize) -> usize {
        (col / PANEL) * groups(k) * 4 * PANEL + (row / 4) * 4 * PANEL + (col % PANEL) * 4 + row % 4
    }

    /// Bytes of one group's weights `B[k, n]` of a convolution: with `depthwise` (the
    /// depthwise 3x3 routine, [`depthwise3x3`], which widens a group's nine taps once)
    /// the values column by column without padding, otherwise the panels of
    /// [`packed_len`] (whose padding would be 39 of a depthwise group's 48 bytes).
    pub const fn group_len(k: usize, n: usize, depthwise: bool) -> usize {
        if depthwise { k * n } else { packed_len(k, n) }
    }

    /// Where element `(row, col)` of a group's `B[k, ..]` goes (see [`group_len`]).
    pub const fn group_index(k: usize, row: usize, col: usize, depthwise: bool) -> usize {
        if depthwise {
            col * k + row
        } else {
            index(k, row, col)
        }
    }

    /// Groups of four rows whose pair sums (see [`pair_order`]) one pass may take over
    /// activations of a signed (`signed`) or unsigned byte type: the upper column's
    /// sum must stay within 24 bits, and `4 * 127 * 128 * 128 < 2^23`, `4 * 64 * 255 *
    /// 128 < 2^23`.
    pub const fn pair_groups(signed: bool) -> usize {
        if signed { 127 } else { 64 }
    }

    /// Whether the DSP cores may take a packed operand of `k` rows (signed bytes) in
    /// [`pair_order`]: whole groups of four rows.
    pub const fn pairs(k: usize) -> bool {
        k > 0 && k.is_multiple_of(4)
    }

    /// Rearranges a packed operand (whole groups of sixteen bytes, the [`index`] order)
    /// for `SMLAD` on two columns at once; false, leaving it as it was, where one pair
    /// of weights has no such form. In each group columns 0 and 1 share two words and
    /// columns 2 and 3 the other two, word `2 p + h` holding rows `h` and `h + 2` of
    /// the pair `p`, each as the halfword `256 * upper + lower` (two's complement: the
    /// lower weight's byte, and the upper one less 1 where the lower is negative, which
    /// leaves no byte for an upper -128 over a negative lower). An `SMLAD` of two
    /// activations with such a word adds both columns' products at once, the upper
    /// column's times 256, and one with its low bytes sign-extended (`SXTB16`) the
    /// lower column's: three instructions for four multiply-accumulates, where
    /// widening each column's word takes four.
    pub fn pair_order(bytes: &mut [i8]) -> bool {
        let fits = bytes.chunks_exact(16).all(|g| {
            (0..2).all(|p| (0..4).all(|r| !(g[8 * p + r] < 0 && g[8 * p + 4 + r] == i8::MIN)))
        });
        if !fits {
            return false;
        }
        for g in bytes.chunks_exact_mut(16) {
            let q: [i8; 16] = [
                g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12],
                g[13], g[14], g[15],
            ];
            for p in 0..2 {
                for h in 0..2 {
                    let half = |r: usize| {
                        let (lo, hi) = (q[8 * p + r], q[8 * p + 4 + r]);
                        [lo, hi - i8::from(lo < 0)]
                    };
                    let (a, b) = (half(h), half(h + 2));
                    g[8 * p + 4 * h..8 * p + 4 * h + 4].copy_from_slice(&[a[0], a[1], b[0], b[1]]);
                }
            }
        }
        true
    }

    /// Whether an 8-bit convolution (`c` input and `m` output channels in `g` groups, a
    /// `kh x kw` kernel, dilations `dh`, `dw`) runs the depthwise 3x3 routine: one input
    /// and one output channel a group, 3x3, unit dilations. It needs no patch scratch.
    pub const fn depthwise3x3(
        (c, m, g): (usize, usize, usize),
        (kh, kw): (usize, usize),
        (dh, dw): (usize, usize),
    ) -> bool {
        g > 0 && c == g && m == g && kh == 3 && kw == 3 && dh == 1 && dw == 1
    }
}

/// The stack an inference may take below its caller's frame (`Model::run`, its
/// `forward`, the kernels and what they call), as each model's `INFO.stack_bytes`
/// states it. A budget the kernels are written to, not a figure derived from their
/// code: the firmware test measures every model on every board and fails above it, so
/// a kernel that comes to need more has to say so here.
pub mod stack {
    /// Every model, on every core: the frames of `run` and `forward` and of the kernel
    /// running, whose accumulator tiles live in registers or in a few panels' worth of
    /// memory (on the cores with an FPU but without the panel routines, tiles of 16
    /// accumulators, which spill into small frames; without an FPU, tiles of 8).
    pub const BASE: usize = 1024;

    /// Per input and output of the model: its pointer, an argument of the forward pass
    /// kept in `run`'s frame and the forward's, or for many ports its slot in the one
    /// tuple `run` passes them in.
    pub const PORT: usize = 8;

    /// The budget of a model with `ports` inputs and outputs. (A Winograd convolution
    /// needs no more: on the microcontrollers its transforms take a tile at a time, in
    /// registers.)
    pub const fn bound(ports: usize) -> usize {
        BASE + PORT * ports
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lstm_gate_rows_are_whole_panels() {
        for hidden in 1..40 {
            let row = lstm::gate_row(hidden);
            assert!(row >= 4 * hidden && row < 4 * hidden + NR && row.is_multiple_of(NR));
            // The packed `[W; R]^T` holds exactly a row's columns for each input.
            assert_eq!(packed_len(3 + hidden, 4 * hidden), (3 + hidden) * row);
            assert!(lstm::scratch(2, 3, hidden, true) >= lstm::scratch(2, 3, hidden, false));
        }
        assert_eq!(lstm::gate_row(7), 32);
        assert_eq!(lstm::gate_row(4), 16);
    }

    #[test]
    fn q8_packing_places_every_element_once() {
        let (k, n) = (7, 6);
        let mut seen = [false; q8::packed_len(7, 6)];
        assert_eq!(seen.len(), 2 * 2 * 16);
        for row in 0..k {
            for col in 0..n {
                let at = q8::index(k, row, col);
                assert!(!seen[at], "({row}, {col})");
                seen[at] = true;
            }
        }
        // Column 5, rows 4..8: second panel, second group, second column of the panel.
        assert_eq!(q8::index(k, 4, 5), 32 + 16 + 4);
    }

    #[test]
    fn a_depthwise_group_is_its_taps_in_order() {
        assert_eq!(q8::group_len(9, 1, true), 9);
        assert_eq!(q8::group_len(9, 1, false), q8::packed_len(9, 1));
        for t in 0..9 {
            assert_eq!(q8::group_index(9, t, 0, true), t);
            assert_eq!(q8::group_index(9, t, 0, false), q8::index(9, t, 0));
        }
    }

    #[test]
    fn only_narrow_remainders_leave_the_panels() {
        assert_eq!(narrow_cols(10), 2);
        assert_eq!(narrow_cols(12), 4);
        assert_eq!(narrow_cols(13), 0);
        assert_eq!(narrow_cols(16), 0);
        assert_eq!(narrow_cols(3), 3);
    }

    #[test]
    fn packed_lengths_round_up_to_whole_panels() {
        assert_eq!(packed_len(3, 1), 24);
        assert_eq!(packed_len(3, 8), 24);
        assert_eq!(packed_len(3, 9), 48);
        assert_eq!(patch_len(2, 5), 16 + ALIGN_SLACK);
    }

    #[test]
    fn the_ring_is_empty_where_the_direct_kernel_does_not_apply() {
        assert_eq!(direct::ring_len((8, 2), (3, 1, 1), (32, 3, 1, 1)), 0);
        assert_eq!(direct::ring_len((8, 1), (3, 1, 1), (12, 3, 1, 1)), 0);
        // 8 channels, 3 rows under one output row, one phase of 32 + 2 values.
        assert_eq!(
            direct::ring_len((8, 1), (3, 1, 1), (32, 3, 1, 1)),
            8 * 3 * 34 + ALIGN_SLACK
        );
        // Rows of 8 positions: four output rows a tile, stride 2 by rows and columns.
        assert_eq!(direct::ring_rows(3, 1, 2, 8), 3 + 3 * 2);
        assert_eq!(direct::phase_len(8, 3, 2, 1), 9);
    }

    #[test]
    fn the_direct_kernel_runs_only_in_the_im2col_scratch() {
        // ResNet's stem: 3 channels, 7x7 at stride 2 over 224 columns (112 outputs),
        // tiles of 32 positions of 147 values. Its ring needs 4845 values, 126 more than
        // the tile's 4719: it runs as im2col.
        let (c, rows, cols) = ((3, 1), (7, 1, 2), (112, 7, 2, 1));
        assert_eq!(direct::ring_len(c, rows, cols), 4845);
        assert_eq!(patch_len(147, 32), 4719);
        assert!(!direct::fits(c, rows, cols, (147, 32)));
        assert!(direct::fits(c, rows, cols, (147, 64)));
        // Where the kernel does not apply, it never runs, whatever the scratch.
        assert!(!direct::fits((8, 2), (3, 1, 1), (32, 3, 1, 1), (72, 1024)));
    }

    #[test]
    fn the_winograd_band_never_exceeds_the_padded_image() {
        let l = winograd::layout((8, 16, 4, 4), 16, 4);
        assert_eq!(l.band_rows, 2 * 2 + 2);
        assert_eq!(l.band_cols, 2 * 2 + 2);
        assert_eq!(l.vs, packed_len(8, 16) + winograd::SKEW);
        assert_eq!(l.ors, 16);
    }
}
