//! Neural networks written inline in Rust as ONNX.
//!
//! [`onnx_model!`] declares a model. At compile time it checks every layer, attribute,
//! dtype and shape (mistakes are compile errors at the offending token), serializes the
//! model as ONNX bytes, and generates a `no_std` forward pass that never allocates:
//! weights are `static` data, activations live in one arena whose size was planned at
//! compile time.
//!
//! ```
//! tinyonnx::onnx_model! {
//!     /// A two-layer perceptron.
//!     pub model Tiny {
//!         opset = 17;
//!         input x: f32[batch, 4];
//!         weight w: f32[4, 3] = he_normal(seed = 7);
//!         let h = Relu(Gemm(x, w));
//!         output probs = softmax(linear(h, 2), axis = -1);
//!     }
//! }
//!
//! // The ONNX model, for `std::fs::write("tiny.onnx", Tiny::ONNX)` on the host.
//! assert!(Tiny::ONNX.len() > 0);
//! // The forward pass, for the host or a microcontroller.
//! let mut arena = Tiny::arena();
//! let probs: [f32; 2] = Tiny::forward(&mut arena, &[0.5, -1.0, 2.0, 0.0]);
//! assert!((probs[0] + probs[1] - 1.0).abs() < 1e-6);
//! assert_eq!(Tiny::ARENA_BYTES, Tiny::ARENA_LOWER_BOUND_BYTES);
//! ```
//!
//! The language, the operators and the layer sugar are described in the README.

#![no_std]
#![deny(missing_docs)]

#[cfg(target_endian = "big")]
compile_error!("tinyonnx stores weights little-endian and supports little-endian targets only");

pub mod kernels;

/// The memory layouts the compiler and the kernels share (panel width, packed and
/// scratch lengths), as `const fn`s.
pub use tinyonnx_layout as layout;

/// Declares a model; see the crate documentation and the README for the language.
pub use tinyonnx_macros::onnx_model;

use core::fmt;

/// The activation memory of one model: `N` bytes, 16-byte aligned.
#[repr(C, align(16))]
#[derive(Clone, Debug)]
pub struct Arena<const N: usize>([u8; N]);

impl<const N: usize> Arena<N> {
    /// A zeroed arena (usable in a `static`).
    pub const fn new() -> Self {
        Arena([0; N])
    }

    /// Size in bytes.
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether the arena has no bytes (models without intermediate tensors).
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The arena's bytes, 16-byte aligned: the buffer [`Model::run_f32`] takes.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }

    /// The start of the arena, for generated code.
    #[doc(hidden)]
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr()
    }
}

impl<const N: usize> Default for Arena<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// Name, device shape and dtype of a model input or output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// The ONNX name.
    pub name: &'static str,
    /// The shape on the device (symbolic dimensions at their device values).
    pub shape: &'static [usize],
    /// The element type (`"f32"`, ...).
    pub dtype: &'static str,
}

impl TensorInfo {
    /// Bytes of one element (bool: 1).
    pub const fn elem_bytes(&self) -> usize {
        match self.dtype.as_bytes() {
            b"f64" | b"i64" | b"u64" => 8,
            b"f32" | b"i32" | b"u32" => 4,
            b"i16" | b"u16" => 2,
            _ => 1,
        }
    }

    /// 8-byte words that hold the whole tensor (what a typed buffer per port needs).
    pub const fn words(&self) -> usize {
        (self.numel() * self.elem_bytes()).div_ceil(8)
    }

    /// Number of elements.
    pub const fn numel(&self) -> usize {
        let mut n = 1;
        let mut i = 0;
        while i < self.shape.len() {
            n *= self.shape[i];
            i += 1;
        }
        n
    }
}

