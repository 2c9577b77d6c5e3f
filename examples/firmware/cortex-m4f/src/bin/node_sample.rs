//! A sample of the ONNX backend node test cases on the board (`common/node_sample.rs`);
//! `cargo xtask firmware` compares the printed outputs with the suite's stored ones.

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use panic_semihosting as _;

/// Buffers that hold the largest sampled case (one that does not fit reports so).
const ARENA_BYTES: usize = 1 << 20;
const WORDS: usize = 1 << 16;

struct Semihosting;

impl tinyonnx_firmware::Board for Semihosting {
    fn line(&mut self, args: core::fmt::Arguments) {
        hprintln!("{}", args);
    }

    fn stack_pointer(&self) -> usize {
        cortex_m::register::msp::read() as usize
    }
}

include!("../../../common/node_sample.rs");

#[entry]
fn main() -> ! {
    let ok = run_sample(&mut Semihosting);
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {}
}
