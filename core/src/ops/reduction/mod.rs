//! Reductions along axes: `Reduce*`, `ArgMax`/`ArgMin`, `Softmax`/`LogSoftmax`.

pub mod arg;
pub mod axis;
pub mod reduce;
pub mod softmax;
