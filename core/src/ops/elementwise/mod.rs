//! Element-wise operators: unary functions, binary arithmetic and comparisons with broadcasting, casts.

pub mod binary;
pub mod cast;
pub mod math;
pub mod select;
pub mod unary;
