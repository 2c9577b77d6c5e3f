//! `ReduceSum`, `ReduceMean`, `ReduceMax`, `ReduceMin`, `ReduceProd`, `ReduceL1`,
//! `ReduceL2`, `ReduceSumSquare`, `ReduceLogSum`, `ReduceLogSumExp`: `keepdims` (1),
//! `noop_with_empty_axes` (0). The axes follow the model's opset: an int64 input known at
//! compile time for `ReduceSum` (opset 13) and for the others from opset 18, the `axes`
//! attribute for the others before 18; the wrong form is an error naming the opset.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType};

/// `ReduceSum`, `ReduceMean` and `ReduceProd` (opset 13) take no 8-bit integers.
const WIDE: &[DType] = &[DType::F32, DType::F64, DType::I64, DType::I32];

macro_rules! reduce_op {
    ($static:ident, $name:literal, $kernel:literal, $dtypes:expr, $axes_input_since:literal) => {
        pub static $static: OpSchema = OpSchema {
            op_type: $name,
            dtypes: $dtypes,
            inputs: &[input("data"), i64_const("axes", true)],
            attrs: &[
                // The axes became an input, and noop_with_empty_axes appeared, in the
                // same opset.
                attr("axes", AttrKind::Ints, AttrDefault::Absent).until($axes_input_since - 1),
                attr("keepdims", AttrKind::Int, AttrDefault::Int(1)),
                attr("noop_with_empty_axes", AttrKind::Int, AttrDefault::Int(0))
                    .since($axes_input_since),
            ],
            output_names: &["reduced"],
            infer,
            fold: Some(fold_empty),
            lower: |cx| lower(cx, $kernel),
            cases: reduce_cases,
            macs: |cx| cx.input(0).numel() as u64,
            ..BASE
        };
    };
}

reduce_op!(REDUCE_SUM, "ReduceSum", "Sum", WIDE, 13);
reduce_op!(REDUCE_MEAN, "ReduceMean", "Mean", WIDE, 18);
reduce_op!(REDUCE_MAX, "ReduceMax", "Max", NUMERIC, 18);
reduce_op!(REDUCE_MIN, "ReduceMin", "Min", NUMERIC, 18);
reduce_op!(REDUCE_PROD, "ReduceProd", "Prod", WIDE, 18);
reduce_op!(REDUCE_L1, "ReduceL1", "SumAbs", WIDE, 18);
reduce_op!(REDUCE_SUM_SQUARE, "ReduceSumSquare", "SumSquare", WIDE, 18);
reduce_op!(REDUCE_L2, "ReduceL2", "L2", FLOATS, 18);
reduce_op!(REDUCE_LOG_SUM, "ReduceLogSum", "LogSum", FLOATS, 18);
reduce_op!(
    REDUCE_LOG_SUM_EXP,
    "ReduceLogSumExp",
    "LogSumExp",
    FLOATS,
    18
);

/// The norms and logarithms compute in the float types only.
const FLOATS: &[DType] = &[DType::F32, DType::F64];

/// The first opset where the axes of `op` are an input: the one after the last that
/// has the `axes` attribute (stated once, in `reduce_op!`).
fn axes_input_since(op: &OpSchema) -> i64 {
    op.attr("axes").map_or(MIN_OPSET, |a| a.until + 1)
}

