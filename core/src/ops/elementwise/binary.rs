//! `Add`, `Sub`, `Mul`, `Div`, `Pow`, the variadic `Min` and `Max`, the comparisons
//! (`Equal`, `Less`, `Greater`, `LessOrEqual`, `GreaterOrEqual`, to bool) and the logic
//! operators (`And`, `Or`, `Xor`): element-wise with numpy (multidirectional) broadcasting. Opset 14 for Add/Sub/Mul/Div and 15 for Pow add
//! only types over 13; the float semantics are equal.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{TensorType, broadcast, broadcast_strides};

const INPUTS: &[InputSpec] = &[input("A"), input("B")];

macro_rules! binary_op {
    ($static:ident, $name:literal, $dtypes:expr, $since:expr, $out:expr, $inplace:expr $(, $field:ident = $value:expr)*) => {
        pub static $static: OpSchema = OpSchema {
            $($field: $value,)*
            op_type: $name,
            inputs: INPUTS,
            dtypes: $dtypes,
            dtype_since: $since,
            inplace: $inplace,
            infer: |cx| infer(cx, $out),
            lower: |cx| lower(cx, $name),
            output_names: &["C"],
            cases: binary_cases,
            ..BASE
        };
    };
}

// An f32 sum (a residual connection) takes a following Relu; after a MatMul, an Add of a
// constant row vector becomes its bias.
binary_op!(
    ADD,
    "Add",
    NUMERIC_WIDE,
    SMALL_INTS_FROM_14,
    None,
    Some(0),
    fusion = Fusion {
        relu: &[DType::F32],
        ..Fusion::NONE
    },
    absorbed = Some(Absorbed::RowBias)
);
binary_op!(SUB, "Sub", NUMERIC_WIDE, SMALL_INTS_FROM_14, None, Some(0));
binary_op!(MUL, "Mul", NUMERIC_WIDE, SMALL_INTS_FROM_14, None, Some(0));
binary_op!(DIV, "Div", NUMERIC_WIDE, SMALL_INTS_FROM_14, None, Some(0));
binary_op!(
    POW,
    "Pow",
    &[DType::F32, DType::F64, DType::I32, DType::I64],
    &[],
    None,
    Some(0)
);
// Comparisons (opset 13; LessOrEqual and GreaterOrEqual since 12, Equal on bool since 11).
binary_op!(EQUAL, "Equal", ALL_DTYPES, &[], Some(DType::Bool), None);
binary_op!(LESS, "Less", NUMERIC_WIDE, &[], Some(DType::Bool), None);
binary_op!(
    GREATER,
    "Greater",
    NUMERIC_WIDE,
    &[],
    Some(DType::Bool),
    None
);
binary_op!(
    LESS_OR_EQUAL,
    "LessOrEqual",
    NUMERIC_WIDE,
    &[],
    Some(DType::Bool),
    None
);
binary_op!(
    GREATER_OR_EQUAL,
    "GreaterOrEqual",
    NUMERIC_WIDE,
    &[],
    Some(DType::Bool),
    None
);
// Logic (opset 7 semantics).
binary_op!(AND, "And", &[DType::Bool], &[], None, Some(0));
binary_op!(OR, "Or", &[DType::Bool], &[], None, Some(0));
binary_op!(XOR, "Xor", &[DType::Bool], &[], None, Some(0));

// Bitwise (opset 18).
binary_op!(
    BITWISE_AND,
    "BitwiseAnd",
    INTEGERS,
    &[],
    None,
    Some(0),
    since_opset = 18
);
binary_op!(
    BITWISE_OR,
    "BitwiseOr",
    INTEGERS,
    &[],
    None,
    Some(0),
    since_opset = 18
);
binary_op!(
    BITWISE_XOR,
    "BitwiseXor",
    INTEGERS,
    &[],
    None,
    Some(0),
    since_opset = 18
);

/// `Mod` (opset 13): `fmod = 0` takes the divisor's sign (integers only, as ONNX
/// requires), `fmod = 1` the dividend's (C's `fmod`).
pub static MOD: OpSchema = OpSchema {
    op_type: "Mod",
    inputs: INPUTS,
    dtypes: NUMERIC_WIDE,
    attrs: &[attr("fmod", AttrKind::Int, AttrDefault::Int(0))],
    since_opset: 10,
    inplace: Some(0),
    infer: |cx| {
        let fmod = cx.attrs.int("fmod");
        if !matches!(fmod, 0 | 1) {
            return Err(OpError::attr(
                "fmod",
                format!("Mod fmod must be 0 or 1, got {fmod}"),
            ));
        }
        if fmod == 0 && cx.input(0).dtype.is_float() {
            return Err(OpError::attr(
                "fmod",
                format!(
                    "Mod of {} needs fmod = 1 (ONNX defines fmod = 0 for integers only)",
                    cx.input(0).dtype
                ),
            ));
        }
        infer(cx, None)
    },
    lower: |cx| {
        lower(
            cx,
            if cx.attrs.int("fmod") == 1 {
                "Fmod"
            } else {
                "Mod"
            },
        )
    },
    cases: |op| {
        let mut c = Vec::new();
        for &d in op.dtypes {
            let one = one_of(d);
            let fmod = if d.is_float() { ", fmod = 1" } else { "" };
            // Divisors of both signs for the signed types; nonzero for every integer.
            let b = if d.is_float() {
                "b".to_string()
            } else {
                format!("Add(Abs(b), {one})")
            };
            c.push(format!(
                "input a: {d}[2, 3]; input b: {d}[3]; output y = Mod(a, {b}{fmod}); output z = Mod(Mul(a, {b}), {b}{fmod}); output w = Mod(a, {b}, fmod = 1);"
            ));
            if d.is_signed_int() {
                let neg = format!("Mul({b}, Cast(Constant(value_int = -1), to = {d}))");
                c.push(format!(
                    "input a: {d}[2, 3]; input b: {d}[2, 1]; output y = Mod(a, {neg}); output z = Mod(a, {neg}, fmod = 1);"
                ));
            }
        }
        c
    },
    ..BASE
};

