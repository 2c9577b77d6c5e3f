//! `LinearRegression` through its `forward` on the Cortex-M33 (arrays in and out, no port
//! checks) between the two markers, as the Cortex-M4F's `forward` firmware: the
//! call-overhead figure beside the one through `Model::run`.

#![no_std]
#![no_main]

use tinyonnx::Model;
use tinyonnx_examples::LinearRegression as M;

include!("../../../common/arm.rs");

/// The entry point of `arm.rs` runs this.
fn run_model(board: &mut Semihosting, _stack: (usize, usize)) -> bool {
    // The model's arena on the stack, as the README's quick start has it.
    let mut arena = M::arena();
    tinyonnx_firmware::run_forward(board, &<M as Model>::INFO, |x| M::forward(&mut arena, x))
}
