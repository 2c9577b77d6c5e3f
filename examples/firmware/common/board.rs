// Shared by the board crates' main.rs (each includes this file after defining `M`,
// `FLASH`, `RAM`, `CODE` and `STACK`): the buffers, the fit check and the run.

const INPUTS: usize = <M as Model>::INFO.input_elements();
const OUTPUTS: usize = <M as Model>::INFO.output_elements();
const ARENA_BYTES: usize = <M as Model>::INFO.arena_bytes;

// A model that does not fit fails to build, naming both numbers.
const _: () = tinyonnx::assert_fits(
    &<M as Model>::INFO,
    FLASH - CODE,
    RAM - STACK - 4 * (INPUTS + OUTPUTS),
);

static mut ARENA: tinyonnx::Arena<ARENA_BYTES> = tinyonnx::Arena::new();
static mut INPUT: [f32; INPUTS] = [0.0; INPUTS];
static mut OUTPUT: [f32; OUTPUTS] = [0.0; OUTPUTS];

include!(concat!(env!("OUT_DIR"), "/dataset.rs"));

/// Runs the model once with the static buffers (or classifies the dataset).
fn run_model<B: tinyonnx_firmware::Board>(board: &mut B, stack: (usize, usize)) -> bool {
    // Safety: called once from the single thread of the firmware, so these are the only
    // references to the three buffers.
    let (arena, input, output) = unsafe {
        (
            &mut *(&raw mut ARENA),
            &mut *(&raw mut INPUT),
            &mut *(&raw mut OUTPUT),
        )
    };
    match DATASET {
        Some(npy) => tinyonnx_firmware::classify::<M, B>(board, arena.as_bytes_mut(), input, output, npy),
        None => tinyonnx_firmware::run::<M, B>(board, arena.as_bytes_mut(), input, output, stack),
    }
}