/// What a model declares about itself; every field is known at compile time. It does not
/// hold the ONNX bytes (see [`Model::ONNX`]), so using it on a device costs no flash for them.
#[derive(Clone, Copy, Debug)]
pub struct ModelInfo {
    /// The model's name.
    pub name: &'static str,
    /// Inputs in declaration order.
    pub inputs: &'static [TensorInfo],
    /// Outputs in declaration order.
    pub outputs: &'static [TensorInfo],
    /// Number of weight values.
    pub params: usize,
    /// Bytes of weight data the firmware stores (packed weights without their padding;
    /// parameters folded at compile time, such as a fused BatchNormalization's, not counted).
    pub weights_bytes: usize,
    /// Bytes stored beyond `weights_bytes` for weights kept transformed where the model
    /// asked for it (`winograd = auto` or `always`: 16 values for every 9 of a 3x3
    /// kernel); 0 otherwise.
    pub transformed_bytes: usize,
    /// Number of ONNX nodes.
    pub nodes: usize,
    /// Multiply-accumulates of one inference.
    pub macs: u64,
    /// Planned arena size in bytes.
    pub arena_bytes: usize,
    /// The largest total size of intermediate tensors alive at the same step.
    pub arena_lower_bound_bytes: usize,
    /// The stack budget of one inference below its caller's frame, which the firmware
    /// test holds every board to (`tinyonnx_layout::stack`).
    pub stack_bytes: usize,
    /// Whether `Model::run` is marked `#[inline]` (the plan's choice, for a model of a
    /// node or two and few values): a caller passing constant port counts then has its
    /// count checks folded away.
    pub run_inlined: bool,
}

impl ModelInfo {
    /// Flash the weights take: as declared plus the transformed copies.
    pub const fn flash_weight_bytes(&self) -> usize {
        self.weights_bytes + self.transformed_bytes
    }

    /// Elements of all inputs together.
    pub const fn input_elements(&self) -> usize {
        total(self.inputs)
    }

    /// Elements of all outputs together.
    pub const fn output_elements(&self) -> usize {
        total(self.outputs)
    }

    /// 8-byte words of all inputs, each starting on a word.
    pub const fn input_words(&self) -> usize {
        words(self.inputs)
    }

    /// 8-byte words of all outputs, each starting on a word.
    pub const fn output_words(&self) -> usize {
        words(self.outputs)
    }
}

const fn words(ports: &[TensorInfo]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < ports.len() {
        n += ports[i].words();
        i += 1;
    }
    n
}

const fn total(ports: &[TensorInfo]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < ports.len() {
        n += ports[i].numel();
        i += 1;
    }
    n
}

/// Fails compilation (in a `const` context) when a model does not fit a board's budgets,
/// naming both numbers:
///
/// ```compile_fail
/// tinyonnx::onnx_model! {
///     model Big {
///         input x: f32[1, 256];
///         output y = linear(x, 256);
///     }
/// }
/// // 256 x 257 weights need 263,168 bytes; this board has 65,536 for them.
/// const _: () = tinyonnx::assert_fits(&Big::INFO, 65_536, 65_536);
/// ```
pub const fn assert_fits(info: &ModelInfo, weights_budget: usize, arena_budget: usize) {
    if info.flash_weight_bytes() > weights_budget {
        const_panic::concat_panic!(
            "model `",
            display: info.name,
            "` has ",
            info.flash_weight_bytes(),
            " bytes of weights, more than the ",
            weights_budget,
            " bytes of flash this firmware declares for weights"
        );
    }
    if info.arena_bytes > arena_budget {
        const_panic::concat_panic!(
            "model `",
            display: info.name,
            "` needs an arena of ",
            info.arena_bytes,
            " bytes, more than the ",
            arena_budget,
            " bytes of RAM this firmware declares for it"
        );
    }
}

/// Deterministic test inputs, the same on the host and on every target.
pub mod testing {
    /// Fills `buf` with values uniform in `[-scale, scale)`: SplitMix64 seeded with
    /// `seed`, each value `((next_u64() >> 11) * 2^-53) as f32 * 2 - 1`, times `scale`.
    /// Returns the generator state, so consecutive buffers continue one stream.
    pub fn fill_uniform(state: u64, buf: &mut [f32], scale: f32) -> u64 {
        let mut s = state;
        for v in buf.iter_mut() {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            *v = (u as f32 * 2.0 - 1.0) * scale;
        }
        s
    }
}

/// Deterministic test inputs of any element type (see [`testing::fill_uniform`]).
pub mod typed_testing {
    use crate::TensorMut;

