//! Signal processing: the window functions (`window.rs`).

pub mod window;
