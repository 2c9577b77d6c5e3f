// Shared by the board crates' main.rs (each includes this file after defining `M`,
// `FLASH`, `RAM`, `CODE` and `STACK`): the buffers, the fit check and the run.

const IN_WORDS: usize = <M as Model>::INFO.input_words();
const OUT_WORDS: usize = <M as Model>::INFO.output_words();
const ARENA_BYTES: usize = <M as Model>::INFO.arena_bytes;

// A model that does not fit fails to build, naming both numbers.
const _: () = tinyonnx::assert_fits(
    &<M as Model>::INFO,
    FLASH - CODE,
    RAM - STACK - 8 * (IN_WORDS + OUT_WORDS),
);

static mut ARENA: tinyonnx::Arena<ARENA_BYTES> = tinyonnx::Arena::new();
// Typed port buffers are carved from these (8-byte words fit every element type).
static mut INPUT: [u64; IN_WORDS] = [0; IN_WORDS];
static mut OUTPUT: [u64; OUT_WORDS] = [0; OUT_WORDS];

include!(concat!(env!("OUT_DIR"), "/dataset.rs"));

/// Runs the model once with the static buffers (or classifies the dataset).
fn run_model<B: tinyonnx_firmware::Board>(board: &mut B, stack: (usize, usize)) -> bool {
    // Safety: called once from the single thread of the firmware, so these are the only
    // references to the three buffers.
    let (arena, input, output) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(ARENA),
            &mut *core::ptr::addr_of_mut!(INPUT),
            &mut *core::ptr::addr_of_mut!(OUTPUT),
        )
    };
    match DATASET {
        Some(npy) => tinyonnx_firmware::classify::<M, B>(board, arena.as_bytes_mut(), input, output, npy),
        None => tinyonnx_firmware::run::<M, B>(board, arena.as_bytes_mut(), input, output, stack),
    }
}