/// The reduced axes (sorted), or `None` for a no-op (empty axes with
/// `noop_with_empty_axes = 1`).
fn axes(cx: &InferCtx) -> Result<Option<Vec<usize>>, OpError> {
    let op = cx.op.op_type;
    let rank = cx.input(0).shape.rank();
    let since = axes_input_since(cx.op);
    let as_input = cx.opt_input(1).is_some();
    let as_attr = cx.attrs.is_explicit("axes");
    if as_attr && cx.opset >= since {
        return Err(OpError::attr(
            "axes",
            format!(
                "{op} takes its axes as the second input from opset {since} (this model uses opset {}); pass them as an input",
                cx.opset
            ),
        ));
    }
    if as_input && cx.opset < since {
        return Err(OpError::input(
            1,
            format!(
                "{op} takes axes as an input only from opset {since} (this model uses opset {}); use the `axes` attribute",
                cx.opset
            ),
        ));
    }
    let given: Vec<i64> = if as_input {
        cx.const_i64(1).unwrap_or(&[]).to_vec()
    } else {
        cx.attrs.ints("axes").unwrap_or(&[]).to_vec()
    };
    if given.is_empty() {
        return Ok(if cx.attrs.int("noop_with_empty_axes") == 1 {
            None
        } else {
            Some((0..rank).collect())
        });
    }
    let mut out = Vec::new();
    for a in given {
        let at = if as_input {
            At::Input(1)
        } else {
            At::Attr("axes")
        };
        let r = rank as i64;
        if a < -r || a >= r {
            return Err(OpError {
                at,
                msg: format!(
                    "{op} axis {a} is out of range for a rank-{rank} input: expected {}..={}",
                    -r,
                    r - 1
                ),
                note: None,
            });
        }
        let a = if a < 0 { a + r } else { a } as usize;
        if out.contains(&a) {
            return Err(OpError {
                at,
                msg: format!("{op} repeats axis {a}"),
                note: None,
            });
        }
        out.push(a);
    }
    out.sort_unstable();
    Ok(Some(out))
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let keep = match cx.attrs.int("keepdims") {
        0 => false,
        1 => true,
        v => {
            return Err(OpError::attr(
                "keepdims",
                format!("keepdims must be 0 or 1, got {v}"),
            ));
        }
    };
    let Some(axes) = axes(cx)? else {
        return Ok(vec![x.clone()]);
    };
    let mut out = Vec::new();
    for (i, d) in x.shape.0.iter().enumerate() {
        if !axes.contains(&i) {
            out.push(d.clone());
        } else if keep {
            out.push(Dim::Fixed(1));
        }
    }
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out),
    }])
}

/// A reduction of a tensor with no elements: each output is the reduction over the
/// empty set, as the ONNX reference gives it (0 for the sums and norms, 1 for the
/// product, the type's lowest or highest value for max and min, -inf for the
/// log-sums), so no kernel runs. The mean of nothing is left unfolded (an error).
fn fold_empty(cx: &InferCtx) -> Result<Vec<Data>, OpError> {
    let x = cx.input(0);
    if !x.shape.0.iter().any(|d| d.fixed() == Some(0)) {
        return Ok(Vec::new());
    }
    let out = infer(cx)?.remove(0);
    let Some(n) = out
        .shape
        .0
        .iter()
        .map(Dim::fixed)
        .product::<Option<usize>>()
    else {
        return Ok(Vec::new());
    };
    let float = x.dtype.is_float();
    let (lo, hi) = match x.dtype {
        DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        DType::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        DType::I16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
        DType::I8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
        DType::U32 => (0.0, f64::from(u32::MAX)),
        DType::U16 => (0.0, f64::from(u16::MAX)),
        DType::U8 => (0.0, f64::from(u8::MAX)),
        _ if float => (f64::NEG_INFINITY, f64::INFINITY),
        // u64's largest value is not exact in the compiler's f64 values.
        _ => return Ok(Vec::new()),
    };
    let v = match cx.op.op_type {
        "ReduceSum" | "ReduceL1" | "ReduceL2" | "ReduceSumSquare" => 0.0,
        "ReduceProd" => 1.0,
        "ReduceMax" => lo,
        "ReduceMin" => hi,
        "ReduceLogSum" | "ReduceLogSumExp" => f64::NEG_INFINITY,
        _ => return Ok(Vec::new()),
    };
    Ok(vec![match x.dtype {
        DType::F32 => Data::F32(vec![v as f32; n]),
        DType::I64 => Data::I64(vec![
            match cx.op.op_type {
                "ReduceMax" => i64::MIN,
                "ReduceMin" => i64::MAX,
                _ => v as i64,
            };
            n
        ]),
        dtype => Data::Typed {
            dtype,
            values: vec![v; n],
        },
    }])
}

