//! The NaN and infinity check on the board: every operator cross-check case with a float
//! input (`tests/src/case_models.rs`) runs once on the seeded inputs with NaN, +inf and
//! -inf at the positions the host's check uses; `cargo xtask firmware` compares the
//! printed outputs with the host forward pass and with ONNX Runtime.

#![no_std]
#![no_main]

use cortex_m_rt::entry;

#[macro_use]
#[allow(clippy::all, missing_docs)]
mod cases {
    include!("../../../../../tests/src/case_models.rs");
}

/// Buffers that hold the largest case (a case that does not fit reports an error).
const ARENA_BYTES: usize = 1 << 20;
const WORDS: usize = 1 << 17;

static mut ARENA: tinyonnx::Arena<ARENA_BYTES> = tinyonnx::Arena::new();
static mut INPUT: [u64; WORDS] = [0; WORDS];
static mut OUTPUT: [u64; WORDS] = [0; WORDS];

include!("../../../common/semihosting.rs");
include!("../../../common/arm_vectors.rs");

/// Runs one case if it has a float input; whether it ran without error.
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
        /// Every case in order; whether all ran.
        fn run_all(board: &mut Semihosting) -> bool {
            let mut ok = true;
            $( ok &= case::<cases::$case>(board); )*
            ok
        }
    };
}
every_case!(run_all);

#[entry]
fn main() -> ! {
    let ok = run_all(&mut Semihosting);
    hprintln!("done");
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {}
}
