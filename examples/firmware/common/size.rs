// The body of the board crates' `src/bin/size.rs` (each includes it after its crate
// attributes and its runtime's `entry` attribute): no printing, a panic handler that halts.

use core::panic::PanicInfo;

use tinyonnx::Model;

include!(concat!(env!("OUT_DIR"), "/model.rs"));

/// Whether the model runs through `run_f32` (all ports f32) or `run` (typed ports).
const ALL_F32: bool = tinyonnx_firmware::all_f32(&<M as Model>::INFO);
const INPUTS: usize = if ALL_F32 { <M as Model>::INFO.input_elements() } else { 0 };
const OUTPUTS: usize = if ALL_F32 { <M as Model>::INFO.output_elements() } else { 0 };
const IN_WORDS: usize = if ALL_F32 { 0 } else { <M as Model>::INFO.input_words() };
const OUT_WORDS: usize = if ALL_F32 { 0 } else { <M as Model>::INFO.output_words() };
const ARENA_BYTES: usize = <M as Model>::INFO.arena_bytes;
const MAX_PORTS: usize = 48;

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
            &mut *(&raw mut ARENA),
            &mut *(&raw mut INPUT),
            &mut *(&raw mut OUTPUT),
        )
    };
    let info = M::INFO;
    let mut ins: [&[f32]; MAX_PORTS] = [&[]; MAX_PORTS];
    let mut rest: &[f32] = input;
    for (k, t) in info.inputs.iter().enumerate().take(MAX_PORTS) {
        let (head, tail) = rest.split_at(t.numel());
        ins[k] = head;
        rest = tail;
    }
    let mut outs: [&mut [f32]; MAX_PORTS] = core::array::from_fn(|_| &mut [][..]);
    let mut rest: &mut [f32] = output;
    for (k, t) in info.outputs.iter().enumerate().take(MAX_PORTS) {
        let (head, tail) = rest.split_at_mut(t.numel());
        outs[k] = head;
        rest = tail;
    }
    let n_in = info.inputs.len().min(MAX_PORTS);
    let n_out = info.outputs.len().min(MAX_PORTS);
    let ok = M::run_f32(arena.as_bytes_mut(), &ins[..n_in], &mut outs[..n_out]).is_ok();
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
            &mut *(&raw mut ARENA),
            &mut *(&raw mut IN_TYPED),
            &mut *(&raw mut OUT_TYPED),
        )
    };
    let info = M::INFO;
    let (ins, mut outs) = tinyonnx_firmware::ports::<false>(&info, input, output, false);
    let n_in = info.inputs.len().min(MAX_PORTS);
    let n_out = info.outputs.len().min(MAX_PORTS);
    let ok = M::run(arena.as_bytes_mut(), &ins[..n_in], &mut outs[..n_out]).is_ok();
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
