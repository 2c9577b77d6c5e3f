// The body of the board crates' `src/bin/size.rs` (each includes it after its crate
// attributes and its runtime's `entry` attribute): no printing, a panic handler that halts.

use core::panic::PanicInfo;

use tinyonnx::{Model, TensorMut, TensorRef};
use tinyonnx_firmware::Port;

include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// Whether the model runs through `run_f32` (all ports f32) or `run` (typed ports).
const ALL_F32: bool = tinyonnx_firmware::all_f32(&<M as Model>::INFO);
const INPUTS: usize = if ALL_F32 { <M as Model>::INFO.input_elements() } else { 0 };
const OUTPUTS: usize = if ALL_F32 { <M as Model>::INFO.output_elements() } else { 0 };
const IN_WORDS: usize = if ALL_F32 { 0 } else { <M as Model>::INFO.input_words() };
const OUT_WORDS: usize = if ALL_F32 { 0 } else { <M as Model>::INFO.output_words() };
const ARENA_BYTES: usize = <M as Model>::INFO.arena_bytes;
const N_IN: usize = <M as Model>::INFO.inputs.len();
const N_OUT: usize = <M as Model>::INFO.outputs.len();
// The ports' lengths as constants: read from `INFO` at run time, its tensor table
// (names, types, shapes: 24 bytes a port and the strings) was linked in and counted as
// the model's code, which the forward pass itself never reads.
const IN_LENS: [usize; N_IN] = lens(<M as Model>::INFO.inputs);
const OUT_LENS: [usize; N_OUT] = lens(<M as Model>::INFO.outputs);

// The typed ports' element types and lengths, for `run_typed`.
const IN_PORTS: [Port; N_IN] = Port::all(<M as Model>::INFO.inputs);
const OUT_PORTS: [Port; N_OUT] = Port::all(<M as Model>::INFO.outputs);

const fn lens<const N: usize>(ports: &[tinyonnx::TensorInfo]) -> [usize; N] {
    let mut n = [0; N];
    let mut i = 0;
    while i < N {
        n[i] = ports[i].numel();
        i += 1;
    }
    n
}

static mut ARENA: tinyonnx::Arena<ARENA_BYTES> = tinyonnx::Arena::new();
static mut INPUT: [f32; INPUTS] = [0.0; INPUTS];
static mut OUTPUT: [f32; OUTPUTS] = [0.0; OUTPUTS];
static mut IN_TYPED: [u64; IN_WORDS] = [0; IN_WORDS];
static mut OUT_TYPED: [u64; OUT_WORDS] = [0; OUT_WORDS];

#[entry]
fn main() -> ! {
    if !ALL_F32 {
        run_typed();
    }
    // Safety: the single thread of the firmware; these are the only references.
    let (arena, input, output) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(ARENA),
            &mut *core::ptr::addr_of_mut!(INPUT),
            &mut *core::ptr::addr_of_mut!(OUTPUT),
        )
    };
    // Nothing ever writes the input here, so without this the optimizer would know it
    // is zeros and fold the model's first steps away.
    let input: &mut [f32] = core::hint::black_box(input);
    // Exactly as many port slices as the model has: a fixed larger array would be
    // filled with empty slices, harness code counted as the model's.
    let mut ins: [&[f32]; N_IN] = [&[]; N_IN];
    let mut rest: &[f32] = input;
    for (slot, &n) in ins.iter_mut().zip(&IN_LENS) {
        let (head, tail) = rest.split_at(n);
        *slot = head;
        rest = tail;
    }
    let mut outs: [&mut [f32]; N_OUT] = core::array::from_fn(|_| &mut [][..]);
    let mut rest: &mut [f32] = output;
    for (slot, &n) in outs.iter_mut().zip(&OUT_LENS) {
        let (head, tail) = rest.split_at_mut(n);
        *slot = head;
        rest = tail;
    }
    let ok = M::run_f32(arena.as_bytes_mut(), &ins, &mut outs).is_ok();
    // Keep the result observable so the forward pass is not optimized away.
    core::hint::black_box((ok, &outs));
    halt()
}

/// A model with other element types runs through `run` on zeroed typed ports (with
/// `run_f32` it would fail at once and the forward pass would be optimized away).
fn run_typed() -> ! {
    // Safety: the single thread of the firmware; these are the only references.
    let (arena, input, output) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(ARENA),
            &mut *core::ptr::addr_of_mut!(IN_TYPED),
            &mut *core::ptr::addr_of_mut!(OUT_TYPED),
        )
    };
    // As in `main`: the zeroed input must stay unknown to the optimizer.
    let input: &mut [u64] = core::hint::black_box(input);
    // Zeroed ports carved by constant types and lengths, exactly as many as the model
    // has (as `main` does for f32).
    let mut rest: &mut [u64] = input;
    let ins: [TensorRef<'_>; N_IN] =
        core::array::from_fn(|k| IN_PORTS[k].carve(&mut rest, false).into_ref());
    let mut rest: &mut [u64] = output;
    let mut outs: [TensorMut<'_>; N_OUT] =
        core::array::from_fn(|k| OUT_PORTS[k].carve(&mut rest, false));
    let ok = M::run(arena.as_bytes_mut(), &ins, &mut outs).is_ok();
    core::hint::black_box((ok, &outs));
    halt()
}

/// Spins forever: the same few bytes on every core.
fn halt() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    halt()
}
