//! Shared helpers of the integration tests: ONNX Runtime sessions over a model's own
//! ONNX bytes, seeded inputs, and the numerical contract.

#[rustfmt::skip]
pub mod cases;
pub mod node_data;
pub mod timing;

use std::sync::OnceLock;

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use tinyonnx::{ModelInfo, TensorMut, TensorRef as Ref};

/// Which ONNX Runtime execution provider the cross-checks use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Cpu,
    Cuda,
}

impl Provider {
    /// From `TINYONNX_ORT_PROVIDER` (`cpu`, the default, or `cuda`).
    pub fn from_env() -> Result<Provider, String> {
        match std::env::var("TINYONNX_ORT_PROVIDER").as_deref() {
            Err(_) | Ok("cpu") | Ok("") => Ok(Provider::Cpu),
            Ok("cuda") => Ok(Provider::Cuda),
            Ok(other) => Err(format!(
                "TINYONNX_ORT_PROVIDER must be `cpu` or `cuda`, got `{other}`"
            )),
        }
    }
}

static LIBRARY: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Uses this ONNX Runtime library instead of `ORT_DYLIB_PATH` (call before the first
/// session).
pub fn use_ort_library(path: std::path::PathBuf) {
    let _ = LIBRARY.set(path);
}

/// Loads the ONNX Runtime library (see [`use_ort_library`], else `ORT_DYLIB_PATH`), once
/// per process.
pub fn init_ort() -> Result<&'static Environment, String> {
    static INIT: OnceLock<Result<Environment, String>> = OnceLock::new();
    INIT.get_or_init(|| {
        let explicit = LIBRARY.get().map(|p| p.display().to_string());
        let path = explicit
            .map(Ok)
            .unwrap_or_else(|| std::env::var("ORT_DYLIB_PATH"))
            .map_err(|_| {
                "ORT_DYLIB_PATH is not set: run the tests with `cargo xtask test`, which downloads \
             ONNX Runtime and sets it, or point it at libonnxruntime.so yourself"
                    .to_string()
            })?;
        if !std::path::Path::new(&path).exists() {
            return Err(format!(
                "ORT_DYLIB_PATH points at {path}, which does not exist"
            ));
        }
        ort::init_from(&path)
            .map_err(|e| format!("cannot load ONNX Runtime from {path}: {e}"))?
            .with_name("tinyonnx-tests")
            .build()
            .map_err(|e| format!("cannot create the ONNX Runtime environment: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// A session builder with graph optimizations on, one intra-op thread, and int8 QDQ
/// groups run as int8 (`session.qdqisint8allowed`, what ONNX Runtime does on Arm). By
/// default on x86-64 it rewrites int8 QDQ tensors to uint8 and runs its uint8 kernels,
/// whose results depend on the CPU: on an AVX2 machine without VNNI (this project's CI
/// machine since 2026-11-28) the DSL-quantized `DigitsInt8` came out up to 0.245 in a
/// probability from the exact int8 arithmetic (3 of 360 test images classified
/// differently; `digits_accuracy` and `ort_crosscheck` fail without this entry there),
/// and its `MatMulInteger` of uint8 by int8 saturates pairs of products at 16 bits
/// (`VPMADDUBSW`). With the entry its results equal our exact integer arithmetic here,
/// as the default did on the earlier AVX-512 VNNI machine. The benchmarks time ONNX
/// Runtime as a user runs it, with its default (`Oracle::Timing`).
fn builder(
    provider: Provider,
    role: Oracle,
) -> Result<ort::session::builder::SessionBuilder, String> {
    let env = init_ort()?;
    let mut builder = Session::builder(env)
        .map_err(|e| e.to_string())?
        .with_optimization_level(GraphOptimizationLevel::All)
        .map_err(|e| e.to_string())?
        .with_intra_threads(1)
        .map_err(|e| e.to_string())?;
    // Timing keeps ONNX Runtime's own default, whatever the CPU.
    if role == Oracle::Values {
        builder = builder
            .with_config_entry("session.qdqisint8allowed", "1")
            .map_err(|e| e.to_string())?;
    }
    match provider {
        Provider::Cuda => with_cuda(builder),
        Provider::Cpu => Ok(builder),
    }
}

/// What a session is for: expected values (int8 run as int8, see `builder`) or the
/// other side of a timing (ONNX Runtime's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oracle {
    Values,
    Timing,
}

/// A session over `onnx` with graph optimizations on and one intra-op thread.
pub fn session(onnx: &[u8], provider: Provider) -> Result<Session, String> {
    session_for(onnx, provider, Oracle::Values)
}

/// [`session`] for a given role.
pub fn session_for(onnx: &[u8], provider: Provider, role: Oracle) -> Result<Session, String> {
    builder(provider, role)?
        .commit_from_memory(onnx)
        .map_err(|e| format!("ONNX Runtime rejected the model: {e}"))
}

#[cfg(feature = "cuda")]
fn with_cuda(
    builder: ort::session::builder::SessionBuilder,
) -> Result<ort::session::builder::SessionBuilder, String> {
    builder
        .with_execution_providers([ort::ep::CUDA::default().build().error_on_failure()])
        .map_err(|e| format!("the CUDA execution provider is not available: {e}"))
}

#[cfg(not(feature = "cuda"))]
fn with_cuda(
    _: ort::session::builder::SessionBuilder,
) -> Result<ort::session::builder::SessionBuilder, String> {
    Err("these tests were built without the `cuda` feature: use `cargo xtask test --cuda`".into())
}

/// Runs a session on flat f32 inputs shaped as the model's device shapes (an all-f32
/// model; see [`run_ort_values`] for any dtypes).
pub fn run_ort(
    session: &mut Session,
    info: &ModelInfo,
    inputs: &[Vec<f32>],
) -> Result<Vec<Vec<f32>>, String> {
    let typed: Vec<Values> = inputs.iter().map(|v| Values::F32(v.clone())).collect();
    run_ort_values(session, info, &typed)?
        .into_iter()
        .zip(info.outputs)
        .map(|(v, t)| match v {
            Values::F32(v) => Ok(v),
            other => Err(format!(
                "output `{}` is {}: use run_ort_values",
                t.name,
                other.dtype()
            )),
        })
        .collect()
}

/// Runs a session and drops the outputs: what a benchmark of ONNX Runtime should time.
pub fn run_ort_only(
    session: &mut Session,
    info: &ModelInfo,
    inputs: &[Vec<f32>],
) -> Result<(), String> {
    let views = info.inputs.iter().zip(inputs).map(|(t, data)| {
        TensorRef::from_array_view((t.shape.to_vec(), data.as_slice()))
            .map(Into::into)
            .map_err(|e| e.to_string())
    });
    run_views(session, info, views)
}

/// Runs a session on input views (one a model input, in order; an error naming the
/// input it is for) and drops the outputs.
fn run_views<'v>(
    session: &mut Session,
    info: &ModelInfo,
    views: impl Iterator<Item = Result<ort::session::SessionInputValue<'v>, String>>,
) -> Result<(), String> {
    let mut feeds = Vec::with_capacity(info.inputs.len());
    for (t, view) in info.inputs.iter().zip(views) {
        let view = view.map_err(|e| format!("input `{}`: {e}", t.name))?;
        feeds.push((t.name.to_string(), view));
    }
    session
        .run(feeds)
        .map(drop)
        .map_err(|e| format!("ONNX Runtime failed to run the model: {e}"))
}

/// [`run_ort_only`] on typed inputs (any dtypes), viewed in place.
pub fn run_ort_values_only(
    session: &mut Session,
    info: &ModelInfo,
    inputs: &[Values],
) -> Result<(), String> {
    let views = info
        .inputs
        .iter()
        .zip(inputs)
        .map(|(t, data)| data.ort_view(t.shape));
    run_views(session, info, views)
}

/// Seeded inputs uniform in `[-scale, scale)`, one vector per model input, from
/// `tinyonnx::testing::fill_uniform` (the generator the firmware uses too).
pub fn seeded_inputs(info: &ModelInfo, seed: u64, scale: f32) -> Vec<Vec<f32>> {
    let mut state = seed;
    info.inputs
        .iter()
        .map(|t| {
            let mut v = vec![0.0; t.numel()];
            state = tinyonnx::testing::fill_uniform(state, &mut v, scale);
            v
        })
        .collect()
}

macro_rules! values {
    ($($variant:ident($t:ty) = $name:literal),* $(,)?) => {
        /// Owned row-major values of one model port, of any element type.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Values {
            $($variant(Vec<$t>),)*
        }

        impl Values {
            /// `n` zeros (false) of the dtype the DSL spells `dtype`.
            pub fn zeros(dtype: &str, n: usize) -> Result<Values, String> {
                match dtype {
                    $($name => Ok(Values::$variant(vec![<$t>::default(); n])),)*
                    other => Err(format!("unknown dtype `{other}`")),
                }
            }

            /// `n` stale values of the dtype the DSL spells `dtype`: NaN for floats, a
            /// byte pattern for integers, `true` for bool. The harness hands these to
            /// the forward pass as output buffers, so that a kernel reading an output
            /// before writing it shows as a wrong answer.
            pub fn stale(dtype: &str, n: usize) -> Result<Values, String> {
                let mut v = Values::zeros(dtype, n)?;
                match &mut v {
                    Values::F32(x) => x.fill(f32::NAN),
                    Values::F64(x) => x.fill(f64::NAN),
                    Values::I64(x) => x.fill(0x5A5A_5A5A_5A5A_5A5A),
                    Values::I32(x) => x.fill(0x5A5A_5A5A),
                    Values::I8(x) => x.fill(0x5A),
                    Values::U8(x) => x.fill(0xA5),
                    Values::Bool(x) => x.fill(true),
                    Values::I16(x) => x.fill(0x5A5A),
                    Values::U16(x) => x.fill(0xA5A5),
                    Values::U32(x) => x.fill(0xA5A5_A5A5),
                    Values::U64(x) => x.fill(0xA5A5_A5A5_A5A5_A5A5),
                }
                Ok(v)
            }

            /// A view for `Model::run`.
            pub fn as_ref(&self) -> Ref<'_> {
                match self {
                    $(Values::$variant(v) => Ref::$variant(v),)*
                }
            }

            /// A mutable view for `Model::run`.
            pub fn as_mut(&mut self) -> TensorMut<'_> {
                match self {
                    $(Values::$variant(v) => TensorMut::$variant(v),)*
                }
            }

            /// Owned copies of borrowed values.
            pub fn from_ref(v: Ref<'_>) -> Values {
                match v {
                    $(Ref::$variant(s) => Values::$variant(s.to_vec()),)*
                }
            }

            /// The values as f64, for comparisons (bool as 0 and 1).
            pub fn to_f64(&self) -> Vec<f64> {
                match self {
                    $(Values::$variant(v) => v.iter().map(|&x| to_f64(x)).collect(),)*
                }
            }

            /// The DSL name of the element type.
            pub fn dtype(&self) -> &'static str {
                match self {
                    $(Values::$variant(_) => $name,)*
                }
            }

            /// Integers and bools must match exactly; floats within the contract.
            pub fn is_exact(&self) -> bool {
                !matches!(self, Values::F32(_) | Values::F64(_))
            }

            /// An ONNX Runtime input over these values.
            fn ort_value(&self, shape: &[usize]) -> Result<ort::value::DynValue, String> {
                let shape = shape.to_vec();
                match self {
                    $(Values::$variant(v) => ort::value::Tensor::from_array((shape, v.clone()))
                        .map(Into::into)
                        .map_err(|e| e.to_string()),)*
                }
            }

            /// A view of the values as an ONNX Runtime input of shape `shape`, no copy.
            fn ort_view(&self, shape: &[usize]) -> Result<ort::session::SessionInputValue<'_>, String> {
                let shape = shape.to_vec();
                match self {
                    $(Values::$variant(v) => ort::value::TensorRef::from_array_view((shape, v.as_slice()))
                        .map(Into::into)
                        .map_err(|e| e.to_string()),)*
                }
            }

            /// Reads an ONNX Runtime output of the dtype `dtype`.
            fn from_ort(dtype: &str, value: &ort::value::DynValue) -> Result<(Vec<usize>, Values), String> {
                match dtype {
                    $($name => {
                        let (shape, data) = value.try_extract_tensor::<$t>().map_err(|e| e.to_string())?;
                        Ok((shape.iter().map(|&d| d as usize).collect(), Values::$variant(data.to_vec())))
                    })*
                    other => Err(format!("unknown dtype `{other}`")),
                }
            }
        }
    };
}

