// Shared by the Cortex-M board crates' main.rs (each includes this file after
// `board.rs`): semihosting output, the stack bounds from cortex-m-rt, and the entry point.

use cortex_m_rt::entry;

include!("semihosting.rs");
include!("arm_vectors.rs");

// Safety: symbols cortex-m-rt's linker script defines; only their addresses are taken, never
// their contents read.
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
    // Not reached under QEMU, whose semihosting exit ends the run. An empty loop, not a
    // spinning one: the firmware's flash stays what the report has measured.
    #[allow(clippy::empty_loop)]
    loop {}
}
