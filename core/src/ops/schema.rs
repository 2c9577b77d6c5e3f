//! What an operator is: [`OpSchema`] and the types its rules see (inference, scratch
//! and lowering contexts, attributes, epilogues), with the helpers operators share.
//! Operator files import this module; it imports none of them.

use proc_macro2::TokenStream;
use quote::quote;

use crate::data::Data;
use crate::types::{DType, TensorType};

/// What every operator file imports: the schema types and helpers, and the names
/// their rules use throughout.
pub mod prelude {
    pub use super::*;
    pub use crate::data::Data;
    pub use crate::types::{DType, TensorType};
    pub use proc_macro2::TokenStream;
    pub use quote::quote;
}

/// The lowest and highest default-domain opsets tinyonnx accepts.
pub const MIN_OPSET: i64 = 13;
/// See [`MIN_OPSET`]. ONNX Runtime 1.31 and onnx 1.23 both accept these.
pub const MAX_OPSET: i64 = 23;
/// The opset used when a model does not say.
pub const DEFAULT_OPSET: i64 = 17;

/// One operator: everything the compiler needs to check, emit and lower it.
#[derive(Debug)]
pub struct OpSchema {
    /// ONNX `op_type` (default domain), also the DSL name.
    pub op_type: &'static str,
    /// Inputs in ONNX order; optional ones come last.
    pub inputs: &'static [InputSpec],
    /// Number of outputs.
    pub outputs: usize,
    /// Attributes with their kinds and defaults.
    pub attrs: &'static [AttrSpec],
    /// Lowest opset whose semantics this schema implements (the DSL rejects lower ones).
    pub since_opset: i64,
    /// Element types the inputs may have (all inputs share one).
    pub dtypes: &'static [DType],
    /// Element types of `dtypes` that a later opset added, with that opset (a model of
    /// a lower opset gets an error naming it).
    pub dtype_since: &'static [(DType, i64)],
    /// Output 0 may reuse the buffer of this input when that input dies here.
    pub inplace: Option<usize>,
    /// Output 0 is the `inplace` input reinterpreted (same bytes, another shape): it
    /// shares that input's buffer even when the input stays alive, and the node emits
    /// no code (`Reshape`, `Flatten`, `Squeeze`, `Unsqueeze`, `Dropout`, `Identity`).
    pub view: bool,
    /// Shape and dtype inference.
    pub infer: fn(&InferCtx) -> Result<Vec<TensorType>, OpError>,
    /// The kernel call for one node.
    pub lower: fn(&LowerCtx) -> TokenStream,
    /// Multiply-accumulates (or elementary operations) for one inference, for reports.
    pub macs: fn(&LowerCtx) -> u64,
    /// Output values computed at compile time (`Constant`), if the operator folds.
    pub fold: Option<FoldFn>,
    /// f32 elements of scratch memory one node needs in the arena during its call,
    /// from the device shapes of its inputs and outputs.
    pub scratch: ScratchFn,
    /// The last input repeats (`Concat`): one or more of it.
    pub variadic: bool,
    /// Output names, for messages and for outputs beyond the first.
    pub output_names: &'static [&'static str],
    /// Inputs whose compile-time values the lowering emits in its own layout (packed
    /// panels), so the weights as declared are not emitted for this node.
    pub packs: fn(&LowerCtx) -> Vec<usize>,
    /// Work of the node after it that this operator's kernel can take over (its
    /// epilogues), which `plan::fuse` uses.
    pub fusion: Fusion,
    /// The epilogue this operator becomes when it follows a node whose [`Fusion`] takes
    /// it (a `Relu`, a bias `Add`, a `BatchNormalization`).
    pub absorbed: Option<Absorbed>,
    /// Where the kernel also has a `_shared` form, which on some targets runs one copy
    /// for every node that calls it, sizes and options as values ([`LowerCtx::sized`]):
    /// the family of a node's copy ([`SizedFamily`]), or `None` for a node whose kernel
    /// has no such form. `plan` gives the `_shared` form to every node of a family in a
    /// graph whose nodes of it would otherwise compile the family's `copies` or more.
    pub sized_kernel: SizedFn,
    /// Bytes of flash a node's weights take beyond their declared size where the kernel
    /// the plan chose stores them transformed (a Winograd convolution's kernel, which the
    /// model asked for), from what its scratch rule sees; 0 for most.
    pub transformed: ScratchFn,
    /// Cross-check cases: model bodies (DSL items, optionally starting with `opset = N;`)
    /// that exercise the operator's dtypes, shapes and attributes. `cargo xtask codegen`
    /// turns each into a model in `tests/src/cases.rs`, which the tests run against ONNX
    /// Runtime on seeded inputs.
    pub cases: fn(&OpSchema) -> Vec<String>,
}

/// Work a node's kernel can take over from the node after it.
#[derive(Debug, Clone, Copy)]
pub struct Fusion {
    /// Output element types for which a following `Relu` becomes the kernel's epilogue.
    pub relu: &'static [DType],
    /// A following `Add` of a constant vector along the last axis becomes the bias.
    pub row_bias: bool,
    /// A following `BatchNormalization` folds into the weights and bias.
    pub batch_norm: bool,
}

