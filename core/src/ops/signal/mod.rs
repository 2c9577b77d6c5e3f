//! Signal processing: the window functions and the mel filter bank (`window.rs`).

pub mod window;
