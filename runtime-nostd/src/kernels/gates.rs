//! What the recurrent kernels (`LSTM` in [`super::lstm`], `GRU` and `RNN` in
//! [`super::rnn`]) take as either constants or values: a node's sizes and its gate
//! activations. With constants ([`Fixed`], [`Static`]) each node's kernel is a copy
//! unrolled to its sizes, the fastest; with values ([`Sizes`], [`Gate`]) every node of
//! a model shares one copy: the `_shared` entry points take it on the cores without an
//! FPU, for the nodes the plan marks (several of an operator that would each need their
//! own copy, 1-3 KB of flash each on a Cortex-M).

use core::marker::PhantomData;

use super::unary::UnaryOp;

/// A recurrent node's sizes as values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Steps of the sequence.
    pub seq: usize,
    /// Rows of the batch.
    pub batch: usize,
    /// Features of one step's input.
    pub input: usize,
    /// `hidden_size`.
    pub hidden: usize,
    /// Directions: 1, or 2 for `bidirectional`.
    pub dirs: usize,
}

impl Sizes {
    /// `(seq, batch, input, hidden, dirs)`.
    #[inline(always)]
    pub const fn all(self) -> (usize, usize, usize, usize, usize) {
        (self.seq, self.batch, self.input, self.hidden, self.dirs)
    }
}

/// A recurrent node's sizes: [`Fixed`] (constants) or [`Sizes`] (values).
pub trait RecurrentSizes: Copy {
    /// Whether the sizes are constants: the kernel's other compile-time choices (its
    /// `const` flags) then hold too; else the kernel reads them from its options.
    const FIXED: bool;
    /// The sizes.
    fn get(self) -> Sizes;
}

/// Sizes as constants.
#[derive(Debug, Clone, Copy)]
pub struct Fixed<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
>;

impl<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
> RecurrentSizes for Fixed<SEQ, BATCH, INPUT, HIDDEN, DIRS>
{
    const FIXED: bool = true;
    #[inline(always)]
    fn get(self) -> Sizes {
        Sizes {
            seq: SEQ,
            batch: BATCH,
            input: INPUT,
            hidden: HIDDEN,
            dirs: DIRS,
        }
    }
}

impl RecurrentSizes for Sizes {
    const FIXED: bool = false;
    #[inline(always)]
    fn get(self) -> Sizes {
        self
    }
}

/// A gate activation: [`Static`] (a type) or [`Gate`] (a value).
pub trait Activation: Copy {
    /// Applies it to one value.
    fn apply(self, v: f32) -> f32;
}

/// The activation `F` as a type: inlined at every use on the cores with an FPU.
#[derive(Debug)]
pub struct Static<F>(PhantomData<F>);

impl<F> Static<F> {
    /// The activation `F`.
    #[inline(always)]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<F> Default for Static<F> {
    fn default() -> Self {
        Self::new()
    }
}

// By hand: a derive would ask `F: Copy` of the marker type.
impl<F> Clone for Static<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for Static<F> {}

impl<F: UnaryOp> Activation for Static<F> {
    // Out of line on the cores without an FPU, one function an activation: there its
    // arithmetic is library calls, whose argument moves each inlined use repeats (the
    // LSTM classifier: 268 B less flash on the Cortex-M3, 376 B on the riscv32, for
    // 0.1 % more instructions; TorchLstm 380 and 576 B for 0.1-0.2 %). With an FPU the
    // calls cost more than the copies: spills around them took LstmZoo 1.6 KB more
    // flash and 26 % more instructions on the Cortex-M4F.
    #[cfg_attr(tinyonnx_soft_float, inline(never))]
    #[cfg_attr(not(tinyonnx_soft_float), inline(always))]
    fn apply(self, v: f32) -> f32 {
        F::apply(v)
    }
}

/// A gate activation as a value: the ones the recurrent operators accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// `1 / (1 + exp(-x))`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `max(x, 0)`.
    Relu,
}

impl Activation for Gate {
    // Not inlined: one copy of each function for every use in the shared kernel.
    #[inline(never)]
    fn apply(self, v: f32) -> f32 {
        match self {
            Gate::Sigmoid => super::math::sigmoid(v),
            Gate::Tanh => super::math::tanh(v),
            Gate::Relu => super::math::relu(v),
        }
    }
}