impl Fusion {
    /// Nothing fuses into the operator.
    pub const NONE: Fusion = Fusion {
        relu: &[],
        row_bias: false,
        batch_norm: false,
    };
}

/// What a node becomes when the node before it takes over its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absorbed {
    /// `max(y, 0)` on the producer's output.
    Relu,
    /// A bias along the last axis.
    RowBias,
    /// A batch normalization folded into the producer's weights and bias.
    BatchNorm,
}

/// Computes an operator's outputs at compile time.
pub type FoldFn = fn(&InferCtx) -> Result<Vec<Data>, OpError>;

/// Scratch elements of a node from its input and output device shapes and attributes.
pub type ScratchFn = fn(&ScratchCtx) -> usize;

/// The family of a node's kernel copy that can be shared with sizes as values
/// ([`OpSchema::sized_kernel`]), from what its scratch rule sees.
pub type SizedFn = fn(&ScratchCtx) -> Option<SizedFamily>;

/// Kernel copies that one copy with sizes as values can replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SizedFamily {
    /// The kernel (a convolution's direct and im2col kernels are two families).
    pub name: &'static str,
    /// The fewest distinct constant copies from which the shared one takes less flash
    /// (measured on the cores that take it; `usize::MAX`: only where the model asks for
    /// flash over speed, which shares from two).
    pub copies: usize,
}

/// What an operator's scratch rule (and [`SizedFn`]) sees of one node.
#[derive(Debug)]
pub struct ScratchCtx<'a> {
    /// Device shapes of the inputs (`None` for omitted optional ones).
    pub inputs: Vec<Option<Vec<usize>>>,
    /// Device shapes of the outputs.
    pub outputs: Vec<Vec<usize>>,
    pub attrs: &'a Attrs,
    /// Whether each input's values are known at compile time.
    pub consts: Vec<bool>,
    /// The node may take its faster path with more scratch (the plan's choice, see
    /// `plan::Step::winograd`).
    pub winograd: u8,
}

/// Attributes as the user wrote them (in the schema's order), plus the defaults.
pub fn attrs_with_defaults(op: &OpSchema, mut explicit: Vec<(&'static str, AttrValue)>) -> Attrs {
    explicit.sort_by_key(|(n, _)| op.attrs.iter().position(|a| a.name == *n));
    let defaults = op
        .attrs
        .iter()
        .filter(|s| !explicit.iter().any(|(n, _)| *n == s.name))
        .filter_map(|s| s.default.value().map(|v| (s.name, v)))
        .collect();
    Attrs { explicit, defaults }
}

/// The schema fields most operators share; operators override what differs.
pub const BASE: OpSchema = OpSchema {
    op_type: "",
    inputs: &[],
    outputs: 1,
    attrs: &[],
    since_opset: MIN_OPSET,
    dtypes: &[DType::F32],
    dtype_since: &[],
    inplace: None,
    view: false,
    infer: |_| unreachable!("bug: an operator without inference"),
    lower: |_| unreachable!("bug: an operator without lowering"),
    macs: elementwise_macs,
    fold: None,
    scratch: |_| 0,
    variadic: false,
    output_names: &["output"],
    packs: |_| Vec::new(),
    fusion: Fusion::NONE,
    absorbed: None,
    sized_kernel: |_| None,
    transformed: |_| 0,
    cases: |_| Vec::new(),
};

/// Hand-written cases.
pub fn cases(bodies: &[&str]) -> Vec<String> {
    bodies.iter().map(|b| b.to_string()).collect()
}

/// `Cast(Constant(value_int = 1), to = d)`: a one of dtype `d` (weights are f32 or i64).
pub fn one_of(d: DType) -> String {
    format!("Cast(Constant(value_int = 1), to = {d})")
}

/// Cases of an element-wise binary operator over its dtypes: per dtype, broadcasting a
/// row against a matrix; for the first dtype also a column against a row (both inputs
/// grow), equal shapes, and a scalar. A divisor is made nonzero for integers (ONNX leaves
/// integer division by zero undefined; ONNX Runtime traps), a base positive for `Pow`.
pub fn binary_cases(op: &OpSchema) -> Vec<String> {
    let name = op.op_type;
    let wrap = |d: DType, b: &str| match name {
        "Div" if d != DType::F32 && d != DType::F64 => format!("Add(Abs({b}), {})", one_of(d)),
        _ => b.to_string(),
    };
    let lhs = |a: &str| match name {
        "Pow" => format!("Abs({a})"),
        _ => a.to_string(),
    };
    let mut out = Vec::new();
    for (i, &d) in op.dtypes.iter().enumerate() {
        let call = |a: &str, b: &str| format!("{name}({}, {})", lhs(a), wrap(d, b));
        out.push(format!(
            "input a: {d}[2, 3, 4]; input b: {d}[4]; output y = {};",
            call("a", "b")
        ));
        if i == 0 {
            out.push(format!(
                "input a: {d}[3, 1]; input b: {d}[1, 5]; output y = {};",
                call("a", "b")
            ));
            out.push(format!(
                "input a: {d}[2, 5]; input b: {d}[2, 5]; output y = {}; output z = {};",
                call("a", "b"),
                call("b", "a")
            ));
            out.push(format!(
                "input a: {d}[]; input b: {d}[2, 1, 3]; output y = {};",
                call("b", "a")
            ));
        }
    }
    out
}

/// Cases of an element-wise unary operator: every dtype on a 3-D input, and the first
/// dtype on a scalar and on a size-1 dimension. `pre` wraps the input (`Abs` for the
/// operators defined on non-negative numbers).
pub fn unary_cases(op: &OpSchema, pre: Option<&str>) -> Vec<String> {
    let name = op.op_type;
    let x = |v: &str| pre.map_or(v.to_string(), |p| format!("{p}({v})"));
    let mut out: Vec<String> = op
        .dtypes
        .iter()
        .map(|d| format!("input x: {d}[2, 3, 4]; output y = {name}({});", x("x")))
        .collect();
    let d = op.dtypes[0];
    out.push(format!(
        "input x: {d}[]; input z: {d}[5, 1]; output y = {name}({}); output w = {name}({});",
        x("x"),
        x("z")
    ));
    out
}

/// The integer element types (the bitwise operators take these).
pub const INTEGERS: &[DType] = &[
    DType::I64,
    DType::I32,
    DType::I16,
    DType::I8,
    DType::U64,
    DType::U32,
    DType::U16,
    DType::U8,
];

/// The numeric element types most operators take: the first six of [`NUMERIC_WIDE`].
pub const NUMERIC: &[DType] = NUMERIC_WIDE.split_at(6).0;

/// [`NUMERIC`] and the integer widths fewer operators take (ONNX Runtime computes the
/// arithmetic and the comparisons on them).
pub const NUMERIC_WIDE: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::I64,
    DType::I32,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::U32,
    DType::U64,
];