    /// Fills `buf` from the same stream as [`crate::testing::fill_uniform`]: one value
    /// `v` in `[-scale, scale)` per element, converted per type: floats keep it (f64
    /// widened from the f32), signed integers `round(8 v)`, unsigned `round(8 (v + scale))`,
    /// bool `v > 0`. Small integers make ties and equal pairs likely, which the
    /// comparisons and `ArgMax` need to be tested. Returns the generator state.
    pub fn fill(state: u64, buf: TensorMut<'_>, scale: f32) -> u64 {
        let mut s = state;
        let mut next = || {
            let mut one = [0f32];
            s = crate::testing::fill_uniform(s, &mut one, scale);
            one[0]
        };
        match buf {
            TensorMut::F32(b) => b.iter_mut().for_each(|v| *v = next()),
            TensorMut::F64(b) => b.iter_mut().for_each(|v| *v = f64::from(next())),
            TensorMut::I64(b) => b.iter_mut().for_each(|v| *v = round(8.0 * next()) as i64),
            TensorMut::I32(b) => b.iter_mut().for_each(|v| *v = round(8.0 * next()) as i32),
            TensorMut::I8(b) => b.iter_mut().for_each(|v| *v = round(8.0 * next()) as i8),
            TensorMut::U8(b) => b
                .iter_mut()
                .for_each(|v| *v = round(8.0 * (next() + scale)) as u8),
            TensorMut::Bool(b) => b.iter_mut().for_each(|v| *v = next() > 0.0),
            TensorMut::I16(b) => b.iter_mut().for_each(|v| *v = round(8.0 * next()) as i16),
            TensorMut::U16(b) => b
                .iter_mut()
                .for_each(|v| *v = round(8.0 * (next() + scale)) as u16),
            TensorMut::U32(b) => b
                .iter_mut()
                .for_each(|v| *v = round(8.0 * (next() + scale)) as u32),
            TensorMut::U64(b) => b
                .iter_mut()
                .for_each(|v| *v = round(8.0 * (next() + scale)) as u64),
        }
        s
    }

    fn round(v: f32) -> f32 {
        libm::roundf(v)
    }

    /// The special value the NaN and infinity checks put at element `i` of every float
    /// input (NaN twice, +inf and -inf once in each 17), or `None` to keep the seeded
    /// value. The host tests and the board firmware place them by this one rule.
    pub const fn special(i: usize) -> Option<f64> {
        match i % 17 {
            0 | 9 => Some(f64::NAN),
            4 => Some(f64::INFINITY),
            13 => Some(f64::NEG_INFINITY),
            _ => None,
        }
    }

    /// Puts [`special`] values into a float buffer; other element types are unchanged.
    pub fn with_specials(buf: TensorMut<'_>) {
        match buf {
            TensorMut::F32(b) => b.iter_mut().enumerate().for_each(|(i, v)| {
                if let Some(s) = special(i) {
                    *v = s as f32;
                }
            }),
            TensorMut::F64(b) => b.iter_mut().enumerate().for_each(|(i, v)| {
                if let Some(s) = special(i) {
                    *v = s;
                }
            }),
            _ => {}
        }
    }
}

/// Which port of a model an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Port {
    /// The input at this position.
    Input(usize),
    /// The output at this position.
    Output(usize),
}

