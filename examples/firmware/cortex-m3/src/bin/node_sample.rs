//! A sample of the ONNX backend node test cases on the board (`common/node_sample.rs`);
//! `cargo xtask firmware` compares the printed outputs with the suite's stored ones.

#![no_std]
#![no_main]

/// Buffers within the board's 64 KiB of RAM (a case that does not fit reports so).
const ARENA_BYTES: usize = 24 << 10;
const WORDS: usize = 1 << 10;

include!("../../../common/arm.rs");
include!("../../../common/node_sample.rs");

/// The entry point of `arm.rs` runs this.
fn run_model(board: &mut Semihosting, _stack: (usize, usize)) -> bool {
    run_sample(board)
}