/// Every element type the DSL knows.
pub const ALL_DTYPES: &[DType] = &DType::ALL;

/// `Add`, `Sub`, `Mul` and `Div` accept i8, u8, i16 and u16 from opset 14.
pub const SMALL_INTS_FROM_14: &[(DType, i64)] = &[
    (DType::I8, 14),
    (DType::U8, 14),
    (DType::I16, 14),
    (DType::U16, 14),
];

/// The dtype rule of one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InTy {
    /// The operator's element type: one of `OpSchema::dtypes`, shared by all `T` inputs.
    T,
    /// int64 (shapes, axes), which must be known at compile time.
    I64Const,
    /// bool (`Where`'s condition), independent of the operator's element type.
    Bool,
    /// Any element type, independent of the other inputs (custom operators).
    Any,
    /// Any element type, known at compile time (Resize's scales).
    Const,
}

/// One input of an operator.
#[derive(Debug)]
pub struct InputSpec {
    pub name: &'static str,
    pub optional: bool,
    pub ty: InTy,
}

/// A required input of the operator's element type.
pub const fn input(name: &'static str) -> InputSpec {
    InputSpec {
        name,
        optional: false,
        ty: InTy::T,
    }
}

/// An optional input of the operator's element type.
pub const fn optional(name: &'static str) -> InputSpec {
    InputSpec {
        name,
        optional: true,
        ty: InTy::T,
    }
}

/// A required bool input (a condition).
pub const fn bool_input(name: &'static str) -> InputSpec {
    InputSpec {
        name,
        optional: false,
        ty: InTy::Bool,
    }
}

/// An int64 input known at compile time (`optional` when it may be omitted).
pub const fn i64_const(name: &'static str, optional: bool) -> InputSpec {
    InputSpec {
        name,
        optional,
        ty: InTy::I64Const,
    }
}

/// An input of any element type, read at run time (`optional` when it may be omitted);
/// the operator's inference checks its type.
pub const fn any_input(name: &'static str, optional: bool) -> InputSpec {
    InputSpec {
        name,
        optional,
        ty: InTy::Any,
    }
}

/// An input of any element type known at compile time (`optional` when it may be
/// omitted); the operator's inference checks its type.
pub const fn any_const(name: &'static str, optional: bool) -> InputSpec {
    InputSpec {
        name,
        optional,
        ty: InTy::Const,
    }
}

impl OpSchema {
    /// Number of required inputs.
    pub fn min_inputs(&self) -> usize {
        self.inputs.iter().filter(|i| !i.optional).count()
    }

    /// Looks an attribute spec up by name.
    pub fn attr(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// `A, B, C` for messages.
    pub fn input_names(&self) -> String {
        let mut names: Vec<String> = self.inputs.iter().map(|i| i.name.to_string()).collect();
        if self.variadic
            && let Some(last) = names.last_mut()
        {
            last.push_str("...");
        }
        names.join(", ")
    }

    /// The spec of positional input `i`: the last one repeats for a variadic operator;
    /// `None` past the end.
    pub fn input_spec(&self, i: usize) -> Option<&InputSpec> {
        match self.inputs.get(i) {
            Some(s) => Some(s),
            None if self.variadic => self.inputs.last(),
            None => None,
        }
    }

    /// The name of output `i`.
    pub fn output_name(&self, i: usize) -> &'static str {
        self.output_names.get(i).copied().unwrap_or("output")
    }
}