fn lower(cx: &LowerCtx, kernel: &str) -> TokenStream {
    let kernels = kernels();
    let x = cx.input(0);
    let y = &cx.outputs[0].expr;
    let xe = &x.expr;
    // Which axes were reduced: the output has the input's elements per kept axis.
    let reduced = match reduced_axes(cx) {
        Some(r) => r,
        // A no-op of a sum, product, mean or extreme is a copy; the others still map
        // each element (ReduceL1 gives |x|, ReduceSumSquare x^2), as ONNX Runtime does.
        None if matches!(kernel, "Sum" | "Mean" | "Prod" | "Max" | "Min") => {
            return quote! { #kernels::copy::copy(#y, #xe); };
        }
        None => Vec::new(),
    };
    let shape = &x.shape;
    let rank = shape.len();
    // Output strides over the kept axes (row-major), 0 on the reduced ones.
    let mut strides = vec![0usize; rank];
    let mut s = 1usize;
    for d in (0..rank).rev() {
        if !reduced.contains(&d) {
            strides[d] = s;
            s *= shape[d];
        }
    }
    let count: usize = reduced.iter().map(|&d| shape[d]).product();
    // The mean divides the sums by the count (integers: truncated, as ONNX Runtime).
    let divisor = if kernel == "Mean" { count } else { 1 };
    let op = Ident::new(
        if kernel == "Mean" { "Sum" } else { kernel },
        Span::call_site(),
    );
    quote! {
        #kernels::reduce::reduce::<#kernels::reduce::#op, _, #rank>(#xe, #y, &[#(#shape),*], &[#(#strides),*], #divisor);
    }
}

/// The reduced axes of a lowered node, `None` for a no-op (recomputed from the
/// attributes and the compile-time axes as inference did).
fn reduced_axes(cx: &LowerCtx) -> Option<Vec<usize>> {
    let rank = cx.input(0).shape.len();
    let given: Vec<i64> = match cx.input_consts.get(1).copied().flatten() {
        Some(d) => d.as_i64().unwrap_or(&[]).to_vec(),
        None => cx.attrs.ints("axes").unwrap_or(&[]).to_vec(),
    };
    if given.is_empty() {
        return (cx.attrs.int("noop_with_empty_axes") != 1).then(|| (0..rank).collect());
    }
    let r = rank as i64;
    Some(
        given
            .iter()
            .map(|&a| if a < 0 { a + r } else { a } as usize)
            .collect(),
    )
}

/// Per dtype one reduction over a negative axis; for f32 several axes with keepdims 0,
/// all axes, noop_with_empty_axes, a size-1 axis, and the attribute form of opset 17.
fn reduce_cases(op: &OpSchema) -> Vec<String> {
    let name = op.op_type;
    // ReduceProd of many values around 1 stays well scaled.
    let x = |v: &str| {
        match name {
            "ReduceProd" => format!("Add(Mul({v}, 0.5), 1.0)"),
            // A positive sum for the logarithm.
            "ReduceLogSum" => format!("Add(Abs({v}), 0.01)"),
            // Large enough that e^x overflows f32 when summed naively.
            "ReduceLogSumExp" => format!("Mul({v}, 100.0)"),
            _ => v.to_string(),
        }
    };
    let mut c: Vec<String> = op
        .dtypes
        .iter()
        .map(|d| {
            let v = if *d == DType::F32 || name == "ReduceLogSum" {
                x("x")
            } else {
                "x".to_string()
            };
            format!("opset = 18; input x: {d}[2, 3, 4]; output y = {name}({v}, [-1]);")
        })
        .collect();
    let xf = x("x");
    c.push(format!(
        "opset = 18; input x: f32[2, 3, 4]; output y = {name}({xf}, [0, -1], keepdims = 0); output z = {name}({xf}, keepdims = 0); output w = {name}({xf}, noop_with_empty_axes = 1);"
    ));
    c.push(format!(
        "opset = 18; input x: f32[3, 1, 2]; output y = {name}({xf}, [1]); output z = {name}({xf});"
    ));
    let axes = if name == "ReduceSum" {
        "[1]".to_string()
    } else {
        "axes = [1]".to_string()
    };
    c.push(format!(
        "opset = 17; input x: f32[2, 3, 4]; output y = {name}({xf}, {axes}, keepdims = 0);"
    ));
    // Over an empty axis: the value over the empty set, folded at compile time (the
    // infinite ones of ReduceMax, ReduceMin and the log-sums are the node suite's).
    match name {
        "ReduceSum" | "ReduceProd" | "ReduceL1" | "ReduceL2" | "ReduceSumSquare" => c.push(format!(
            "opset = 18; input x: f32[2, 0, 3]; output y = {name}(x, [1]); output z = {name}(x, [1], keepdims = 0);"
        )),
        "ReduceMax" | "ReduceMin" => c.push(format!(
            "opset = 18; input x: i32[2, 0]; output y = {name}(x, [1]); input u: u8[0, 3]; output z = {name}(u, [0], keepdims = 0);"
        )),
        _ => {}
    }
    c
}
