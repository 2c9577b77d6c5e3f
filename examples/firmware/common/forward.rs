// Shared by the FPU boards' `src/bin/forward.rs` (each includes it after its entry file,
// `arm.rs` or `riscv.rs`): `LinearRegression` through its `forward`, arrays in and out,
// no port checks, between the two markers; the call-overhead figure `cargo xtask
// firmware` reports beside the one through `Model::run`, the output compared with the
// host's.

use tinyonnx::Model;
use tinyonnx_examples::LinearRegression as M;

/// The entry point of the board's entry file runs this.
fn run_model(board: &mut Semihosting, _stack: (usize, usize)) -> bool {
    // The model's arena on the stack, as the README's quick start has it.
    let mut arena = M::arena();
    tinyonnx_firmware::run_forward(board, &<M as Model>::INFO, |x| M::forward(&mut arena, x))
}