/// The kind of an attribute, as ONNX's `AttributeType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Int,
    Float,
    Ints,
    Floats,
    Str,
    Strs,
}

impl AttrKind {
    /// A phrase for messages.
    pub fn describe(self) -> &'static str {
        match self {
            AttrKind::Int => "an integer",
            AttrKind::Float => "a float",
            AttrKind::Ints => "a list of integers",
            AttrKind::Floats => "a list of floats",
            AttrKind::Str => "a string",
            AttrKind::Strs => "a list of strings",
        }
    }
}

/// The default of an attribute.
#[derive(Clone, Copy, Debug)]
pub enum AttrDefault {
    Required,
    /// Optional, with no default value (its absence means something, e.g. `pads`).
    Absent,
    Int(i64),
    Float(f32),
    Str(&'static str),
}

impl AttrDefault {
    /// The default as a value, if there is one.
    pub fn value(self) -> Option<AttrValue> {
        match self {
            AttrDefault::Required | AttrDefault::Absent => None,
            AttrDefault::Int(v) => Some(AttrValue::Int(v)),
            AttrDefault::Float(v) => Some(AttrValue::Float(v)),
            AttrDefault::Str(v) => Some(AttrValue::Str(v.to_string())),
        }
    }
}

/// An attribute spec.
pub const fn attr(name: &'static str, kind: AttrKind, default: AttrDefault) -> AttrSpec {
    AttrSpec {
        name,
        kind,
        default,
        since: 1,
        until: i64::MAX,
    }
}

/// One attribute of an operator.
#[derive(Debug, Clone, Copy)]
pub struct AttrSpec {
    pub name: &'static str,
    pub kind: AttrKind,
    pub default: AttrDefault,
    /// The first opset whose schema of the operator has the attribute (writing it in a
    /// lower one is an error naming this opset).
    pub since: i64,
    /// The last opset that has it (the operator's own check explains what replaced it).
    pub until: i64,
}

impl AttrSpec {
    /// The attribute exists from opset `v`.
    pub const fn since(mut self, v: i64) -> Self {
        self.since = v;
        self
    }

    /// The attribute exists up to opset `v`.
    pub const fn until(mut self, v: i64) -> Self {
        self.until = v;
        self
    }
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Int(i64),
    Float(f32),
    Ints(Vec<i64>),
    Floats(Vec<f32>),
    Str(String),
    Strs(Vec<String>),
}

/// Resolved attributes of one node: what the user wrote, then the defaults.
#[derive(Clone, Debug, Default)]
pub struct Attrs {
    /// Attributes written by the user, in the schema's order (these go into the ONNX).
    pub explicit: Vec<(&'static str, AttrValue)>,
    /// Defaults of the attributes the user did not write.
    pub defaults: Vec<(&'static str, AttrValue)>,
}

impl Attrs {
    /// The value of an attribute, explicit or default.
    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.explicit
            .iter()
            .chain(&self.defaults)
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// An integer attribute the schema gives a default for.
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Some(AttrValue::Int(v)) => *v,
            other => panic!("bug: attribute `{name}` is not an integer: {other:?}"),
        }
    }

    /// A float attribute the schema gives a default for.
    pub fn float(&self, name: &str) -> f32 {
        match self.get(name) {
            Some(AttrValue::Float(v)) => *v,
            other => panic!("bug: attribute `{name}` is not a float: {other:?}"),
        }
    }

    /// An integer-list attribute, if present.
    pub fn ints(&self, name: &str) -> Option<&[i64]> {
        match self.get(name) {
            Some(AttrValue::Ints(v)) => Some(v),
            _ => None,
        }
    }

    /// A float-list attribute, if present.
    pub fn floats(&self, name: &str) -> Option<&[f32]> {
        match self.get(name) {
            Some(AttrValue::Floats(v)) => Some(v),
            _ => None,
        }
    }

    /// A string attribute, if present.
    pub fn string(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(AttrValue::Str(v)) => Some(v),
            _ => None,
        }
    }

    /// A string-list attribute, if present.
    pub fn strings(&self, name: &str) -> Option<&[String]> {
        match self.get(name) {
            Some(AttrValue::Strs(v)) => Some(v),
            _ => None,
        }
    }

    /// Whether the user wrote the attribute.
    pub fn is_explicit(&self, name: &str) -> bool {
        self.explicit.iter().any(|(n, _)| *n == name)
    }
}

/// Where an operator's error points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    Op,
    Input(usize),
    Attr(&'static str),
}

/// An inference error: where it points and what it says, and optionally a note at a
/// second place that disagrees with the first.
#[derive(Clone, Debug)]
pub struct OpError {
    pub at: At,
    pub msg: String,
    pub note: Option<(At, String)>,
}

