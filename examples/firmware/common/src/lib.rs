//! The board-independent part of the test firmware: deterministic inputs, one inference
//! between two markers for the instruction counter, stack painting, and a line protocol
//! over semihosting that `cargo xtask firmware` parses:
//!
//! ```text
//! model <name>
//! out <k> <value>...             (every output in order; f32 and f64 as hex bits, 8
//!                                 f32 a line; integers in decimal; bool 0 or 1)
//! stack <bytes>
//! result ok | result error <message>
//! ```

#![no_std]

use core::fmt::Arguments;
use core::sync::atomic::{Ordering, compiler_fence};

use tinyonnx::{Model, TensorInfo, TensorMut, TensorRef};

/// The most inputs or outputs a test model has.
pub const MAX_PORTS: usize = 48;
/// The seed of the inputs (the host cross-check uses the same).
pub const SEED: u64 = 1;
const PAINT: u32 = 0xA5A5_A5A5;

/// What a board provides.
pub trait Board {
    /// Writes one line to the host.
    fn line(&mut self, args: Arguments);
    /// The current stack pointer.
    fn stack_pointer(&self) -> usize;
}

/// The instruction counter snapshots its count each time this function starts.
#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn tinyonnx_mark() {
    compiler_fence(Ordering::SeqCst);
}

/// A port's element type and length: what a harness needs to carve the port's view from
/// a word buffer. [`Port::of`] is a `const fn`, so the size binary builds its ports from
/// constants (reading `TensorInfo`s at run time linked the model's whole tensor table,
/// names, shapes and type strings, and counted it as the model's code).
#[derive(Clone, Copy)]
pub struct Port {
    elem: Elem,
    numel: usize,
    words: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Elem {
    F32,
    F64,
    I64,
    I32,
    I8,
    U8,
    Bool,
    I16,
    U16,
    U32,
    U64,
}

impl Port {
    /// The port `t` describes.
    pub const fn of(t: &TensorInfo) -> Port {
        let elem = match t.dtype.as_bytes() {
            b"f64" => Elem::F64,
            b"i64" => Elem::I64,
            b"i32" => Elem::I32,
            b"i8" => Elem::I8,
            b"u8" => Elem::U8,
            b"bool" => Elem::Bool,
            b"i16" => Elem::I16,
            b"u16" => Elem::U16,
            b"u32" => Elem::U32,
            b"u64" => Elem::U64,
            b"f32" => Elem::F32,
            // A type the harness does not know fails the run (the size binary's build),
            // rather than being viewed as f32.
            _ => panic!("a port of an element type the firmware harness does not know"),
        };
        Port {
            elem,
            numel: t.numel(),
            words: t.words(),
        }
    }

    /// [`Port::of`] each of `ports` (`N` of them).
    pub const fn all<const N: usize>(ports: &[TensorInfo]) -> [Port; N] {
        assert!(ports.len() == N, "as many ports as the array holds");
        Port::first(ports)
    }

    /// [`Port::of`] each of the first `N` of `ports`; slots past its end are empty.
    pub const fn first<const N: usize>(ports: &[TensorInfo]) -> [Port; N] {
        let mut out = [Port {
            elem: Elem::F32,
            numel: 0,
            words: 0,
        }; N];
        let mut i = 0;
        while i < N && i < ports.len() {
            out[i] = Port::of(&ports[i]);
            i += 1;
        }
        out
    }

