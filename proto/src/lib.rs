//! The ONNX IR messages tinyonnx writes.
//!
//! `onnx.rs` is generated from `proto/onnx.proto` by `cargo xtask codegen` and checked
//! in, so that a build needs no `protoc`. A test in `xtask` fails when it is stale.

#![allow(
    missing_docs,
    clippy::all,
    missing_debug_implementations,
    unused_qualifications
)]

#[rustfmt::skip]
mod onnx;

pub use onnx::*;
pub use prost::Message;
