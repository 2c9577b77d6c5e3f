//! The operator registry. Each operator lives in its own file as one [`OpSchema`]:
//! its ONNX name, inputs, attributes with defaults, opset range, dtypes, shape and
//! dtype inference, and its lowering to a kernel call. Adding one touches its file
//! and one line of [`REGISTRY`].

use proc_macro2::TokenStream;
use quote::quote;

use crate::types::{DType, TensorType};

mod binary;
mod gemm;
mod matmul;
mod softmax;
mod unary;

/// Every operator the DSL knows under its ONNX name.
pub static REGISTRY: &[&OpSchema] = &[
    &binary::ADD,
    &binary::SUB,
    &binary::MUL,
    &binary::DIV,
    &gemm::GEMM,
    &matmul::MATMUL,
    &unary::IDENTITY,
    &unary::RELU,
    &unary::SIGMOID,
    &unary::TANH,
    &softmax::SOFTMAX,
];

/// Looks an operator up by its exact ONNX name.
pub fn lookup(name: &str) -> Option<&'static OpSchema> {
    REGISTRY.iter().copied().find(|op| op.op_type == name)
}

/// The lowest and highest default-domain opsets tinyonnx accepts.
pub const MIN_OPSET: i64 = 13;
/// See [`MIN_OPSET`]. ONNX Runtime 1.31 and onnx 1.23 both accept these.
pub const MAX_OPSET: i64 = 21;
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
    /// Output 0 may reuse the buffer of this input when that input dies here.
    pub inplace: Option<usize>,
    /// Shape and dtype inference.
    pub infer: fn(&InferCtx) -> Result<Vec<TensorType>, OpError>,
    /// The kernel call for one node.
    pub lower: fn(&LowerCtx) -> TokenStream,
    /// Multiply-accumulates (or elementary operations) for one inference, for reports.
    pub macs: fn(&LowerCtx) -> u64,
}

/// One input of an operator.
#[derive(Debug)]
pub struct InputSpec {
    pub name: &'static str,
    pub optional: bool,
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
        self.inputs
            .iter()
            .map(|i| i.name)
            .collect::<Vec<_>>()
            .join(", ")
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
        }
    }
}

/// The default of an attribute.
#[derive(Clone, Copy, Debug)]
pub enum AttrDefault {
    Required,
    Int(i64),
    Float(f32),
}

/// One attribute of an operator.
#[derive(Debug)]
pub struct AttrSpec {
    pub name: &'static str,
    pub kind: AttrKind,
    pub default: AttrDefault,
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Int(i64),
    Float(f32),
    Ints(Vec<i64>),
    Floats(Vec<f32>),
    Str(String),
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
}

/// Where an operator's error points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    Op,
    Input(usize),
    Attr(&'static str),
}

/// An inference error: where it points and what it says.
#[derive(Clone, Debug)]
pub struct OpError {
    pub at: At,
    pub msg: String,
}

impl OpError {
    /// An error about the operator as a whole.
    pub fn op(msg: impl Into<String>) -> OpError {
        OpError {
            at: At::Op,
            msg: msg.into(),
        }
    }

    /// An error about input `i`.
    pub fn input(i: usize, msg: impl Into<String>) -> OpError {
        OpError {
            at: At::Input(i),
            msg: msg.into(),
        }
    }

    /// An error about an attribute.
    pub fn attr(name: &'static str, msg: impl Into<String>) -> OpError {
        OpError {
            at: At::Attr(name),
            msg: msg.into(),
        }
    }
}

/// What inference sees of one node.
#[derive(Debug)]
pub struct InferCtx<'a> {
    pub op: &'static OpSchema,
    /// Input types in ONNX order; `None` for an omitted optional input.
    pub inputs: Vec<Option<&'a TensorType>>,
    pub attrs: &'a Attrs,
    pub opset: i64,
}

impl InferCtx<'_> {
    /// A required input (arity was checked before inference runs).
    pub fn input(&self, i: usize) -> &TensorType {
        self.inputs[i].expect("bug: required input missing after the arity check")
    }
}

/// An operand of a lowered node: a slice expression and the device shape.
#[derive(Debug, Clone)]
pub struct Operand {
    /// Evaluates to `&[T]` (inputs) or `&mut [T]` (outputs).
    pub expr: TokenStream,
    /// The shape on the device (symbolic dimensions resolved).
    pub shape: Vec<usize>,
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
}

impl LowerCtx<'_> {
    /// A required input operand.
    pub fn input(&self, i: usize) -> &Operand {
        self.inputs[i]
            .as_ref()
            .expect("bug: required input missing in lowering")
    }
}

/// The path of the kernels module in generated code.
pub fn kernels() -> TokenStream {
    quote!(::tinyonnx::__export::kernels)
}

/// `MACs` of an element-wise operator: one per output element.
pub fn elementwise_macs(cx: &LowerCtx) -> u64 {
    cx.outputs[0].numel() as u64
}

/// Rejects negative or out-of-range axes; returns the axis counted from the front.
pub fn normalize_axis(axis: i64, rank: usize, attr: &'static str) -> Result<usize, OpError> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        let lo = -r;
        let hi = r - 1;
        return Err(OpError::attr(
            attr,
            format!(
                "{attr} = {axis} is out of range for a rank-{rank} input: expected {lo}..={hi}"
            ),
        ));
    }
    Ok(if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    })
}
