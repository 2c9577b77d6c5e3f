// Shared by the boards' `specials` binaries (each includes this file after defining
// `ARENA_BYTES`, `WORDS` and a `Semihosting` board): the NaN and infinity check. Every
// operator cross-check case with a float input (`tests/src/case_models.rs`) runs once on
// the seeded inputs with NaN, +inf and -inf at the positions the host's check uses;
// `cargo xtask firmware` compares the printed outputs with the host forward pass and with
// ONNX Runtime.

#[macro_use]
#[allow(clippy::all, missing_docs)]
mod cases {
    include!("../../../tests/src/case_models.rs");
}

static mut ARENA: tinyonnx::Arena<ARENA_BYTES> = tinyonnx::Arena::new();
static mut INPUT: [u64; WORDS] = [0; WORDS];
static mut OUTPUT: [u64; WORDS] = [0; WORDS];

/// Runs one case if it has a float input; whether it ran without error (a case larger
/// than the buffers prints so and counts as not run).
fn case<M: tinyonnx::Model>(board: &mut Semihosting) -> bool {
    if !const { tinyonnx_firmware::has_float_input(&M::INFO) } {
        return true;
    }
    // Safety: the single thread of the firmware runs the cases one after another, and
    // these references end with each run.
    let (arena, input, output) = unsafe {
        (
            &mut *(&raw mut ARENA),
            &mut *(&raw mut INPUT),
            &mut *(&raw mut OUTPUT),
        )
    };
    tinyonnx_firmware::run_specials::<M, Semihosting>(board, arena.as_bytes_mut(), input, output)
}

macro_rules! run_all {
    ($($case:ident,)*) => {
        /// Every case in order, then `done`; whether all ran.
        fn run_specials(board: &mut Semihosting) -> bool {
            let mut ok = true;
            $( ok &= case::<cases::$case>(board); )*
            hprintln!("done");
            ok
        }
    };
}
every_case!(run_all);
