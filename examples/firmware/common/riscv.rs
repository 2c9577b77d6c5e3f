// Shared by the RISC-V board crates' main.rs (each includes this file after `board.rs`):
// semihosting output, the stack bounds from riscv-rt, the panic handler and the entry point.

use riscv_rt::entry;
use riscv_semihosting::{debug, hprintln};

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

// Safety: symbols riscv-rt's linker script defines; only their addresses are taken, never
// their contents read.
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
    // Not reached under QEMU, whose semihosting exit ends the run. An empty loop, not a
    // spinning one: the firmware's flash stays what the report has measured.
    #[allow(clippy::empty_loop)]
    loop {}
}