values! {
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

/// A value as f64 (bool as 0 or 1).
trait ToF64: Copy {
    fn to(self) -> f64;
}
macro_rules! to_f64_impl {
    ($($t:ty),*) => {$(
        impl ToF64 for $t {
            fn to(self) -> f64 {
                self as f64
            }
        }
    )*};
}
to_f64_impl!(f32, f64, i64, i32, i16, i8, u64, u32, u16, u8);
impl ToF64 for bool {
    fn to(self) -> f64 {
        f64::from(u8::from(self))
    }
}
fn to_f64<T: ToF64>(v: T) -> f64 {
    v.to()
}

/// Seeded inputs of each port's dtype (`tinyonnx::typed_testing::fill`, one stream
/// across the ports; for f32 ports the same values as [`seeded_inputs`]).
pub fn seeded_values(info: &ModelInfo, seed: u64, scale: f32) -> Result<Vec<Values>, String> {
    let mut state = seed;
    info.inputs
        .iter()
        .map(|t| {
            let mut v = Values::zeros(t.dtype, t.numel())?;
            state = tinyonnx::typed_testing::fill(state, v.as_mut(), scale);
            Ok(v)
        })
        .collect()
}

/// Runs a session on typed inputs shaped as the model's device shapes; the outputs have
/// the model's declared dtypes and shapes (else an error naming the output).
pub fn run_ort_values(
    session: &mut Session,
    info: &ModelInfo,
    inputs: &[Values],
) -> Result<Vec<Values>, String> {
    let mut feeds: Vec<(String, ort::value::DynValue)> = Vec::new();
    for (t, data) in info.inputs.iter().zip(inputs) {
        let v = data
            .ort_value(t.shape)
            .map_err(|e| format!("input `{}`: {e}", t.name))?;
        feeds.push((t.name.to_string(), v));
    }
    let outputs = session
        .run(feeds)
        .map_err(|e| format!("ONNX Runtime failed to run the model: {e}"))?;
    info.outputs
        .iter()
        .map(|t| {
            let (got, values) = Values::from_ort(t.dtype, &outputs[t.name])
                .map_err(|e| format!("output `{}` ({}): {e}", t.name, t.dtype))?;
            if got != t.shape {
                return Err(format!(
                    "output `{}`: ONNX Runtime produced shape {got:?}, tinyonnx declares {:?}",
                    t.name, t.shape
                ));
            }
            Ok(values)
        })
        .collect()
}

/// Compares typed outputs: [`compare`] on the f64 values; integer and bool outputs
/// count any difference (their contract is equality).
pub fn compare_values(ours: &Values, ort: &Values) -> Diff {
    if ours.dtype() != ort.dtype() {
        return Diff {
            max_abs: f32::INFINITY,
            max_scaled: f32::INFINITY,
            cosine: 0.0,
        };
    }
    let (a, b) = (ours.to_f64(), ort.to_f64());
    let mut d = Diff::default();
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(&b) {
        let (abs, scaled) = difference(ours.is_exact(), x, y);
        d.max_abs = d.max_abs.max(abs as f32);
        d.max_scaled = d.max_scaled.max(scaled as f32);
        if !x.is_finite() || !y.is_finite() {
            d.max_abs = f32::INFINITY;
            d.max_scaled = f32::INFINITY;
        }
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    d.cosine = if na == 0.0 && nb == 0.0 {
        1.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    };
    d
}

/// [`compare_values`] where NaN matches NaN and an infinity the same infinity (what the
/// NaN and infinity cases check); any other non-finite mismatch is an infinite difference.
pub fn compare_values_nan(ours: &Values, ort: &Values) -> Diff {
    if ours.dtype() != ort.dtype() {
        return compare_values(ours, ort);
    }
    let (a, b) = (ours.to_f64(), ort.to_f64());
    let same = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || (x.is_infinite() && x == y);
    let mut d = Diff {
        cosine: 1.0,
        ..Diff::default()
    };
    for (&x, &y) in a.iter().zip(&b) {
        if same(x, y) {
            continue;
        }
        if !x.is_finite() || !y.is_finite() {
            d.max_abs = f32::INFINITY;
            d.max_scaled = f32::INFINITY;
            continue;
        }
        let (abs, scaled) = difference(ours.is_exact(), x, y);
        d.max_abs = d.max_abs.max(abs as f32);
        d.max_scaled = d.max_scaled.max(scaled as f32);
    }
    d
}

/// `|x - y|` and the contract's scaled difference (relative above 1; any difference of
/// an integer or bool is infinite).
fn difference(exact: bool, x: f64, y: f64) -> (f64, f64) {
    let abs = (x - y).abs();
    let scaled = if exact {
        if abs > 0.0 { f64::INFINITY } else { 0.0 }
    } else {
        abs / y.abs().max(1.0)
    };
    (abs, scaled)
}

/// Puts NaN, +inf and -inf at fixed positions of every float input (about one value in
/// five), leaving the rest as they are.
pub fn with_specials(inputs: &mut [Values]) {
    for v in inputs {
        match v {
            Values::F32(v) => tinyonnx::typed_testing::with_specials(TensorMut::F32(v)),
            Values::F64(v) => tinyonnx::typed_testing::with_specials(TensorMut::F64(v)),
            _ => {}
        }
    }
}

/// Operators whose NaN or infinity results differ from ONNX Runtime's on purpose or for
/// a reason outside the operator's definition; every other float operator must agree.
pub const SPECIALS_DIFFER: &[(&str, &str)] = &[
    (
        "DFT",
        "an infinite sample: ONNX Runtime's FFT meets it through other twiddle products than the direct sum, so a bin is infinite in one and NaN (inf * 0, inf - inf) in the other",
    ),
    (
        "GridSample",
        "a NaN or infinite sample or coordinate: ONNX Runtime's result differs from the weighted sum over every tap that tinyonnx computes, as the ONNX reference does (0 times a NaN sample is NaN)",
    ),
    (
        "STFT",
        "as DFT: an infinite sample reaches a bin through other products in ONNX Runtime's FFT",
    ),
    (
        "MaxPool",
        "ONNX Runtime's result depends on where a NaN is in the window; tinyonnx propagates NaN",
    ),
    (
        "GlobalMaxPool",
        "ONNX Runtime's result depends on where a NaN is; tinyonnx propagates NaN",
    ),
    (
        "DynamicQuantizeLinear",
        "an infinite or NaN input has no finite range: ONNX Runtime's zero point then comes from an undefined float-to-integer conversion",
    ),
    (
        "Hardmax",
        "ONNX Runtime's choice depends on where a NaN is; tinyonnx marks the first NaN, as the ONNX reference (numpy's argmax)",
    ),
    (
        "Resize",
        "linear and cubic: ONNX Runtime combines neighbours around an infinity differently; tinyonnx weighs every tap, as the ONNX reference does",
    ),
    (
        "LRN",
        "ONNX Runtime gives NaN at positions whose window holds no NaN or infinity; tinyonnx sums each window as the formula says",
    ),
    (
        "ScatterND",
        "a max or min reduction onto a NaN in the data: ONNX Runtime keeps the update, tinyonnx NaN",
    ),
    (
        "TopK",
        "ONNX Runtime's order depends on where a NaN is; tinyonnx orders NaN above every number, as the ONNX reference (numpy's sort)",
    ),
    (
        "ReduceMax",
        "ONNX Runtime's result depends on where a NaN is; tinyonnx propagates NaN",
    ),
    (
        "ReduceMin",
        "ONNX Runtime's result depends on where a NaN is; tinyonnx propagates NaN",
    ),
    (
        "Conv",
        "ONNX Runtime multiplies zero padding by an infinite weight (NaN); tinyonnx skips padding",
    ),
    (
        "LSTM",
        "ONNX Runtime's recurrent kernels clamp NaN in their activations",
    ),
    (
        "GRU",
        "ONNX Runtime's recurrent kernels clamp NaN in their activations",
    ),
    (
        "RNN",
        "ONNX Runtime's recurrent kernels clamp NaN in their activations",
    ),
    (
        "LogSoftmax",
        "an f64 row holding an infinity: ONNX Runtime gives finite values and -inf, tinyonnx NaN",
    ),
    (
        "ScatterElements",
        "a max or min reduction onto a NaN in the data: ONNX Runtime keeps the update, tinyonnx NaN",
    ),
];

/// How far two outputs are apart.
#[derive(Debug, Clone, Copy, Default)]
pub struct Diff {
    pub max_abs: f32,
    /// Largest `|ours - ort| / max(1, |ort|)`: the contract's measure.
    pub max_scaled: f32,
    pub cosine: f64,
}

/// Compares our output with ONNX Runtime's.
pub fn compare(ours: &[f32], ort: &[f32]) -> Diff {
    let mut d = Diff::default();
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&a, &b) in ours.iter().zip(ort) {
        let abs = (a - b).abs();
        d.max_abs = d.max_abs.max(abs);
        d.max_scaled = d.max_scaled.max(abs / b.abs().max(1.0));
        if !a.is_finite() || !b.is_finite() {
            d.max_abs = f32::INFINITY;
            d.max_scaled = f32::INFINITY;
        }
        dot += a as f64 * b as f64;
        na += a as f64 * a as f64;
        nb += b as f64 * b as f64;
    }
    d.cosine = if na == 0.0 && nb == 0.0 {
        1.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    };
    d
}

/// The numerical contract: max abs diff <= 1e-5, relative for values above 1.
pub const TOLERANCE: f32 = 1e-5;

/// The f64 contract: max abs diff <= 1e-12, relative above 1 (f64 kernels compute in
/// f64; an f32 computation would miss it by about 1e-7).
pub const TOLERANCE_F64: f32 = 1e-12;

/// The tolerance of an output: [`TOLERANCE_F64`] for f64, else [`TOLERANCE`] (integer
/// and bool differences count as infinite in [`compare_values`]).
pub fn tolerance(v: &Values) -> f32 {
    match v {
        Values::F64(_) => TOLERANCE_F64,
        _ => TOLERANCE,
    }
}

/// A 16-byte aligned buffer viewed as bytes, for `Model::run_f32`'s arena.
pub fn as_bytes(buf: &mut [u128]) -> &mut [u8] {
    let len = size_of_val(buf);
    // Safety: u8 has alignment 1 and every byte of a u128 is initialized; the returned
    // slice covers exactly the buffer and borrows it mutably for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), len) }
}

/// The model with every intermediate tensor (each `value_info` of its graph) appended
/// to the graph outputs, for comparing layer by layer (`cargo xtask export
/// --all-outputs`). Errors on bytes that are not a model.
pub fn with_all_outputs(onnx: &[u8]) -> Result<Vec<u8>, String> {
    use tinyonnx_proto::Message;
    let mut model =
        tinyonnx_proto::ModelProto::decode(onnx).map_err(|e| format!("not an ONNX model: {e}"))?;
    let graph = model.graph.as_mut().ok_or("the model has no graph")?;
    let extra: Vec<_> = graph
        .value_info
        .iter()
        .filter(|v| !graph.output.iter().any(|o| o.name == v.name))
        .cloned()
        .collect();
    graph.output.extend(extra);
    Ok(model.encode_to_vec())
}

/// One traced tensor compared with ONNX Runtime.
#[derive(Debug, Clone)]
pub struct LayerDiff {
    pub name: String,
    pub dtype: &'static str,
    pub diff: Diff,
    pub within: bool,
}

/// Runs `example` with tracing and ONNX Runtime on its all-outputs model, on the same
/// seeded inputs; returns every traced tensor the ONNX graph names (not those inside
/// function calls) compared with ORT's, in the order our nodes ran.
pub fn layer_by_layer(
    example: &tinyonnx_examples::Example,
    provider: Provider,
    seed: u64,
) -> Result<Vec<LayerDiff>, String> {
    let info = &example.info;
    let all = with_all_outputs(example.onnx)?;
    let mut sess = session(&all, provider)?;
    let inputs = seeded_values(info, seed, 1.0)?;
    let mut feeds: Vec<(String, ort::value::DynValue)> = Vec::new();
    for (t, data) in info.inputs.iter().zip(&inputs) {
        feeds.push((t.name.to_string(), data.ort_value(t.shape)?));
    }
    let outputs = sess
        .run(feeds)
        .map_err(|e| format!("ONNX Runtime failed to run the all-outputs model: {e}"))?;
    let mut traced: Vec<(String, Values)> = Vec::new();
    run_with(example, &inputs, |arena, refs, outs| {
        (example.run_traced)(arena, refs, outs, &mut |name, v| {
            traced.push((name.to_string(), Values::from_ref(v)));
        })
    })?;
    // Tensors inside ONNX function calls are not graph values there: compared only
    // through the calls' outputs.
    let names: std::collections::HashSet<String> = {
        use tinyonnx_proto::Message;
        tinyonnx_proto::ModelProto::decode(&all[..])
            .ok()
            .and_then(|m| m.graph)
            .map(|g| g.output.into_iter().filter_map(|o| o.name).collect())
            .unwrap_or_default()
    };
    traced
        .into_iter()
        .filter(|(name, _)| names.contains(name))
        .map(|(name, v)| {
            let value = outputs
                .get(name.as_str())
                .ok_or_else(|| format!("ONNX Runtime has no output `{name}`"))?;
            let (_, theirs) =
                Values::from_ort(v.dtype(), value).map_err(|e| format!("`{name}`: {e}"))?;
            let diff = if theirs.to_f64().len() == v.to_f64().len() {
                compare_values(&v, &theirs)
            } else {
                Diff {
                    max_abs: f32::INFINITY,
                    max_scaled: f32::INFINITY,
                    cosine: 0.0,
                }
            };
            Ok(LayerDiff {
                within: diff.max_scaled <= tolerance(&v),
                dtype: v.dtype(),
                name,
                diff,
            })
        })
        .collect()
}

/// The first traced tensor outside the contract: where two runtimes start to disagree.
pub fn first_divergence(layers: &[LayerDiff]) -> Option<&LayerDiff> {
    layers.iter().find(|l| !l.within)
}

/// The largest protobuf message size (2 GB - 1): an ONNX model beyond it must keep its
/// weights in external data.
pub const PROTOBUF_LIMIT: usize = i32::MAX as usize;

/// Moves every initializer of at least `threshold` bytes into one side file, per the ONNX
/// external-data convention: the tensor keeps its name, type and dims, gets
/// `data_location = EXTERNAL` and `external_data` entries `location` (`location`, relative
/// to the model file), `offset` and `length`, and loses `raw_data`. Offsets are 64-byte
/// aligned. Returns the model bytes and the data file's bytes.
pub fn to_external_data(
    onnx: &[u8],
    location: &str,
    threshold: usize,
) -> Result<(Vec<u8>, Vec<u8>), String> {
    use tinyonnx_proto::Message;
    use tinyonnx_proto::tensor_proto::DataLocation;
    let mut model =
        tinyonnx_proto::ModelProto::decode(onnx).map_err(|e| format!("not an ONNX model: {e}"))?;
    let graph = model.graph.as_mut().ok_or("the model has no graph")?;
    let mut data = Vec::new();
    for t in &mut graph.initializer {
        let Some(raw) = t.raw_data.as_ref() else {
            continue;
        };
        if raw.len() < threshold {
            continue;
        }
        let offset = data.len().next_multiple_of(64);
        data.resize(offset, 0);
        data.extend_from_slice(raw);
        let entry = |k: &str, v: String| tinyonnx_proto::StringStringEntryProto {
            key: Some(k.to_string()),
            value: Some(v),
        };
        t.external_data = vec![
            entry("location", location.to_string()),
            entry("offset", offset.to_string()),
            entry("length", raw.len().to_string()),
        ];
        t.raw_data = None;
        t.set_data_location(DataLocation::External);
    }
    let bytes = model.encode_to_vec();
    if bytes.len() > PROTOBUF_LIMIT {
        return Err(format!(
            "the model is {} bytes even with its weights outside, over protobuf's 2 GB limit: lower the threshold",
            bytes.len()
        ));
    }
    Ok((bytes, data))
}

/// A session over a model file (which may reference external data beside it).
pub fn session_from_file(path: &std::path::Path, provider: Provider) -> Result<Session, String> {
    session_from_file_for(path, provider, Oracle::Values)
}

/// [`session_from_file`] for a given role.
pub fn session_from_file_for(
    path: &std::path::Path,
    provider: Provider,
    role: Oracle,
) -> Result<Session, String> {
    builder(provider, role)?
        .commit_from_file(path)
        .map_err(|e| format!("ONNX Runtime rejected {}: {e}", path.display()))
}

/// The custom operators a model uses (`domain.op_type` of nodes outside the default
/// domain that are not calls of the model's own functions). ONNX Runtime has no kernels
/// for them, so the cross-checks skip such models and say why.
pub fn custom_ops(onnx: &[u8]) -> Vec<String> {
    use tinyonnx_proto::Message;
    let Ok(model) = tinyonnx_proto::ModelProto::decode(onnx) else {
        return Vec::new();
    };
    let functions: Vec<(String, String)> = model
        .functions
        .iter()
        .map(|f| (f.domain().to_string(), f.name().to_string()))
        .collect();
    // The nodes of the graph and of the subgraphs in its nodes' attributes.
    fn all_nodes<'a>(
        g: &'a tinyonnx_proto::GraphProto,
        out: &mut Vec<&'a tinyonnx_proto::NodeProto>,
    ) {
        for n in &g.node {
            out.push(n);
            for a in &n.attribute {
                for sub in a.g.iter().chain(&a.graphs) {
                    all_nodes(sub, out);
                }
            }
        }
    }
    let mut nodes = Vec::new();
    if let Some(g) = &model.graph {
        all_nodes(g, &mut nodes);
    }
    let mut out: Vec<String> = nodes
        .into_iter()
        .filter(|n| !n.domain().is_empty() && n.domain() != "ai.onnx")
        .filter(|n| !functions.contains(&(n.domain().to_string(), n.op_type().to_string())))
        .map(|n| format!("{}.{}", n.domain(), n.op_type()))
        .collect();
    out.dedup();
    out
}

