// Shared by the boards' `node_sample` binaries (each includes this file after defining
// `ARENA_BYTES`, `WORDS` and a `Semihosting` board): the sample of the ONNX node test
// cases `cargo xtask firmware` wrote for the board (the file `TINYONNX_NODE_SAMPLE`
// names, under target/xtask/node-suite/), each run on its stored inputs with its outputs
// printed for the host to compare.

static mut ARENA: tinyonnx::Arena<ARENA_BYTES> = tinyonnx::Arena::new();
static mut INPUT: [u64; WORDS] = [0; WORDS];
static mut OUTPUT: [u64; WORDS] = [0; WORDS];

/// Runs one case on its stored inputs; whether it ran without error.
fn case<M: tinyonnx::Model>(board: &mut Semihosting, data: &[(&str, &[u8])]) -> bool {
    // Safety: the single thread of the firmware runs the cases one after another, and
    // these references end with each run.
    let (arena, input, output) = unsafe {
        (
            &mut *(&raw mut ARENA),
            &mut *(&raw mut INPUT),
            &mut *(&raw mut OUTPUT),
        )
    };
    tinyonnx_firmware::run_given::<M, Semihosting>(board, arena.as_bytes_mut(), input, output, data)
}

#[allow(clippy::all, missing_docs, non_upper_case_globals)]
mod sample {
    include!(env!("TINYONNX_NODE_SAMPLE"));
}

// `every_sample!` names the models and their data as the call site sees them.
use sample::*;

/// Every sampled case in order, then `done`; whether all ran.
fn run_sample(board: &mut Semihosting) -> bool {
    let mut ok = true;
    macro_rules! run_case {
        ($model:ident, $data:expr) => {
            ok &= case::<$model>(board, $data);
        };
    }
    every_sample!(run_case);
    tinyonnx_firmware::Board::line(board, format_args!("done"));
    ok
}
