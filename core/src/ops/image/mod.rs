//! Image operators: `Resize` (`resize.rs`).

pub mod resize;
