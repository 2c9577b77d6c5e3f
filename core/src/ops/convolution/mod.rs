//! Sliding windows over images: `Conv`, `ConvTranspose`, pooling, `Col2Im`.

pub mod col2im;
pub mod conv;
pub mod conv_transpose;
pub mod pool;
pub mod unpool;
