//! Reductions along axes: `Reduce*`, `ArgMax`/`ArgMin`, `Softmax`/`LogSoftmax`, the
//! classification losses.

pub mod arg;
pub mod axis;
pub mod loss;
pub mod reduce;
pub mod softmax;