impl OpError {
    /// An error about the operator as a whole.
    pub fn op(msg: impl Into<String>) -> OpError {
        OpError {
            at: At::Op,
            msg: msg.into(),
            note: None,
        }
    }

    /// An error about input `i`.
    pub fn input(i: usize, msg: impl Into<String>) -> OpError {
        OpError {
            at: At::Input(i),
            msg: msg.into(),
            note: None,
        }
    }

    /// An error about an attribute.
    pub fn attr(name: &'static str, msg: impl Into<String>) -> OpError {
        OpError {
            at: At::Attr(name),
            msg: msg.into(),
            note: None,
        }
    }

    /// Adds a note at a second place.
    pub fn with_note(mut self, at: At, msg: impl Into<String>) -> OpError {
        self.note = Some((at, msg.into()));
        self
    }
}

/// What inference sees of one node.
#[derive(Debug)]
pub struct InferCtx<'a> {
    pub op: &'static OpSchema,
    /// Input types in ONNX order; `None` for an omitted optional input.
    pub inputs: Vec<Option<&'a TensorType>>,
    /// Input values known at compile time (weights, folded constants).
    pub consts: Vec<Option<&'a Data>>,
    pub attrs: &'a Attrs,
    pub opset: i64,
}

impl InferCtx<'_> {
    /// A required input (arity was checked before inference runs).
    pub fn input(&self, i: usize) -> &TensorType {
        self.inputs[i].expect("bug: required input missing after the arity check")
    }

    /// An optional input, if given.
    pub fn opt_input(&self, i: usize) -> Option<&TensorType> {
        self.inputs.get(i).copied().flatten()
    }

    /// The compile-time int64 values of input `i`, if it was given.
    pub fn const_i64(&self, i: usize) -> Option<&[i64]> {
        self.consts.get(i).copied().flatten().and_then(Data::as_i64)
    }
}

/// An operand of a lowered node: a slice expression and the device shape.
#[derive(Debug, Clone)]
pub struct Operand {
    /// Evaluates to `&[T]` (inputs) or `&mut [T]` (outputs).
    pub expr: TokenStream,
    /// The shape on the device (symbolic dimensions resolved).
    pub shape: Vec<usize>,
    /// The element type.
    pub dtype: DType,
}

impl Operand {
    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

/// What lowering sees of one node.
#[derive(Debug)]
pub struct LowerCtx<'a> {
    pub inputs: Vec<Option<Operand>>,
    pub outputs: Vec<Operand>,
    /// Output 0 is the buffer of input `OpSchema::inplace`; that input's `expr` must not be used.
    pub inplace: bool,
    pub attrs: &'a Attrs,
    /// The scratch region (`OpSchema::scratch` elements), when the operator asked for one.
    pub scratch: Option<Operand>,
    /// The same region's byte offset in the arena and length in bytes, for a kernel
    /// that keeps other than f32 values in it (see [`LowerCtx::scratch_of`]).
    pub scratch_bytes: Option<(usize, usize)>,
    /// Compile-time values of the inputs and outputs (weights, folded constants).
    pub input_consts: Vec<Option<&'a Data>>,
    pub output_consts: Vec<Option<&'a Data>>,
    /// Work fused into this node's kernel by the planner (folded BatchNormalization, Relu).
    pub epilogue: &'a Epilogue,
    /// The values of `epilogue.bias`.
    pub epilogue_bias: Option<&'a [f32]>,
    /// As [`ScratchCtx::winograd`].
    pub winograd: u8,
    /// The node calls its kernel's `_shared` form ([`OpSchema::sized_kernel`]).
    pub sized: bool,
    /// The model's `optimize = size`: a `_shared` form takes the copy sized at run
    /// time on every core (its last generic argument, see [`LowerCtx::small`]).
    pub optimize_size: bool,
    /// The model's opset (for defaults that changed between opsets).
    pub opset: i64,
}

/// Element-wise work the planner fused into a node's kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Epilogue {
    /// `y = max(y, 0)` on the output (a following Relu, which then emits nothing).
    pub relu: bool,
    /// `y += bias` along the last axis, before the Relu (a following `Add` of a constant
    /// vector, which then emits nothing).
    pub bias: Option<crate::data::TensorId>,
}

