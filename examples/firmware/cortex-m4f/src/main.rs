//! tinyonnx test firmware for a Cortex-M4F (QEMU `mps2-an386`): runs one example model
//! and reports over semihosting; exits 0 when the model ran.

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use panic_semihosting as _;
use tinyonnx::Model;

include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// Flash and RAM of the board (memory-m4f.x).
const FLASH: usize = 4 << 20;
const RAM: usize = 4 << 20;
/// What this firmware keeps for its code and for the stack.
const CODE: usize = 64 << 10;
const STACK: usize = 64 << 10;

include!("../../common/board.rs");

struct Semihosting;

impl tinyonnx_firmware::Board for Semihosting {
    fn line(&mut self, args: core::fmt::Arguments) {
        hprintln!("{}", args);
    }

    fn stack_pointer(&self) -> usize {
        cortex_m::register::msp::read() as usize
    }
}

unsafe extern "C" {
    static _stack_start: u32;
    static __sheap: u32;
}

#[entry]
fn main() -> ! {
    // Only the addresses of the linker symbols are taken, which needs no unsafe.
    let stack = (&raw const __sheap as usize, &raw const _stack_start as usize);
    let ok = run_model(&mut Semihosting, stack);
    debug::exit(if ok { debug::EXIT_SUCCESS } else { debug::EXIT_FAILURE });
    loop {}
}