    /// Splits this port's words off `buf` and views them as its element type, zeroed
    /// unless `keep` (whose caller has checked that a bool port holds only 0 and 1).
    pub fn carve<'a>(self, buf: &mut &'a mut [u64], keep: bool) -> TensorMut<'a> {
        let (head, tail) = core::mem::take(buf).split_at_mut(self.words);
        *buf = tail;
        // Zero bytes are a valid value of every element type (false for bool).
        if !keep || self.elem == Elem::Bool && !bool_bytes(head, self.numel) {
            head.fill(0);
        }
        let (p, n) = (head.as_mut_ptr(), self.numel);
        // Safety: `head` is exclusively borrowed for 'a, 8-byte aligned (u64), and holds
        // `words` words (`split_at_mut` panics on a shorter buffer), at least
        // `n * elem_bytes` bytes: `Port`'s fields are private and only `of` sets them,
        // from one `TensorInfo` (`words` rounds its bytes up);
        // its bytes are initialized (u64 words), every pattern is valid for the numeric
        // types, and a bool view's first `n` bytes are 0 or 1 (checked above, else
        // zeroed); the view replaces the borrow.
        unsafe {
            use core::slice::from_raw_parts_mut as view;
            match self.elem {
                Elem::F64 => TensorMut::F64(view(p.cast(), n)),
                Elem::I64 => TensorMut::I64(view(p.cast(), n)),
                Elem::I32 => TensorMut::I32(view(p.cast(), n)),
                Elem::I8 => TensorMut::I8(view(p.cast(), n)),
                Elem::U8 => TensorMut::U8(view(p.cast(), n)),
                Elem::Bool => TensorMut::Bool(view(p.cast(), n)),
                Elem::I16 => TensorMut::I16(view(p.cast(), n)),
                Elem::U16 => TensorMut::U16(view(p.cast(), n)),
                Elem::U32 => TensorMut::U32(view(p.cast(), n)),
                Elem::U64 => TensorMut::U64(view(p.cast(), n)),
                Elem::F32 => TensorMut::F32(view(p.cast(), n)),
            }
        }
    }
}

/// Splits the next port's words off `buf` and views them as that port's element type
/// ([`Port::carve`]).
fn port_keep<'a>(buf: &mut &'a mut [u64], t: &TensorInfo, keep: bool) -> TensorMut<'a> {
    Port::of(t).carve(buf, keep)
}

/// A zeroed view of the next port (see [`port_keep`]).
fn port<'a>(buf: &mut &'a mut [u64], t: &TensorInfo) -> TensorMut<'a> {
    port_keep(buf, t, false)
}

/// Whether the first `n` bytes of `words` (little-endian) are each 0 or 1.
fn bool_bytes(words: &[u64], n: usize) -> bool {
    (0..n).all(|i| {
        words
            .get(i / 8)
            .is_some_and(|w| (w >> (8 * (i % 8))) & 0xFF <= 1)
    })
}