impl LowerCtx<'_> {
    /// The kernel function `name`, or its `_shared` form for a node the plan marks
    /// ([`LowerCtx::sized`]).
    pub fn kernel_fn(&self, name: &str) -> proc_macro2::Ident {
        let name = if self.sized {
            format!("{name}_shared")
        } else {
            name.to_string()
        };
        proc_macro2::Ident::new(&name, proc_macro2::Span::call_site())
    }

    /// The last generic argument of a `_shared` call: whether the model asked for
    /// flash over speed. Nothing for a node that calls its constant copy.
    pub fn small(&self) -> Option<bool> {
        self.sized.then_some(self.optimize_size)
    }

    /// The compile-time int64 values of input `i`, when it has them.
    pub fn const_i64(&self, i: usize) -> Option<&[i64]> {
        self.input_consts
            .get(i)
            .copied()
            .flatten()
            .and_then(Data::as_i64)
    }

    /// The compile-time values of input `i` as f64, when it has them.
    pub fn const_f64(&self, i: usize) -> Option<Vec<f64>> {
        self.input_consts
            .get(i)
            .copied()
            .flatten()
            .map(Data::to_f64)
    }

    /// The scratch region as a slice of `elem`, a one-byte integer type (whose every
    /// bit pattern is a value and whose alignment any offset meets).
    pub fn scratch_of(&self, elem: TokenStream) -> Option<TokenStream> {
        let (offset, bytes) = self.scratch_bytes?;
        // Safety (of the generated call): `region_mut`'s contract holds, as for the f32
        // view of the same region: the planner placed these `bytes` inside the arena for
        // this call alone (no other view overlaps them while it runs); a one-byte type
        // has alignment 1, and every byte of the arena is a value of it.
        Some(quote! {
            unsafe { ::tinyonnx::__export::region_mut::<#elem>(__base, #offset, #bytes) }
        })
    }

    /// `Some(input i)` or `None` in generated code, for an optional input.
    pub fn opt_expr(&self, i: usize) -> TokenStream {
        match self.inputs.get(i).and_then(Option::as_ref) {
            Some(o) => {
                let e = &o.expr;
                quote!(::core::option::Option::Some(#e))
            }
            None => quote!(::core::option::Option::None),
        }
    }

    /// A required input operand.
    pub fn input(&self, i: usize) -> &Operand {
        self.inputs[i]
            .as_ref()
            .expect("bug: required input missing in lowering")
    }
}

/// The element type of an operand in generated code (`f32`, `i64`, ...).
pub fn elem(dtype: DType) -> proc_macro2::Ident {
    proc_macro2::Ident::new(dtype.name(), proc_macro2::Span::call_site())
}

/// The `TensorRef`/`TensorMut` variant of a dtype in generated code (`F32`, `Bool`, ...).
pub fn variant(dtype: DType) -> proc_macro2::Ident {
    let name = dtype.name();
    let mut v = name[..1].to_uppercase();
    v.push_str(&name[1..]);
    proc_macro2::Ident::new(&v, proc_macro2::Span::call_site())
}

/// A tensor type as text (`f32:2,3`; `i64:` for a scalar), for hidden attributes.
pub fn encode_type(t: &TensorType) -> String {
    let dims: Vec<String> = t.shape.0.iter().map(ToString::to_string).collect();
    format!("{}:{}", t.dtype.name(), dims.join(","))
}

/// The inverse of [`encode_type`].
pub fn decode_type(s: &str) -> TensorType {
    let (d, dims) = s.split_once(':').expect("bug: an encoded type has a colon");
    let dims = dims
        .split(',')
        .filter(|x| !x.is_empty())
        .map(|x| match x.parse::<usize>() {
            Ok(n) => crate::types::Dim::Fixed(n),
            Err(_) => crate::types::Dim::Sym(x.to_string()),
        })
        .collect();
    TensorType {
        dtype: DType::from_name(d).expect("bug: an encoded dtype is known"),
        shape: crate::types::Shape(dims),
    }
}

/// The path of the kernels module in generated code.
pub fn kernels() -> TokenStream {
    quote!(::tinyonnx::__export::kernels)
}

/// The lowering of an operator that always folds: its output's values copied in.
pub fn lower_const(cx: &LowerCtx) -> TokenStream {
    let y = &cx.outputs[0].expr;
    let Some(d) = cx.output_consts.first().copied().flatten() else {
        unreachable!("bug: the operator always folds")
    };
    let float = |v: f64, t: &TokenStream| {
        if v.is_nan() {
            quote!(<#t>::NAN)
        } else if v.is_infinite() {
            if v > 0.0 {
                quote!(<#t>::INFINITY)
            } else {
                quote!(<#t>::NEG_INFINITY)
            }
        } else {
            quote!(#v as #t)
        }
    };
    let t = elem(d.dtype());
    let t = quote!(#t);
    let values: Vec<TokenStream> = match (d, d.dtype()) {
        (Data::I64(v), _) => v.iter().map(|x| quote!(#x)).collect(),
        (_, DType::F32 | DType::F64) => d.to_f64().into_iter().map(|v| float(v, &t)).collect(),
        (_, DType::Bool) => d
            .to_f64()
            .into_iter()
            .map(|v| {
                let b = v != 0.0;
                quote!(#b)
            })
            .collect(),
        _ => d
            .to_f64()
            .into_iter()
            .map(|v| {
                let l = proc_macro2::Literal::i128_unsuffixed(v as i128);
                quote!(#l)
            })
            .collect(),
    };
    quote! { <[#t]>::copy_from_slice(#y, &[#(#values),*]); }
}

/// `MACs` of an operator that only moves data.
pub fn no_macs(_: &LowerCtx) -> u64 {
    0
}

/// `MACs` of an element-wise operator: one per output element.
pub fn elementwise_macs(cx: &LowerCtx) -> u64 {
    cx.outputs[0].numel() as u64
}

/// The axes in compile-time int64 input `i` of a node (checked against `rank`, negative
/// ones counted from the end, no repeats), or `0..min(default_count, rank)` when the
/// input is absent.
pub fn const_axes(
    cx: &InferCtx,
    i: usize,
    rank: usize,
    default_count: usize,
) -> Result<Vec<usize>, OpError> {
    let op = cx.op.op_type;
    let Some(axes) = cx.const_i64(i) else {
        return Ok((0..default_count.min(rank)).collect());
    };
    let r = rank as i64;
    let mut out = Vec::new();
    for &a in axes {
        if a < -r || a >= r {
            return Err(OpError::input(
                i,
                format!(
                    "{op} axis {a} is out of range for rank {rank}: expected {}..={}",
                    -r,
                    r - 1
                ),
            ));
        }
        let a = if a < 0 { a + r } else { a } as usize;
        if out.contains(&a) {
            return Err(OpError::input(
                i,
                format!("{op} axes {axes:?} repeat axis {a}"),
            ));
        }
        out.push(a);
    }
    Ok(out)
}

/// A 0/1 integer attribute as a bool (an error naming the operator otherwise).
pub fn flag(cx: &InferCtx, name: &'static str) -> Result<bool, OpError> {
    match cx.attrs.int(name) {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(OpError::attr(
            name,
            format!("{} {name} must be 0 or 1, got {v}", cx.op.op_type),
        )),
    }
}

/// Rejects out-of-range axes; returns the axis counted from the front.
pub fn normalize_axis(
    op: &str,
    axis: i64,
    rank: usize,
    attr: &'static str,
) -> Result<usize, OpError> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        let lo = -r;
        let hi = r - 1;
        return Err(OpError::attr(
            attr,
            format!(
                "{op} {attr} = {axis} is out of range for a rank-{rank} input: expected {lo}..={hi}"
            ),
        ));
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}

/// Columns of one packed panel, as the runtime's kernels read them.
pub const PANEL: usize = tinyonnx_layout::NR;

/// Packs `B[K, N]` (element `(k, j)` from `b`) into the panels `kernels::packed` reads:
/// `ceil(N / PANEL)` panels of `[K][PANEL]`, the last one padded with zeros.
pub fn pack_panels(k: usize, n: usize, b: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    let panels = n.div_ceil(PANEL);
    let mut out = vec![0.0; panels * k * PANEL];
    for p in 0..panels {
        for kk in 0..k {
            for j in 0..PANEL.min(n - p * PANEL) {
                out[(p * k + kk) * PANEL + j] = b(kk, p * PANEL + j);
            }
        }
    }
    out
}

/// Output columns below which a constant `B` is stored transposed and each output is a
/// dot product (`kernels::dot`): panels of `PANEL` columns would be mostly padding.
pub const DOT_BELOW: usize = 4;

/// A constant `B[K, N]` (element `(k, j)` from `b`) laid out for its kernel.
#[derive(Debug)]
pub enum ConstB {
    /// Panels of `PANEL` columns (`kernels::packed::gemm_packed`).
    Panels(Vec<f32>),
    /// `B` transposed, `N` rows of `K` (`kernels::dot::gemm_dot`).
    Rows(Vec<f32>),
    /// The whole panels of the first `full` columns, then the last
    /// `tinyonnx_layout::narrow_cols(N)` columns as one block `[K][N - full]`
    /// (`kernels::dot::gemm_narrow`), no padding stored.
    Narrow {
        panels: Vec<f32>,
        rest: Vec<f32>,
        full: usize,
    },
    /// Last columns that only the FPU microcontrollers keep as a narrow block
    /// (`tinyonnx_layout::NARROW_MAX_FPU`): both layouts, of which the runtime's
    /// `__narrow_wide!` keeps its target's.
    PerTarget {
        narrow: Box<ConstB>,
        panels: Box<ConstB>,
    },
}

impl ConstB {
    /// The layout for `N` columns: rows below [`DOT_BELOW`], else panels with a narrow
    /// block for the last columns where `tinyonnx_layout::narrow_cols` keeps one, both
    /// layouts where only `tinyonnx_layout::NARROW_MAX_FPU` does.
    pub fn new(k: usize, n: usize, b: impl Fn(usize, usize) -> f32) -> ConstB {
        use tinyonnx_layout::{NARROW_MAX, NARROW_MAX_FPU, narrow_cols, narrow_cols_within};
        if n >= DOT_BELOW && narrow_cols(n) != narrow_cols_within(n, NARROW_MAX_FPU) {
            return ConstB::PerTarget {
                narrow: Box::new(ConstB::within(k, n, &b, NARROW_MAX_FPU)),
                panels: Box::new(ConstB::within(k, n, &b, NARROW_MAX)),
            };
        }
        ConstB::within(k, n, b, NARROW_MAX)
    }

    /// The layout for `N` columns with narrow blocks of up to `max` columns.
    fn within(k: usize, n: usize, b: impl Fn(usize, usize) -> f32, max: usize) -> ConstB {
        let narrow = tinyonnx_layout::narrow_cols_within(n, max);
        if n < DOT_BELOW {
            ConstB::Rows(
                (0..n)
                    .flat_map(|j| (0..k).map(move |kk| (j, kk)))
                    .map(|(j, kk)| b(kk, j))
                    .collect(),
            )
        } else if narrow > 0 {
            let full = n - narrow;
            let rest = (0..k)
                .flat_map(|kk| (full..n).map(move |j| (kk, j)))
                .map(|(kk, j)| b(kk, j))
                .collect();
            ConstB::Narrow {
                panels: pack_panels(k, full, &b),
                rest,
                full,
            }
        } else {
            ConstB::Panels(pack_panels(k, n, b))
        }
    }

    /// The static and the call of the product `y[rows, N] = act(init + a[rows, K] @ B)`
    /// (`a` with row stride `K`, `y` row-major).
    pub fn product(
        self,
        (rows, k, n): (usize, usize, usize),
        a: &TokenStream,
        init: &TokenStream,
        y: &TokenStream,
        relu: bool,
    ) -> TokenStream {
        let kernels = kernels();
        match self {
            ConstB::PerTarget { narrow, panels } => {
                let narrow = narrow.product((rows, k, n), a, init, y, relu);
                let panels = panels.product((rows, k, n), a, init, y, relu);
                quote::quote!(::tinyonnx::__narrow_wide!({ #narrow }, { #panels });)
            }
            ConstB::Panels(v) => {
                let (decl, b) = node_static("bp", v);
                quote::quote! {
                    #decl
                    #kernels::packed::gemm_packed((#rows, #k, #n), #a, #k, #b, #init, #y, (#n, 1), #relu);
                }
            }
            ConstB::Rows(v) => {
                let (decl, b) = node_static("bt", v);
                quote::quote! {
                    #decl
                    #kernels::dot::gemm_dot::<#k>((#rows, #n), #a, #b, #init, #y, #relu);
                }
            }
            ConstB::Narrow { panels, rest, full } => {
                let cols = n - full;
                let (rest_decl, br) = node_static("br", rest);
                let panels = (full > 0).then(|| {
                    let (decl, bp) = node_static("bp", panels);
                    quote::quote! {
                        #decl
                        #kernels::packed::gemm_packed((#rows, #k, #full), #a, #k, #bp, #init, #y, (#n, 1), #relu);
                    }
                });
                quote::quote! {
                    #panels
                    #rest_decl
                    #kernels::dot::gemm_narrow::<#cols>((#rows, #k, #n, #full), #a, #br, #init, #y, #relu);
                }
            }
        }
    }
}

/// A `static` in flash holding `values` for one node's kernel, and the expression of
/// its slice (`&[f32; len]`), for data the lowering lays out itself (packed panels).
pub fn node_static(tag: &str, values: Vec<f32>) -> (TokenStream, TokenStream) {
    node_static_data(tag, &Data::F32(values))
}

/// [`node_static`] for any compile-time data (`i64` index maps).
pub fn node_static_data(tag: &str, data: &Data) -> (TokenStream, TokenStream) {
    let stat = quote::format_ident!("__{}", tag.to_uppercase());
    let view = quote::format_ident!("__{}", tag);
    let decl = static_data(&stat, &view, data);
    (decl, quote!(&#view[..]))
}

/// A `static` of aligned little-endian bytes and a typed view of it named `view`.
pub fn static_data(
    stat: &proc_macro2::Ident,
    view: &proc_macro2::Ident,
    data: &Data,
) -> TokenStream {
    let bytes = data.le_bytes();
    let nbytes = bytes.len();
    let n = data.len();
    let lit = proc_macro2::Literal::byte_string(&bytes);
    let (elem, helper) = match data {
        Data::F32(_) => (quote!(f32), quote!(weights_f32)),
        Data::I64(_) => (quote!(i64), quote!(weights_i64)),
        Data::Typed { dtype, values } => {
            // Small-type weights as a typed array literal (bool has invalid bit patterns,
            // so it is never viewed from bytes).
            let elem = elem(*dtype);
            let lits = values.iter().map(|&v| match dtype {
                DType::F64 => quote!(#v),
                DType::Bool => {
                    let b = v != 0.0;
                    quote!(#b)
                }
                // Integers, exact in the f64: the array's element type types them.
                _ => {
                    let l = proc_macro2::Literal::i128_unsuffixed(v as i128);
                    quote!(#l)
                }
            });
            return quote! {
                static #stat: [#elem; #n] = [#(#lits),*];
                let #view: &'static [#elem; #n] = &#stat;
            };
        }
    };
    quote! {
        static #stat: ::tinyonnx::__export::Aligned<#nbytes> = ::tinyonnx::__export::Aligned(*#lit);
        let #view: &'static [#elem; #n] = ::tinyonnx::__export::#helper::<#nbytes, #n>(&#stat);
    }
}