/// `BitShift` (opset 11): `direction` "LEFT" or "RIGHT", on the unsigned types.
pub static BIT_SHIFT: OpSchema = OpSchema {
    op_type: "BitShift",
    inputs: &[input("X"), input("Y")],
    // ONNX Runtime has no u16 kernel.
    dtypes: &[DType::U8, DType::U32, DType::U64],
    attrs: &[attr("direction", AttrKind::Str, AttrDefault::Required)],
    since_opset: 11,
    inplace: Some(0),
    infer: |cx| match cx.attrs.string("direction") {
        Some("LEFT" | "RIGHT") => infer(cx, None),
        other => Err(OpError::attr(
            "direction",
            format!(
                "BitShift direction must be \"LEFT\" or \"RIGHT\", got \"{}\"",
                other.unwrap_or_default()
            ),
        )),
    },
    lower: |cx| {
        let left = cx.attrs.string("direction") == Some("LEFT");
        lower(cx, if left { "ShiftLeft" } else { "ShiftRight" })
    },
    cases: |op| {
        op.dtypes
            .iter()
            .map(|d| {
                let (three, four) = (
                    format!("Cast(Constant(value_int = 3), to = {d})"),
                    format!("Cast(Constant(value_int = 4), to = {d})"),
                );
                format!(
                    "input x: {d}[2, 3]; input s: {d}[3]; output l = BitShift(x, Div(s, {three}), direction = \"LEFT\"); output r = BitShift(Mul(x, x), Div(s, {four}), direction = \"RIGHT\");"
                )
            })
            .collect()
    },
    ..BASE
};

/// `PRelu` (opset 9 semantics): the slope broadcasts to X (unidirectionally).
pub static PRELU: OpSchema = OpSchema {
    op_type: "PRelu",
    inputs: &[input("X"), input("slope")],
    since_opset: 9,
    inplace: Some(0),
    infer: |cx| {
        let out = infer(cx, None)?;
        if out[0].shape != cx.input(0).shape {
            return Err(OpError::input(
                1,
                format!(
                    "PRelu slope {} must broadcast to X {} without growing it",
                    cx.input(1).shape,
                    cx.input(0).shape
                ),
            ));
        }
        Ok(out)
    },
    lower: |cx| lower(cx, "PRelu"),
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; weight s: f32[3, 1] = uniform(low = 0.0, high = 0.5, seed = 1); output y = PRelu(x, s);",
            "input x: f32[2, 3]; input s: f32[3]; output y = PRelu(x, s); output z = PRelu(x, Constant(value_float = 0.2));",
        ])
    },
    ..BASE
};

/// What ONNX Runtime computes `Min` and `Max` on: [`NUMERIC`], u32 and u64.
const MIN_MAX_DTYPES: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::I64,
    DType::I32,
    DType::I8,
    DType::U8,
    DType::U32,
    DType::U64,
];

/// `Min` and `Max` (opset 13): one or more inputs, broadcast together.
pub static MIN: OpSchema = OpSchema {
    op_type: "Min",
    inputs: &[input("data_0")],
    variadic: true,
    dtypes: MIN_MAX_DTYPES,
    inplace: Some(0),
    infer: infer_variadic,
    lower: |cx| lower_variadic(cx, "Min"),
    cases: |op| {
        let mut c = binary_cases(op);
        c.extend(cases(&[
            "input a: f32[3]; input b: f32[2, 3]; input c: f32[2, 1]; output y = Min(a, b, c); output z = Min(a);",
            "input a: i64[2, 1]; input b: i64[1, 4]; input c: i64[]; output y = Min(a, b, c);",
        ]));
        c
    },
    output_names: &["min"],
    ..BASE
};

/// See [`MIN`].
pub static MAX: OpSchema = OpSchema {
    op_type: "Max",
    inputs: &[input("data_0")],
    variadic: true,
    dtypes: MIN_MAX_DTYPES,
    inplace: Some(0),
    infer: infer_variadic,
    lower: |cx| lower_variadic(cx, "Max"),
    cases: |op| {
        let mut c = binary_cases(op);
        c.extend(cases(&[
            "input a: f32[3]; input b: f32[2, 3]; input c: f32[2, 1]; output y = Max(a, b, c); output z = Max(a);",
            "input a: i64[2, 1]; input b: i64[1, 4]; input c: i64[]; output y = Max(a, b, c);",
        ]));
        c
    },
    output_names: &["max"],
    ..BASE
};