/// Why ONNX Runtime cannot check `example`, if it cannot: its custom operators.
pub fn ort_skip_reason(example: &tinyonnx_examples::Example) -> Option<String> {
    let custom = custom_ops(example.onnx);
    (!custom.is_empty()).then(|| {
        format!(
            "skipped: custom operators {} have no ONNX Runtime kernel",
            custom.join(", ")
        )
    })
}

/// Runs `example`'s forward pass (`Model::run`) on typed inputs in a fresh heap arena;
/// returns the outputs.
pub fn run_ours(
    example: &tinyonnx_examples::Example,
    inputs: &[Values],
) -> Result<Vec<Values>, String> {
    run_with(example, inputs, example.run_typed)
}

/// Stale output buffers ([`Values::stale`]), a heap arena of stale bytes (all ones: NaN
/// as f32 and f64) and typed input views for `example`; calls `run` with them and
/// returns the outputs. A kernel that read what it had not written would differ from
/// ONNX Runtime.
fn run_with(
    example: &tinyonnx_examples::Example,
    inputs: &[Values],
    run: impl FnOnce(&mut [u8], &[Ref<'_>], &mut [TensorMut<'_>]) -> Result<(), tinyonnx::RunError>,
) -> Result<Vec<Values>, String> {
    let info = &example.info;
    let mut ours: Vec<Values> = info
        .outputs
        .iter()
        .map(|t| Values::stale(t.dtype, t.numel()))
        .collect::<Result<_, _>>()?;
    let refs: Vec<_> = inputs.iter().map(Values::as_ref).collect();
    let mut outs: Vec<_> = ours.iter_mut().map(Values::as_mut).collect();
    let mut arena = vec![u128::MAX; info.arena_bytes.div_ceil(16)];
    run(as_bytes(&mut arena), &refs, &mut outs).map_err(|e| format!("{}: {e}", info.name))?;
    Ok(ours)
}

