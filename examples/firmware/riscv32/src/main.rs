//! tinyonnx test firmware for an ESP32-C3-class RISC-V core (riscv32imc, QEMU `virt`):
//! runs one example model and reports over semihosting; exits 0 when the model ran.

#![no_std]
#![no_main]

use riscv_rt::entry;
use riscv_semihosting::{debug, hprintln};
use tinyonnx::Model;

include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// Flash and RAM of the board (memory-riscv32.x).
const FLASH: usize = 4 << 20;
const RAM: usize = 400 << 10;
/// What this firmware keeps for its code and for the stack.
const CODE: usize = 64 << 10;
const STACK: usize = 32 << 10;

include!("../../common/board.rs");

struct Semihosting;

impl tinyonnx_firmware::Board for Semihosting {
    fn line(&mut self, args: core::fmt::Arguments) {
        hprintln!("{}", args);
    }

    fn stack_pointer(&self) -> usize {
        let sp: usize;
        // Safety: reads the stack pointer register into a local; no memory is touched.
        unsafe { core::arch::asm!("mv {}, sp", out(reg) sp) };
        sp
    }
}

unsafe extern "C" {
    static _stack_start: u32;
    static __estack: u32;
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("result error panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}

#[entry]
fn main() -> ! {
    // Only the addresses of the linker symbols are taken, which needs no unsafe.
    let stack = (&raw const __estack as usize, &raw const _stack_start as usize);
    let ok = run_model(&mut Semihosting, stack);
    debug::exit(if ok { debug::EXIT_SUCCESS } else { debug::EXIT_FAILURE });
    loop {}
}
