//! The `onnx_model!` procedural macro: a thin shim over `tinyonnx-core`.
//! Use it through the `tinyonnx` crate, which documents the language.

use proc_macro::TokenStream;

/// Declares a neural network; see the `tinyonnx` crate documentation.
#[proc_macro]
pub fn onnx_model(input: TokenStream) -> TokenStream {
    tinyonnx_core::expand(input.into()).into()
}