/// The `ModelInfo` of a model compiled in this process (what the macro's `INFO` would
/// hold), leaked: for tools and tests that compile imported files at run time.
pub fn info_of(c: &tinyonnx_core::driver::Compiled) -> ModelInfo {
    fn leak<T>(v: Vec<T>) -> &'static [T] {
        Box::leak(v.into_boxed_slice())
    }
    let p = &c.planned;
    let g = &p.graph;
    let port = |id: usize| tinyonnx::TensorInfo {
        name: Box::leak(g.tensors[id].name.clone().into_boxed_str()),
        shape: leak(
            g.tensors[id]
                .ty
                .shape
                .0
                .iter()
                .map(|d| d.fixed().unwrap_or(1))
                .collect(),
        ),
        dtype: g.tensors[id].ty.dtype.name(),
    };
    ModelInfo {
        name: Box::leak(g.name.clone().into_boxed_str()),
        inputs: leak(g.inputs.iter().map(|&i| port(i)).collect()),
        outputs: leak(g.outputs.iter().map(|&o| port(o)).collect()),
        params: g.params(),
        weights_bytes: tinyonnx_core::emit_rust::stored_weight_bytes(p),
        transformed_bytes: tinyonnx_core::emit_rust::transformed_weight_bytes(p),
        nodes: g.nodes.len(),
        macs: tinyonnx_core::emit_rust::macs(p),
        arena_bytes: p.arena_bytes,
        arena_lower_bound_bytes: p.lower_bound_bytes,
        stack_bytes: p.stack_bytes,
        run_inlined: p.inline_run,
    }
}

/// Silero VAD's sample-rate input `sr`, where a model has it, set to 16000: the rate its
/// fixed dims select (the seeded value would pick another branch in the original file).
pub fn silero_sample_rate(info: &ModelInfo, inputs: &mut [Values]) {
    for (t, v) in info.inputs.iter().zip(inputs) {
        if t.name == "sr" {
            *v = Values::I64(vec![16000]);
        }
    }
}