/// Why [`Model::run_f32`] refused its arguments.
///
/// Its tags start at 1, so that `Result<(), RunError>`'s `Ok` is the tag 0: a success is
/// a store of zero and a test of it a branch on zero (on RISC-V, `Ok` as the compiler
/// chose it was 7, a constant to load first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RunError {
    /// Wrong number of inputs or outputs.
    Count {
        /// `"inputs"` or `"outputs"`.
        which: &'static str,
        /// What the model declares.
        expected: usize,
        /// What was passed.
        got: usize,
    } = 1,
    /// A buffer of the wrong length.
    Length {
        /// The port.
        which: Port,
        /// Elements the model declares.
        expected: usize,
        /// Elements passed.
        got: usize,
    },
    /// The model has a port that is not f32.
    NotF32,
    /// A buffer of another element type than the model declares ([`Model::run`]).
    DType {
        /// The port.
        which: Port,
        /// The dtype the model declares (`"f32"`, `"i64"`, ...).
        expected: &'static str,
        /// The dtype passed.
        got: &'static str,
    },
    /// The arena buffer is too small or not 16-byte aligned.
    Arena {
        /// Bytes the model needs.
        needed: usize,
        /// Bytes passed.
        got: usize,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Count {
                which,
                expected,
                got,
            } => write!(f, "the model has {expected} {which}, got {got}"),
            RunError::Length {
                which,
                expected,
                got,
            } => write!(f, "{which:?} needs {expected} elements, got {got}"),
            RunError::DType {
                which,
                expected,
                got,
            } => write!(f, "{which:?} is {expected}, got a {got} buffer"),
            RunError::NotF32 => {
                f.write_str("run_f32 needs a model whose inputs and outputs are all f32")
            }
            RunError::Arena { needed, got } => write!(
                f,
                "the arena needs {needed} bytes at a 16-byte aligned address, got {got} bytes (or a misaligned buffer)"
            ),
        }
    }
}

macro_rules! typed_buffers {
    ($($variant:ident($t:ty) = $name:literal),* $(,)?) => {
        /// A model input of any element type, for [`Model::run`].
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum TensorRef<'a> {
            $(
                #[doc = concat!("`", $name, "` elements, row-major.")]
                $variant(&'a [$t]),
            )*
        }

        /// A model output buffer of any element type, for [`Model::run`].
        #[derive(Debug, PartialEq)]
        pub enum TensorMut<'a> {
            $(
                #[doc = concat!("`", $name, "` elements, row-major.")]
                $variant(&'a mut [$t]),
            )*
        }

        impl TensorRef<'_> {
            /// The element type as the DSL spells it (`"f32"`, `"bool"`, ...).
            pub const fn dtype(&self) -> &'static str {
                match self {
                    $(TensorRef::$variant(_) => $name,)*
                }
            }

            /// Number of elements.
            pub const fn len(&self) -> usize {
                match self {
                    $(TensorRef::$variant(s) => s.len(),)*
                }
            }

            /// Whether the buffer has no elements.
            pub const fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }

        impl<'a> TensorMut<'a> {
            /// The same buffer, read-only.
            pub fn into_ref(self) -> TensorRef<'a> {
                match self {
                    $(TensorMut::$variant(s) => TensorRef::$variant(s),)*
                }
            }

            /// A shorter-lived view of the same buffer.
            pub fn reborrow(&mut self) -> TensorMut<'_> {
                match self {
                    $(TensorMut::$variant(s) => TensorMut::$variant(s),)*
                }
            }

            /// The element type as the DSL spells it (`"f32"`, `"bool"`, ...).
            pub const fn dtype(&self) -> &'static str {
                match self {
                    $(TensorMut::$variant(_) => $name,)*
                }
            }

            /// Number of elements.
            pub const fn len(&self) -> usize {
                match self {
                    $(TensorMut::$variant(s) => s.len(),)*
                }
            }

            /// Whether the buffer has no elements.
            pub const fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    };
}

typed_buffers! {
    F32(f32) = "f32",
    F64(f64) = "f64",
    I64(i64) = "i64",
    I32(i32) = "i32",
    I8(i8) = "i8",
    U8(u8) = "u8",
    Bool(bool) = "bool",
    I16(i16) = "i16",
    U16(u16) = "u16",
    U32(u32) = "u32",
    U64(u64) = "u64",
}

/// The signature of [`Model::run`], for tables of models.
pub type RunFn = fn(&mut [u8], &[TensorRef<'_>], &mut [TensorMut<'_>]) -> Result<(), RunError>;

