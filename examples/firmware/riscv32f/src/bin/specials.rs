//! The NaN and infinity check on the riscv32f (`common/specials.rs`): the F extension's
//! compares, `FMIN.S`/`FMAX.S` and conversions, and the `FMADD.S` panel routines.

#![no_std]
#![no_main]

/// Buffers within the board's 768 KiB of RAM and below its 32 KiB of stack (a case that
/// does not fit reports so, and the report counts it).
const ARENA_BYTES: usize = 432 << 10;
const WORDS: usize = 18 << 10;

include!("../../../common/riscv.rs");
include!("../../../common/specials.rs");

/// The entry point of `riscv.rs` runs this.
fn run_model(board: &mut Semihosting, _stack: (usize, usize)) -> bool {
    run_specials(board)
}
