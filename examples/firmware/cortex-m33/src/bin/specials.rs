//! The NaN and infinity check on the Cortex-M33 (`common/specials.rs`): FPv5, where
//! `VSEL` makes the portable NaN-keeping max the one compiled, and the `VFMA` routines.

#![no_std]
#![no_main]

/// Buffers that hold the largest case (a case that does not fit reports so).
const ARENA_BYTES: usize = 1 << 20;
const WORDS: usize = 1 << 17;

include!("../../../common/arm.rs");
include!("../../../common/specials.rs");

/// The entry point of `arm.rs` runs this.
fn run_model(board: &mut Semihosting, _stack: (usize, usize)) -> bool {
    run_specials(board)
}
