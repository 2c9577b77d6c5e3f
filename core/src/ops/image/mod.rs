//! Image operators: `Resize` (`resize.rs`), `AffineGrid` (`affine_grid.rs`) and
//! `GridSample` (`grid_sample.rs`).

pub mod affine_grid;
pub mod grid_sample;
pub mod resize;