/// The sized copies against the constant ones, which the ONNX Runtime cross-checks hold
/// to ONNX: the same arithmetic in the same order, so the same bits. (The boards
/// without an FPU run the sized copies of the zoos' nodes against ONNX Runtime too.)
#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::super::unary::{Relu, Sigmoid, Tanh};
    use super::super::{GateWeights, lstm, rnn};
    use super::{Gate, Sizes};

    const SEQ: usize = 3;
    const BATCH: usize = 2;
    const INPUT: usize = 3;
    // Odd: the LSTM's gates (20) end in a partial panel, which its packed rows pad.
    const HIDDEN: usize = 5;
    const DIRS: usize = 2;
    const SIZES: Sizes = Sizes {
        seq: SEQ,
        batch: BATCH,
        input: INPUT,
        hidden: HIDDEN,
        dirs: DIRS,
    };
    const STATE: usize = DIRS * BATCH * HIDDEN;
    const Y: usize = SEQ * STATE;

    /// Deterministic values in [-0.6, 0.6].
    fn values(n: usize, step: f32) -> Vec<f32> {
        (0..n)
            .map(|i| 0.6 * (i as f32 * step + 0.3).sin())
            .collect()
    }

    /// `B[k, n]` given by `at(kk, j)` in panels of `NR` columns, as the compiler packs.
    fn pack(k: usize, n: usize, at: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        use super::super::packed::{NR, packed_len};
        let mut out = std::vec![0.0; packed_len(k, n)];
        for p in 0..n.div_ceil(NR) {
            for kk in 0..k {
                for j in 0..NR.min(n - p * NR) {
                    out[(p * k + kk) * NR + j] = at(kk, p * NR + j);
                }
            }
        }
        out
    }

    fn same(a: &[f32], b: &[f32], what: &str) {
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a), bits(b), "{what}");
    }

    #[test]
    fn lstm_sized_equals_lstm() {
        let g4 = 4 * HIDDEN;
        let x = values(SEQ * BATCH * INPUT, 0.37);
        let (w, r) = (
            values(DIRS * g4 * INPUT, 0.11),
            values(DIRS * g4 * HIDDEN, 0.23),
        );
        let b = values(DIRS * 2 * g4, 0.05);
        let (h0, c0, p) = (
            values(STATE, 0.7),
            values(STATE, 0.9),
            values(DIRS * 3 * HIDDEN, 0.3),
        );
        let mut wr = Vec::new();
        for d in 0..DIRS {
            wr.extend(pack(INPUT + HIDDEN, g4, |kk, j| {
                if kk < INPUT {
                    w[(d * g4 + j) * INPUT + kk]
                } else {
                    r[(d * g4 + j) * HIDDEN + kk - INPUT]
                }
            }));
        }
        let row = tinyonnx_layout::lstm::gate_row(HIDDEN);
        let bias: Vec<f32> = (0..DIRS)
            .flat_map(|d| (0..row).map(move |j| (d, j)))
            .map(|(d, j)| {
                if j < g4 {
                    b[d * 2 * g4 + j] + b[d * 2 * g4 + g4 + j]
                } else {
                    0.0
                }
            })
            .collect();
        let plain = GateWeights::Plain {
            w: &w,
            r: &r,
            b: Some(&b),
        };
        let packed = GateWeights::Packed {
            wr: &wr,
            bias: Some(&bias),
        };
        let plain_opts = lstm::Options {
            clip: f32::INFINITY,
            input_forget: false,
            reverse: false,
        };
        let cells_opts = lstm::Options {
            clip: 0.8,
            input_forget: true,
            reverse: false,
        };
        for (weights, opts, p) in [
            (plain, plain_opts, None),
            (plain, cells_opts, Some(&p[..])),
            (packed, plain_opts, None),
            (packed, cells_opts, Some(&p[..])),
        ] {
            let run = |sized: bool| {
                let (mut y, mut y_h, mut y_c) = (
                    std::vec![0.0; Y],
                    std::vec![0.0; STATE],
                    std::vec![0.0; STATE],
                );
                let mut scratch =
                    std::vec![0.0; tinyonnx_layout::lstm::scratch(BATCH, INPUT, HIDDEN, true)];
                let (h0, c0) = (Some(&h0[..]), Some(&c0[..]));
                if sized {
                    let acts = [Gate::Sigmoid, Gate::Relu, Gate::Tanh];
                    lstm::lstm_sized(
                        SIZES,
                        acts,
                        &x,
                        weights,
                        h0,
                        c0,
                        p,
                        opts,
                        &mut y,
                        &mut y_h,
                        &mut y_c,
                        &mut scratch,
                    );
                } else if p.is_none() {
                    lstm::lstm::<SEQ, BATCH, INPUT, HIDDEN, DIRS, Sigmoid, Relu, Tanh, true, false>(
                        &x,
                        weights,
                        h0,
                        c0,
                        p,
                        opts,
                        &mut y,
                        &mut y_h,
                        &mut y_c,
                        &mut scratch,
                    );
                } else {
                    lstm::lstm::<SEQ, BATCH, INPUT, HIDDEN, DIRS, Sigmoid, Relu, Tanh, false, true>(
                        &x,
                        weights,
                        h0,
                        c0,
                        p,
                        opts,
                        &mut y,
                        &mut y_h,
                        &mut y_c,
                        &mut scratch,
                    );
                }
                [y, y_h, y_c]
            };
            let (a, b) = (run(false), run(true));
            for (k, (a, b)) in a.iter().zip(&b).enumerate() {
                same(
                    a,
                    b,
                    &std::format!("LSTM output {k}, {weights:?}, {opts:?}"),
                );
            }
        }
    }

    #[test]
    fn gru_and_rnn_sized_equal_the_constant_copies() {
        let g3 = 3 * HIDDEN;
        let x = values(SEQ * BATCH * INPUT, 0.41);
        let (w, r) = (
            values(DIRS * g3 * INPUT, 0.13),
            values(DIRS * g3 * HIDDEN, 0.29),
        );
        let b = values(DIRS * 2 * g3, 0.07);
        let h0 = values(STATE, 0.5);
        for lbr in [false, true] {
            let opts = rnn::Options {
                clip: 0.7,
                reverse: false,
                linear_before_reset: lbr,
            };
            let weights = GateWeights::Plain {
                w: &w,
                r: &r,
                b: Some(&b),
            };
            let run = |sized: bool| {
                let (mut y, mut y_h) = (std::vec![0.0; Y], std::vec![0.0; STATE]);
                let mut scratch = std::vec![0.0; 5 * HIDDEN];
                if sized {
                    let acts = [Gate::Relu, Gate::Sigmoid];
                    rnn::gru_sized(
                        SIZES,
                        acts,
                        &x,
                        weights,
                        Some(&h0),
                        opts,
                        &mut y,
                        &mut y_h,
                        &mut scratch,
                    );
                } else {
                    rnn::gru::<SEQ, BATCH, INPUT, HIDDEN, DIRS, Relu, Sigmoid>(
                        &x,
                        weights,
                        Some(&h0),
                        opts,
                        &mut y,
                        &mut y_h,
                        &mut scratch,
                    );
                }
                [y, y_h]
            };
            let (a, b) = (run(false), run(true));
            same(
                &a[0],
                &b[0],
                &std::format!("GRU Y, linear_before_reset {lbr}"),
            );
            same(
                &a[1],
                &b[1],
                &std::format!("GRU Y_h, linear_before_reset {lbr}"),
            );
        }
        let (w, r) = (&w[..DIRS * HIDDEN * INPUT], &r[..DIRS * HIDDEN * HIDDEN]);
        let b = &b[..DIRS * 2 * HIDDEN];
        let opts = rnn::Options {
            clip: f32::INFINITY,
            reverse: false,
            linear_before_reset: false,
        };
        let run = |sized: bool| {
            let (mut y, mut y_h) = (std::vec![0.0; Y], std::vec![0.0; STATE]);
            let mut scratch = std::vec![0.0; HIDDEN];
            if sized {
                rnn::rnn_sized(
                    SIZES,
                    [Gate::Tanh],
                    &x,
                    w,
                    r,
                    Some(b),
                    Some(&h0),
                    opts,
                    &mut y,
                    &mut y_h,
                    &mut scratch,
                );
            } else {
                rnn::rnn::<SEQ, BATCH, INPUT, HIDDEN, DIRS, Tanh, false>(
                    &x,
                    w,
                    r,
                    Some(b),
                    Some(&h0),
                    opts,
                    &mut y,
                    &mut y_h,
                    &mut scratch,
                );
            }
            [y, y_h]
        };
        let (a, b) = (run(false), run(true));
        same(&a[0], &b[0], "RNN Y");
        same(&a[1], &b[1], "RNN Y_h");
    }
}
