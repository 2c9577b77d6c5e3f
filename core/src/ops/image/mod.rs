//! Image operators: `Resize` (`resize.rs`), `AffineGrid` (`affine_grid.rs`).

pub mod affine_grid;
pub mod resize;
