// Shared by the Cortex-M firmware binaries (through `arm.rs`, or included themselves):
// the board that prints over semihosting and reads the main stack pointer.

use cortex_m_semihosting::{debug, hprintln};
use panic_semihosting as _;

struct Semihosting;

impl tinyonnx_firmware::Board for Semihosting {
    fn line(&mut self, args: core::fmt::Arguments) {
        hprintln!("{}", args);
    }

    fn stack_pointer(&self) -> usize {
        cortex_m::register::msp::read() as usize
    }
}
