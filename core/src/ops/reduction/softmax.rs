//! `Softmax` and `LogSoftmax` along one axis (opset 13 semantics: `axis` defaults to -1
//! and only that axis is normalized; opsets below 13 coerced the input to 2-D and are not
//! accepted).

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::TensorType;

pub static SOFTMAX: OpSchema = OpSchema {
    dtypes: &[DType::F32, DType::F64],
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output y = Softmax(x); output z = Softmax(x, axis = 1); output w = Softmax(Mul(x, 20.0), axis = -3);",
            "input x: f32[5]; input z: f32[3, 1]; output y = Softmax(x); output w = Softmax(z, axis = 1);",
            "input x: f64[2, 3, 4]; output y = Softmax(x, axis = 1); output z = Softmax(x);",
        ])
    },
    op_type: "Softmax",
    inputs: &[input("input")],
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Int(-1))],
    inplace: Some(0),
    infer,
    lower: |cx| lower(cx, false),
    macs,
    ..BASE
};

/// `LogSoftmax` (opset 13): `x - max - log(sum(exp(x - max)))` along `axis`.
pub static LOG_SOFTMAX: OpSchema = OpSchema {
    dtypes: &[DType::F32, DType::F64],
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output y = LogSoftmax(x); output z = LogSoftmax(x, axis = 0); output w = LogSoftmax(Mul(x, 20.0), axis = -2);",
            "input x: f32[5]; output y = LogSoftmax(x);",
            "input x: f64[2, 3, 4]; output y = LogSoftmax(x, axis = 0); output z = LogSoftmax(x);",
        ])
    },
    op_type: "LogSoftmax",
    inputs: &[input("input")],
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Int(-1))],
    inplace: Some(0),
    infer,
    lower: |cx| lower(cx, true),
    macs,
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    if x.shape.rank() == 0 {
        return Err(OpError::input(
            0,
            format!("{} needs an input of rank 1 or more", cx.op.op_type),
        ));
    }
    normalize_axis(cx.op.op_type, cx.attrs.int("axis"), x.shape.rank(), "axis")?;
    Ok(vec![x.clone()])
}

fn split(cx: &LowerCtx) -> (usize, usize, usize) {
    let shape = &cx.outputs[0].shape;
    let axis = normalize_axis("Softmax", cx.attrs.int("axis"), shape.len(), "axis")
        .expect("bug: axis was checked during inference");
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    (outer, shape[axis], inner)
}

fn lower(cx: &LowerCtx, log: bool) -> TokenStream {
    let (outer, n, inner) = split(cx);
    let kernels = kernels();
    let y = &cx.outputs[0].expr;
    if cx.inplace {
        return quote! {
            #kernels::softmax::softmax_inplace::<_, #outer, #n, #inner, #log>(#y);
        };
    }
    let x = &cx.input(0).expr;
    quote! { #kernels::softmax::softmax::<_, #outer, #n, #inner, #log>(#x, #y); }
}

fn macs(cx: &LowerCtx) -> u64 {
    let (outer, n, inner) = split(cx);
    (outer * n * inner * 3) as u64
}
