//! What the recurrent kernels (`LSTM` in [`super::lstm`], `GRU` and `RNN` in
//! [`super::rnn`]) take as either constants or values: a node's sizes and its gate
//! activations. With constants ([`Fixed`], [`Static`]) each node's kernel is a copy
//! unrolled to its sizes, the fastest; with values ([`Sizes`], [`Gate`]) every node of
//! a model shares one copy, which the plan picks when a model carries several recurrent
//! nodes that would each need their own (a copy is 1-3 KB of flash on a Cortex-M).

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

/// The activation `F` as a type: inlined at every use.
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
    #[inline(always)]
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
