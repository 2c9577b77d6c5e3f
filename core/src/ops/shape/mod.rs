//! Data movement and shapes: views (`Reshape`, ...), `Transpose`, `Concat`, slicing, padding, gathering, `Constant`, `Shape`/`Size`.

pub mod concat;
pub mod constant;
pub mod indexing;
pub mod matrix;
pub mod movement;
pub mod reorder;
pub mod reshape;
pub mod shape_size;
pub mod space_depth;
pub mod transpose;
