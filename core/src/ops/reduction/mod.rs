//! Reductions along axes: `Reduce*`, `ArgMax`/`ArgMin`, `Softmax`/`LogSoftmax`.

pub mod arg;
pub mod reduce;
pub mod softmax;
