//! Sliding windows over images: `Conv`, `ConvTranspose`, pooling.

pub mod conv;
pub mod conv_transpose;
pub mod pool;
pub mod unpool;
