//! `LinearRegression` through its `forward` (arrays in and out, no port checks) between
//! the two markers: the call-overhead figure `cargo xtask firmware` reports beside the
//! one through `Model::run`, with the output compared to the host's.

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use tinyonnx::Model;
use tinyonnx_examples::LinearRegression as M;

include!("../../../common/semihosting.rs");
include!("../../../common/arm_vectors.rs");

#[entry]
fn main() -> ! {
    // The model's arena on the stack, as the README's quick start has it.
    let mut arena = M::arena();
    let ok = tinyonnx_firmware::run_forward(&mut Semihosting, &<M as Model>::INFO, |x| {
        M::forward(&mut arena, x)
    });
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {
        cortex_m::asm::wfi();
    }
}