/// Prints one output: f32 as hex bits, 8 a line; other types a value a line.
fn print_output<B: Board>(board: &mut B, k: usize, out: &TensorMut<'_>) {
    match out {
        TensorMut::F32(v) => {
            for chunk in v.chunks(8) {
                let mut words = [0u32; 8];
                for (w, x) in words.iter_mut().zip(chunk.iter()) {
                    *w = x.to_bits();
                }
                let w = &words[..chunk.len()];
                match w.len() {
                    8 => board.line(format_args!(
                        "out {k} {:08x} {:08x} {:08x} {:08x} {:08x} {:08x} {:08x} {:08x}",
                        w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
                    )),
                    _ => {
                        for x in w {
                            board.line(format_args!("out {k} {x:08x}"));
                        }
                    }
                }
            }
        }
        TensorMut::F64(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {:016x}", x.to_bits()))),
        TensorMut::I64(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::I32(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::I8(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::U8(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::I16(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::U16(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::U32(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::U64(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {x}"))),
        TensorMut::Bool(v) => v
            .iter()
            .for_each(|x| board.line(format_args!("out {k} {}", u8::from(*x)))),
    }
}

/// Runs model `M` once on the seeded inputs and reports everything; returns whether the
/// run succeeded. `stack` is the (lowest, highest) address of the stack region.
pub fn run<M: Model, B: Board>(
    board: &mut B,
    arena: &mut [u8],
    input: &mut [u64],
    output: &mut [u64],
    stack: (usize, usize),
) -> bool {
    let info = M::INFO;
    board.line(format_args!("model {}", info.name));
    if info.inputs.len() > MAX_PORTS || info.outputs.len() > MAX_PORTS {
        board.line(format_args!("result error more than {MAX_PORTS} ports"));
        return false;
    }
    if fixed_views::<M>() {
        let (n_in, n_out) = (M::INFO.inputs.len(), M::INFO.outputs.len());
        let (ins, mut outs) = constant_ports::<M>(input, output);
        let (result, used) = measured(board, stack, || {
            M::run(arena, &ins[..n_in], &mut outs[..n_out])
        });
        return finish(board, &outs[..n_out], used, result);
    }
    let (ins, mut outs) = ports::<true>(&info, input, output, false);
    // Port counts read back from `info`: given constants, LLVM compiled the rest of this
    // function differently (the riscv32's 3x3 int8 convolution took 9 % more
    // instructions).
    let (n_in, n_out) = (info.inputs.len(), info.outputs.len());
    let (result, used) = measured(board, stack, || {
        run_out_of_line::<M>(arena, &ins[..n_in], &mut outs[..n_out])
    });
    finish(board, &outs[..n_out], used, result)
}

/// The most ports of each side for which [`run`] calls a model with constant views.
const FIXED_PORTS: usize = 4;

/// Whether [`run`] calls `M` as a caller's code would, with arrays of views whose
/// counts, element types and lengths are constants: where the plan inlined `Model::run`
/// (a model of a node or two, whose call overhead is what is measured) and its ports are
/// few. `run`'s port checks then fold, as they do in such a caller; views built at run
/// time (every other model here) keep them.
const fn fixed_views<M: Model>() -> bool {
    M::INFO.run_inlined
        && M::INFO.inputs.len() <= FIXED_PORTS
        && M::INFO.outputs.len() <= FIXED_PORTS
}

/// `M`'s seeded inputs and zeroed outputs viewed from the buffers with constant element
/// types and lengths (see [`fixed_views`]); slots past a side's ports are empty.
fn constant_ports<'a, M: Model>(
    input: &'a mut [u64],
    output: &'a mut [u64],
) -> ([TensorRef<'a>; FIXED_PORTS], [TensorMut<'a>; FIXED_PORTS]) {
    let (pin, pout): ([Port; FIXED_PORTS], [Port; FIXED_PORTS]) =
        const { (Port::first(M::INFO.inputs), Port::first(M::INFO.outputs)) };
    let ins = pin.into_iter().take(M::INFO.inputs.len());
    let outs = pout.into_iter().take(M::INFO.outputs.len());
    carve_ports::<FIXED_PORTS, true>((ins, outs), input, output, false)
}

/// Runs `call` between the two markers and returns its result and the stack it used:
/// from the caller's stack pointer down to the deepest word written (the harness's
/// frames above are not the model's).
#[inline(always)]
fn measured<B: Board, R>(board: &B, stack: (usize, usize), call: impl FnOnce() -> R) -> (R, usize) {
    let sp = board.stack_pointer();
    let painted_to = paint(sp, stack.0);
    tinyonnx_mark();
    let result = call();
    tinyonnx_mark();
    (result, sp - high_water(stack.0, painted_to))
}

/// Prints a run's outputs, its stack figure and its result line.
fn finish<B: Board>(
    board: &mut B,
    outs: &[TensorMut<'_>],
    used: usize,
    result: Result<(), tinyonnx::RunError>,
) -> bool {
    for (k, out) in outs.iter().enumerate() {
        print_output(board, k, out);
    }
    board.line(format_args!("stack {used}"));
    report(board, result)
}

/// `M::run` as a function of its own. Called once, it may be inlined into the harness,
/// whose frame (above the stack pointer the stack figure starts from) then holds the
/// inference's locals uncounted: with the markers as inline instructions, LLVM did so
/// and a Transformer's 508 bytes read 220. Only a model [`run`] calls with constant
/// views (one whose `run` the plan inlines, [`fixed_views`]) runs in the harness's
/// frame, as it would in its caller's.
#[inline(never)]
fn run_out_of_line<M: Model>(
    arena: &mut [u8],
    inputs: &[TensorRef<'_>],
    outputs: &mut [TensorMut<'_>],
) -> Result<(), tinyonnx::RunError> {
    M::run(arena, inputs, outputs)
}

/// The inputs (seeded when `SEEDED`, with [`tinyonnx::typed_testing::with_specials`]'s
/// NaN and infinities when `specials`; zeros otherwise) and zeroed outputs of a model,
/// carved from the buffers.
pub fn ports<'a, const SEEDED: bool>(
    info: &tinyonnx::ModelInfo,
    input: &'a mut [u64],
    output: &'a mut [u64],
    specials: bool,
) -> ([TensorRef<'a>; MAX_PORTS], [TensorMut<'a>; MAX_PORTS]) {
    let (ins, outs) = (info.inputs.iter(), info.outputs.iter());
    carve_ports::<MAX_PORTS, SEEDED>(
        (ins.map(Port::of), outs.map(Port::of)),
        input,
        output,
        specials,
    )
}

/// [`ports`] of the given input and output ports, into arrays of `N` views (slots past
/// a side's ports empty, ports past `N` left out).
fn carve_ports<'a, const N: usize, const SEEDED: bool>(
    (ins_of, outs_of): (impl Iterator<Item = Port>, impl Iterator<Item = Port>),
    input: &'a mut [u64],
    output: &'a mut [u64],
    specials: bool,
) -> ([TensorRef<'a>; N], [TensorMut<'a>; N]) {
    let mut state = SEED;
    let mut ins: [TensorRef<'a>; N] = [TensorRef::F32(&[]); N];
    let mut rest: &mut [u64] = input;
    for (slot, p) in ins.iter_mut().zip(ins_of) {
        let mut buf = p.carve(&mut rest, false);
        if SEEDED {
            state = tinyonnx::typed_testing::fill(state, buf.reborrow(), 1.0);
        }
        if specials {
            tinyonnx::typed_testing::with_specials(buf.reborrow());
        }
        *slot = buf.into_ref();
    }
    let mut outs: [TensorMut<'a>; N] = core::array::from_fn(|_| TensorMut::F32(&mut []));
    let mut rest: &mut [u64] = output;
    for (slot, p) in outs.iter_mut().zip(outs_of) {
        *slot = p.carve(&mut rest, false);
    }
    (ins, outs)
}

/// Runs model `M` once on inputs given as little-endian bytes by port name (a node test
/// case's stored data) and prints its outputs; a port with no data, data of another
/// length, a bool that is not 0 or 1, or a model that does not fit the buffers is
/// reported as an error.
pub fn run_given<M: Model, B: Board>(
    board: &mut B,
    arena: &mut [u8],
    input: &mut [u64],
    output: &mut [u64],
    data: &[(&str, &[u8])],
) -> bool {
    let info = M::INFO;
    board.line(format_args!("model {}", info.name));
    if info.inputs.len() > MAX_PORTS
        || info.outputs.len() > MAX_PORTS
        || info.input_words() > input.len()
        || info.output_words() > output.len()
        || info.arena_bytes > arena.len()
    {
        board.line(format_args!(
            "result error the model does not fit the test buffers"
        ));
        return false;
    }
    let mut at = 0;
    for t in info.inputs {
        let region = &mut input[at..at + t.words()];
        at += t.words();
        region.fill(0);
        let Some((_, bytes)) = data.iter().find(|(n, _)| *n == t.name) else {
            board.line(format_args!("result error no data for input {}", t.name));
            return false;
        };
        if bytes.len() != t.numel() * t.elem_bytes() {
            board.line(format_args!(
                "result error input {} has {} bytes",
                t.name,
                bytes.len()
            ));
            return false;
        }
        for (w, chunk) in region.iter_mut().zip(bytes.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_le_bytes(b);
        }
        if t.dtype.as_bytes() == b"bool" && !bool_bytes(region, t.numel()) {
            board.line(format_args!(
                "result error input {} holds a bool other than 0 or 1",
                t.name
            ));
            return false;
        }
    }
    let mut ins: [TensorRef<'_>; MAX_PORTS] = [TensorRef::F32(&[]); MAX_PORTS];
    let mut rest: &mut [u64] = input;
    for (k, t) in info.inputs.iter().enumerate() {
        ins[k] = port_keep(&mut rest, t, true).into_ref();
    }
    let mut outs: [TensorMut<'_>; MAX_PORTS] = core::array::from_fn(|_| TensorMut::F32(&mut []));
    let mut rest: &mut [u64] = output;
    for (k, t) in info.outputs.iter().enumerate() {
        outs[k] = port(&mut rest, t);
    }
    let result = M::run(
        arena,
        &ins[..info.inputs.len()],
        &mut outs[..info.outputs.len()],
    );
    for (k, out) in outs[..info.outputs.len()].iter().enumerate() {
        print_output(board, k, out);
    }
    report(board, result)
}

/// Whether every input and output of a model is f32 (what `Model::run_f32` takes).
pub const fn all_f32(info: &tinyonnx::ModelInfo) -> bool {
    let mut k = 0;
    while k < info.inputs.len() + info.outputs.len() {
        let t = if k < info.inputs.len() {
            &info.inputs[k]
        } else {
            &info.outputs[k - info.inputs.len()]
        };
        let d = t.dtype.as_bytes();
        if !(d.len() == 3 && d[0] == b'f' && d[1] == b'3' && d[2] == b'2') {
            return false;
        }
        k += 1;
    }
    true
}

/// Runs `forward` (a model's array-in, array-out `forward`, one f32 input and output)
/// once between the two markers on the seeded input [`run`] gives that port, and prints
/// the output in the line protocol: the instructions of `forward` alone, without
/// `Model::run`'s port checks.
pub fn run_forward<B: Board, const I: usize, const O: usize>(
    board: &mut B,
    info: &tinyonnx::ModelInfo,
    forward: impl FnOnce(&[f32; I]) -> [f32; O],
) -> bool {
    board.line(format_args!("model {}", info.name));
    let mut x = [0f32; I];
    tinyonnx::typed_testing::fill(SEED, TensorMut::F32(&mut x), 1.0);
    tinyonnx_mark();
    // The output handed on before the second marker (without, the last product moved
    // past it, out of the count).
    let mut y = core::hint::black_box(forward(core::hint::black_box(&x)));
    tinyonnx_mark();
    print_output(board, 0, &TensorMut::F32(&mut y));
    report(board, Ok(()))
}

/// Whether a model has a float input, which the NaN and infinity check needs.
pub const fn has_float_input(info: &tinyonnx::ModelInfo) -> bool {
    let mut k = 0;
    while k < info.inputs.len() {
        let d = info.inputs[k].dtype.as_bytes();
        if d.len() == 3 && d[0] == b'f' {
            return true;
        }
        k += 1;
    }
    false
}

/// Runs model `M` once on the seeded inputs with NaN and infinities put in every float
/// input (the host's NaN check places the same ones) and prints its outputs; a model
/// whose arena or ports do not fit the buffers reports an error.
pub fn run_specials<M: Model, B: Board>(
    board: &mut B,
    arena: &mut [u8],
    input: &mut [u64],
    output: &mut [u64],
) -> bool {
    let info = M::INFO;
    board.line(format_args!("model {}", info.name));
    if info.inputs.len() > MAX_PORTS
        || info.outputs.len() > MAX_PORTS
        || info.input_words() > input.len()
        || info.output_words() > output.len()
        || info.arena_bytes > arena.len()
    {
        board.line(format_args!(
            "result error the model does not fit the test buffers"
        ));
        return false;
    }
    let (ins, mut outs) = ports::<true>(&info, input, output, true);
    let result = M::run(
        arena,
        &ins[..info.inputs.len()],
        &mut outs[..info.outputs.len()],
    );
    for (k, out) in outs[..info.outputs.len()].iter().enumerate() {
        print_output(board, k, out);
    }
    report(board, result)
}

/// Prints the result line of a run.
fn report<B: Board>(board: &mut B, result: Result<(), tinyonnx::RunError>) -> bool {
    match result {
        Ok(()) => {
            board.line(format_args!("result ok"));
            true
        }
        Err(e) => {
            board.line(format_args!("result error {e}"));
            false
        }
    }
}

/// Classifies every sample of a `.npy` of f32 inputs (format version 1, C order; each
/// sample is the model's single input) and prints `pred <class>` for each: the index of
/// the largest value of the first output.
pub fn classify<M: Model, B: Board>(
    board: &mut B,
    arena: &mut [u8],
    input: &mut [u64],
    output: &mut [u64],
    npy: &[u8],
) -> bool {
    let info = M::INFO;
    board.line(format_args!("model {}", info.name));
    if npy.len() < 10 || &npy[..6] != b"\x93NUMPY" || npy[6] != 1 || info.inputs.len() != 1 {
        board.line(format_args!(
            "result error the dataset must be a version-1 .npy for a one-input model"
        ));
        return false;
    }
    let (TensorMut::F32(input), TensorMut::F32(output)) = (
        port(&mut &mut input[..], &info.inputs[0]),
        port(&mut &mut output[..], &info.outputs[0]),
    ) else {
        board.line(format_args!(
            "result error classification needs an f32 model"
        ));
        return false;
    };
    let data = &npy[10 + u16::from_le_bytes([npy[8], npy[9]]) as usize..];
    let per = info.inputs[0].numel();
    let classes = info.outputs[0].numel();
    let samples = data.len() / (4 * per);
    for s in 0..samples {
        for (k, v) in input[..per].iter_mut().enumerate() {
            let at = 4 * (s * per + k);
            *v = f32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        }
        let (inp, out) = (&input[..per], &mut output[..]);
        let (first, _) = out.split_at_mut(classes);
        if let Err(e) = M::run_f32(arena, &[inp], &mut [first]) {
            board.line(format_args!("result error {e}"));
            return false;
        }
        let mut best = 0;
        for (k, &v) in first.iter().enumerate() {
            if v > first[best] {
                best = k;
            }
        }
        board.line(format_args!("pred {best}"));
    }
    board.line(format_args!("result ok"));
    true
}

/// Bytes below the caller's stack pointer left unpainted for `paint`'s own frame (a few
/// saved registers): stack use under this is reported as this much.
const PAINT_MARGIN: usize = 64;

/// Fills the free stack below the current frame with a pattern; returns where it stops.
fn paint(sp: usize, bottom: usize) -> usize {
    let top = (sp - PAINT_MARGIN) & !3;
    let mut p = bottom;
    while p < top {
        // Safety: [bottom, top) is the part of the stack region below the current frame
        // (`PAINT_MARGIN` bytes down), which no live data occupies; the addresses are 4-aligned.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
    top
}

/// The lowest address whose pattern was overwritten (the deepest stack use).
fn high_water(bottom: usize, top: usize) -> usize {
    let mut p = bottom;
    while p < top {
        // Safety: reads the words painted above, in the stack region, 4-aligned.
        if unsafe { core::ptr::read_volatile(p as *const u32) } != PAINT {
            return p;
        }
        p += 4;
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: [TensorInfo; 3] = [
        TensorInfo {
            name: "b",
            shape: &[3, 3],
            dtype: "bool",
        },
        TensorInfo {
            name: "i",
            shape: &[5],
            dtype: "i16",
        },
        TensorInfo {
            name: "d",
            shape: &[2],
            dtype: "f64",
        },
    ];

    // Carves every port of a buffer in turn (what Miri checks: the views stay inside
    // their words, aligned, and a kept bool port with a byte other than 0 or 1 is
    // zeroed before it is viewed).
    #[test]
    fn carved_ports_cover_their_words() {
        const PORTS: [Port; 3] = Port::all(&INFO);
        let mut words = [0x0101_0001_0100_0101u64, 0x02, 0x7, 0x8, 0x9, 0xa];
        let mut rest: &mut [u64] = &mut words;
        let b = PORTS[0].carve(&mut rest, true);
        assert!(matches!(b, TensorMut::Bool(ref v) if v.len() == 9 && v.iter().all(|x| !x)));
        let i = PORTS[1].carve(&mut rest, true);
        assert!(matches!(i, TensorMut::I16(ref v) if *v == [7, 0, 0, 0, 8]));
        let d = PORTS[2].carve(&mut rest, false);
        assert!(matches!(d, TensorMut::F64(ref v) if *v == [0.0, 0.0]));
        assert!(rest.is_empty());
    }

    // The constant views' ports: each given port as `of` describes it, then empty slots
    // that carve nothing.
    #[test]
    fn first_ports_pad_with_empty_slots() {
        const PORTS: [Port; 5] = Port::first(&INFO);
        for (p, t) in PORTS.iter().zip(&INFO) {
            let q = Port::of(t);
            assert!(p.elem == q.elem && p.numel == q.numel && p.words == q.words);
        }
        let mut words = [0u64; 1];
        let mut rest: &mut [u64] = &mut words;
        for p in &PORTS[INFO.len()..] {
            assert!(p.numel == 0 && p.words == 0);
            assert!(matches!(p.carve(&mut rest, true), TensorMut::F32(ref v) if v.is_empty()));
        }
        assert_eq!(rest.len(), 1);
    }
}
