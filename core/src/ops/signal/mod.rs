//! Signal processing: the window functions and the mel filter bank (`window.rs`), the
//! Fourier transforms (`dft.rs`).

pub mod dft;
pub mod window;