/// The signature of [`Model::run_traced`], for tables of models.
pub type RunTracedFn = fn(
    &mut [u8],
    &[TensorRef<'_>],
    &mut [TensorMut<'_>],
    &mut dyn FnMut(&str, TensorRef<'_>),
) -> Result<(), RunError>;

/// The signature of [`Model::run_f32`], for tables of models.
pub type RunF32 = fn(&mut [u8], &[&[f32]], &mut [&mut [f32]]) -> Result<(), RunError>;

/// Implemented by every model type [`onnx_model!`] declares: a uniform way to run
/// models from generic code (test harnesses, benchmarks, tools).
pub trait Model {
    /// The model's constants.
    const INFO: ModelInfo;

    /// The model serialized as ONNX.
    const ONNX: &'static [u8];

    /// Runs one inference on flat row-major f32 buffers. `arena` must hold at least
    /// `INFO.arena_bytes` bytes and start at a 16-byte aligned address:
    /// [`Arena::as_bytes_mut`], or on the host a `Vec<u128>` viewed as bytes (u128 is
    /// 16-aligned on x86_64 and aarch64, not on every target); it may live on the heap,
    /// which large models need.
    fn run_f32(
        arena: &mut [u8],
        inputs: &[&[f32]],
        outputs: &mut [&mut [f32]],
    ) -> Result<(), RunError>;

    /// Runs one inference on buffers of each port's declared element type (any model);
    /// the arena as for [`Model::run_f32`]. A buffer of another type or length is an
    /// error naming the port.
    fn run(
        arena: &mut [u8],
        inputs: &[TensorRef<'_>],
        outputs: &mut [TensorMut<'_>],
    ) -> Result<(), RunError>;

    /// [`Model::run`], calling `trace` with the name and values of every intermediate
    /// and output tensor as its node finishes (see the generated `forward_with`): for
    /// comparing a model layer by layer with another runtime.
    fn run_traced(
        arena: &mut [u8],
        inputs: &[TensorRef<'_>],
        outputs: &mut [TensorMut<'_>],
        trace: &mut dyn FnMut(&str, TensorRef<'_>),
    ) -> Result<(), RunError>;
}

/// The forward pass of a `custom` operator: the model's `kernel = path::Type;` names a
/// type implementing this trait, and the generated code calls [`CustomKernel::run`] with
/// the node's inputs and outputs, typed and sized as the declaration's rules say (the
/// macro checked them), in the order declared. It runs on the device too: `no_std`, no
/// allocation; the outputs must be written completely.
///
/// ```
/// struct Double;
/// impl tinyonnx::CustomKernel for Double {
///     fn run(inputs: &[tinyonnx::TensorRef<'_>], outputs: &mut [tinyonnx::TensorMut<'_>]) {
///         if let (tinyonnx::TensorRef::F32(x), tinyonnx::TensorMut::F32(y)) = (&inputs[0], &mut outputs[0]) {
///             for (o, v) in y.iter_mut().zip(x.iter()) {
///                 *o = 2.0 * v;
///             }
///         }
///     }
/// }
/// tinyonnx::onnx_model! {
///     model M {
///         custom Twice(x) -> y { domain = "com.example"; kernel = Double; y = x; }
///         input x: f32[3];
///         output y = Relu(Twice(x));
///     }
/// }
/// let mut arena = M::arena();
/// assert_eq!(M::forward(&mut arena, &[1.0, -2.0, 3.0]), [2.0, 0.0, 6.0]);
/// ```
pub trait CustomKernel {
    /// Computes `outputs` from `inputs`.
    fn run(inputs: &[TensorRef<'_>], outputs: &mut [TensorMut<'_>]);
}

/// The packed weights' bytes for this target, given in both orders by the generated
/// code: the DSP cores take `layout::q8::pair_order`'s (the second), the others the
/// `q8` order (the first), so that only one is in flash. The kernels test the same
/// condition (`kernels::quant`'s `in_pairs`).
#[cfg(all(feature = "dsp", target_arch = "arm"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __q8_order {
    ($q8:tt, $pairs:tt) => {
        $pairs
    };
}

/// The packed weights' bytes for this target (see the DSP cores' version).
#[cfg(not(all(feature = "dsp", target_arch = "arm")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __q8_order {
    ($q8:tt, $pairs:tt) => {
        $q8
    };
}

/// A constant `B`'s product for this target, given in both layouts by the generated
/// code where its last columns are 5 to 7: microcontrollers with an FPU take the narrow
/// block (the first, `layout::NARROW_MAX_FPU`), the others a padded last panel (the
/// second, `layout::NARROW_MAX`), so that only one is in flash.
#[cfg(tinyonnx_mcu_fpu)]
#[doc(hidden)]
#[macro_export]
macro_rules! __narrow_wide {
    ($narrow:tt, $panels:tt) => {
        $narrow
    };
}

/// A constant `B`'s product for this target (see the FPU cores' version).
#[cfg(not(tinyonnx_mcu_fpu))]
#[doc(hidden)]
#[macro_export]
macro_rules! __narrow_wide {
    ($narrow:tt, $panels:tt) => {
        $panels
    };
}

/// Items for generated code only; not a stable API.
#[doc(hidden)]
pub mod __export {
    pub use crate::kernels;
    pub use libm;

    /// Weight bytes in `static` memory, aligned for any element type and to a 64-byte
    /// cache line: the packed products read 32- and 64-byte rows of weight panels, and
    /// at 16-byte alignment every other one split across two lines (the MLP's one-row
    /// products ran 30 % slower or not depending on where the linker put them).
    #[repr(C, align(64))]
    #[derive(Debug)]
    pub struct Aligned<const N: usize>(pub [u8; N]);

    /// Views `N` little-endian f32 values at `offset` of a model's ONNX bytes: a weight
    /// the assembler took from its file, which the ONNX layout places 64-byte aligned.
    /// Sound for any arguments: a range outside the bytes or a misaligned one panics.
    #[inline(always)]
    pub fn onnx_f32<const N: usize>(onnx: &'static [u8], offset: usize) -> &'static [f32; N] {
        let bytes = N
            .checked_mul(4)
            .and_then(|len| onnx.get(offset..)?.get(..len))
            .expect("a streamed weight lies inside the ONNX bytes");
        assert!(
            bytes.as_ptr().align_offset(4) == 0,
            "a streamed weight is aligned"
        );
        // Safety: `bytes` holds exactly `N * 4` bytes (checked above) at a 4-byte aligned
        // address (asserted), borrowed for 'static; every bit pattern is a valid f32, and
        // the crate only builds for little-endian targets, as the bytes were written.
        unsafe { &*bytes.as_ptr().cast::<[f32; N]>() }
    }

    /// `len` bytes at `offset` of a file's bytes (`include_bytes!`), at compile time; a
    /// range outside the file is a compile error.
    pub const fn file_bytes(file: &'static [u8], offset: usize, len: usize) -> &'static [u8] {
        file.split_at(offset).1.split_at(len).0
    }

    /// The parts one after another, which must make exactly `N` bytes (at compile time).
    pub const fn concat<const N: usize>(parts: &[&[u8]]) -> [u8; N] {
        let mut out = [0u8; N];
        let (mut at, mut i) = (0, 0);
        while i < parts.len() {
            let part = parts[i];
            let (_, rest) = out.split_at_mut(at);
            rest.split_at_mut(part.len()).0.copy_from_slice(part);
            at += part.len();
            i += 1;
        }
        assert!(at == N, "the parts make the declared length");
        out
    }

    /// Views little-endian weight bytes as `N` f32 values.
    #[inline(always)]
    pub fn weights_f32<const BYTES: usize, const N: usize>(
        w: &'static Aligned<BYTES>,
    ) -> &'static [f32; N] {
        const { assert!(BYTES == N * 4) };
        // Safety: `Aligned` is 64-byte aligned and holds exactly `N * 4` bytes (checked
        // above at compile time); every bit pattern is a valid f32; the crate only
        // builds for little-endian targets, matching how the bytes were written.
        unsafe { &*w.0.as_ptr().cast::<[f32; N]>() }
    }

    /// Views little-endian weight bytes as `N` i64 values.
    #[inline(always)]
    pub fn weights_i64<const BYTES: usize, const N: usize>(
        w: &'static Aligned<BYTES>,
    ) -> &'static [i64; N] {
        const { assert!(BYTES == N * 8) };
        // Safety: as for `weights_f32`: 64-byte alignment covers i64, the size is checked
        // at compile time, every bit pattern is a valid i64, and targets are little-endian.
        unsafe { &*w.0.as_ptr().cast::<[i64; N]>() }
    }

    /// The trace callback of the untraced forward passes: one function, so that
    /// `forward`, `run` and `run_f32` share one instance of the forward pass.
    #[inline(always)]
    pub fn no_trace(_: &str, _: crate::TensorRef<'_>) {}

    /// The start of a caller's arena buffer for a model that needs `needed` bytes: an
    /// error unless the buffer holds that many bytes at a 16-byte aligned address (a
    /// model that needs none takes any buffer, the empty one included). The generated
    /// code works on the returned pointer; the buffer is never viewed as an [`Arena`](crate::Arena)
    /// (whose size is `needed` rounded up to 16, more than a buffer of `needed` bytes).
    pub fn arena_ptr(bytes: &mut [u8], needed: usize) -> Result<*mut u8, crate::RunError> {
        if needed > 0 && (bytes.len() < needed || bytes.as_ptr().align_offset(16) != 0) {
            return Err(crate::RunError::Arena {
                needed,
                got: bytes.len(),
            });
        }
        Ok(bytes.as_mut_ptr())
    }

    /// The error of an input of the wrong element type. Out of line and cold, so that the
    /// generated `run` tests one tag per port instead of branching on every variant to
    /// name the one it got (about 20 instructions on a Cortex-M for a one-port model).
    #[cold]
    #[inline(never)]
    pub fn wrong_input(
        k: usize,
        expected: &'static str,
        got: &crate::TensorRef<'_>,
    ) -> crate::RunError {
        crate::RunError::DType {
            which: crate::Port::Input(k),
            expected,
            got: got.dtype(),
        }
    }

    /// [`wrong_input`] for an output.
    #[cold]
    #[inline(never)]
    pub fn wrong_output(
        k: usize,
        expected: &'static str,
        got: &crate::TensorMut<'_>,
    ) -> crate::RunError {
        crate::RunError::DType {
            which: crate::Port::Output(k),
            expected,
            got: got.dtype(),
        }
    }

    /// A shared view of `len` elements at byte `offset` of an arena.
    ///
    /// # Safety
    /// `offset` is aligned for `T`, `offset + len * size_of::<T>()` is within the arena
    /// `base` points to, the bytes were written as `T` values (or zeroed) before, and no
    /// mutable view of an overlapping range exists while the returned one is used. The
    /// memory planner gives every generated call these guarantees.
    #[inline(always)]
    pub unsafe fn region<'a, T>(base: *mut u8, offset: usize, len: usize) -> &'a [T] {
        // Safety: guaranteed by the caller as documented above.
        unsafe { core::slice::from_raw_parts(base.add(offset).cast::<T>(), len) }
    }

    /// A mutable view of `len` elements at byte `offset` of an arena.
    ///
    /// # Safety
    /// As for [`region`], and no other view of an overlapping range exists while the
    /// returned one is used.
    #[inline(always)]
    pub unsafe fn region_mut<'a, T>(base: *mut u8, offset: usize, len: usize) -> &'a mut [T] {
        // Safety: guaranteed by the caller as documented above.
        unsafe { core::slice::from_raw_parts_mut(base.add(offset).cast::<T>(), len) }
    }

    /// [`region_mut`] with its bytes zeroed first: the outputs handed to a user's
    /// [`CustomKernel`](crate::CustomKernel), which may leave some unwritten (a `bool`
    /// read back from stale arena bytes would be an invalid value).
    ///
    /// # Safety
    /// As for [`region_mut`], except that the bytes need not hold `T` values before;
    /// all-zero bytes must be a valid `T` (true of every element type a model has).
    #[inline(always)]
    pub unsafe fn region_zeroed_mut<'a, T>(
        base: *mut u8,
        offset: usize,
        len: usize,
    ) -> &'a mut [T] {
        // Safety: the range is inside the arena and not otherwise borrowed (the
        // caller's contract), so it may be written; zero bytes are a valid `T`.
        unsafe {
            let at = base.add(offset).cast::<T>();
            core::ptr::write_bytes(at, 0, len);
            core::slice::from_raw_parts_mut(at, len)
        }
    }
}