fn infer_variadic(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let first = cx.input(0);
    let mut shape = first.shape.clone();
    for i in 1..cx.inputs.len() {
        let t = cx.input(i);
        shape = broadcast(&shape, &t.shape).ok_or_else(|| {
            OpError::input(
                i,
                format!(
                    "{} cannot broadcast input {i} {} with the inputs before it ({shape})",
                    cx.op.op_type, t.shape
                ),
            )
        })?;
    }
    Ok(vec![TensorType {
        dtype: first.dtype,
        shape,
    }])
}

/// The first two inputs into the output (or input 0's buffer), then each further input
/// folded in place.
fn lower_variadic(cx: &LowerCtx, kernel: &str) -> TokenStream {
    let op = Ident::new(kernel, Span::call_site());
    let kernels = kernels();
    let out = &cx.outputs[0];
    let shape = &out.shape;
    let rank = shape.len();
    let y = &out.expr;
    let fold = |i: usize| inplace(&op, y, cx.input(i), shape);
    let n = cx.inputs.len();
    let first = if cx.inplace {
        TokenStream::new()
    } else {
        // Broadcast input 0 into the output: max(x, x) = x.
        let a = cx.input(0);
        let (e, s) = (&a.expr, broadcast_strides(&a.shape, shape));
        quote! { #kernels::binary::binary::<#kernels::binary::#op, _, #rank>(#e, &[#(#s),*], #e, &[#(#s),*], #y, &[#(#shape),*]); }
    };
    let rest = (1..n).map(fold);
    quote! { #first #(#rest)* }
}

/// `y = y (op) b`. Where `b` has the output's size (size-1 axes aside) or is one value,
/// one flat pass: the strided kernel's row loop over constant shapes is one LLVM unrolls
/// whole on a microcontroller (ten copies of the row for a `[1, 10, 64]` residual Add).
fn inplace(op: &Ident, y: &TokenStream, b: &Operand, shape: &[usize]) -> TokenStream {
    let kernels = kernels();
    let b_expr = &b.expr;
    let n: usize = shape.iter().product();
    if b.numel() == n {
        return quote! { #kernels::binary::binary_same_inplace::<#kernels::binary::#op, _>(#y, #b_expr); };
    }
    if b.numel() == 1 {
        return quote! { #kernels::binary::binary_scalar_inplace::<#kernels::binary::#op, _>(#y, (#b_expr)[0]); };
    }
    let b_str = broadcast_strides(&b.shape, shape);
    let rank = shape.len();
    quote! {
        #kernels::binary::binary_inplace::<#kernels::binary::#op, _, #rank>(#y, #b_expr, &[#(#b_str),*], &[#(#shape),*]);
    }
}

/// Broadcasts A with B; the output has `out` as dtype, or A's.
fn infer(cx: &InferCtx, out: Option<DType>) -> Result<Vec<TensorType>, OpError> {
    let a = cx.input(0);
    let b = cx.input(1);
    match broadcast(&a.shape, &b.shape) {
        Some(shape) => Ok(vec![TensorType {
            dtype: out.unwrap_or(a.dtype),
            shape,
        }]),
        None => Err(OpError::input(
            1,
            format!(
                "{} cannot broadcast A {} with B {}",
                cx.op.op_type, a.shape, b.shape
            ),
        )
        .with_note(At::Input(0), format!("A is {}", a.shape))),
    }
}

fn lower(cx: &LowerCtx, kernel: &str) -> TokenStream {
    // A Relu fused into an f32 `Add` (see `fuse`): one pass for both.
    let kernel = if cx.epilogue.relu { "AddRelu" } else { kernel };
    let op = Ident::new(kernel, Span::call_site());
    let kernels = kernels();
    let out = &cx.outputs[0];
    let y = &out.expr;
    let b = cx.input(1);
    let b_expr = &b.expr;
    let b_str = broadcast_strides(&b.shape, &out.shape);
    let shape = &out.shape;
    let rank = shape.len();
    if cx.inplace {
        return inplace(&op, y, b, shape);
    }
    let a = cx.input(0);
    let a_expr = &a.expr;
    if a.numel() == out.numel() && b.numel() == out.numel() {
        return quote! {
            #kernels::binary::binary_same::<#kernels::binary::#op, _>(#a_expr, #b_expr, #y);
        };
    }
    if a.numel() == out.numel() && b.numel() == 1 {
        return quote! {
            #kernels::binary::binary_scalar::<#kernels::binary::#op, _>(#a_expr, (#b_expr)[0], #y);
        };
    }
    let a_str = broadcast_strides(&a.shape, &out.shape);
    quote! {
        #kernels::binary::binary::<#kernels::binary::#op, _, #rank>(#a_expr, &[#(#a_str),*], #b_expr, &[#(#b_str),*], #y, &[#(#shape),*]);
    }
}
