//! `ArgMax` and `ArgMin` (opset 13): the int64 index of the largest (smallest) value
//! along `axis`, the first one on ties or the last with `select_last_index = 1`; the axis
//! stays as size 1 with `keepdims = 1` (the default).

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType};

const ATTRS: &[AttrSpec] = &[
    attr("axis", AttrKind::Int, AttrDefault::Int(0)),
    attr("keepdims", AttrKind::Int, AttrDefault::Int(1)),
    attr("select_last_index", AttrKind::Int, AttrDefault::Int(0)),
];

pub static ARG_MAX: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: i32[3, 4]; output a = ArgMax(x); output b = ArgMax(x, axis = -1, keepdims = 0); output c = ArgMax(x, axis = 1, select_last_index = 1);",
            "input x: f32[2, 3, 4]; output a = ArgMax(x, axis = 1); output b = ArgMax(x, axis = -3, keepdims = 0);",
            "input x: u8[5, 2]; output a = ArgMax(x, select_last_index = 1); output b = ArgMax(x);",
            "input x: i8[4, 3]; input y: i64[6]; input z: f64[2, 2]; output a = ArgMax(x, axis = 1); output b = ArgMax(y, keepdims = 0, select_last_index = 1); output c = ArgMax(z, axis = 1);",
            "input x: f32[3, 1]; output a = ArgMax(x, axis = 1); output b = ArgMax(Floor(Mul(x, 2.0)), select_last_index = 1);",
        ])
    },
    op_type: "ArgMax",
    inputs: &[input("data")],
    attrs: ATTRS,
    dtypes: NUMERIC,
    infer,
    lower: |cx| lower(cx, true),
    output_names: &["reduced"],
    ..BASE
};

pub static ARG_MIN: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: i32[3, 4]; output a = ArgMin(x); output b = ArgMin(x, axis = -1, keepdims = 0); output c = ArgMin(x, axis = 1, select_last_index = 1);",
            "input x: f32[2, 3, 4]; output a = ArgMin(x, axis = 2); output b = ArgMin(Floor(x), axis = 0, select_last_index = 1);",
            "input x: u8[5, 2]; input y: i8[7]; input z: i64[2, 3]; input w: f64[3]; output a = ArgMin(x, select_last_index = 1); output b = ArgMin(y); output c = ArgMin(z, axis = -1); output d = ArgMin(w);",
        ])
    },
    op_type: "ArgMin",
    inputs: &[input("data")],
    attrs: ATTRS,
    dtypes: NUMERIC,
    infer,
    lower: |cx| lower(cx, false),
    output_names: &["reduced"],
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let axis = normalize_axis(cx.op.op_type, cx.attrs.int("axis"), x.shape.rank(), "axis")?;
    let keep = flag(cx, "keepdims")?;
    flag(cx, "select_last_index")?;
    let mut dims: Vec<Dim> = x.shape.0.clone();
    if keep {
        dims[axis] = Dim::Fixed(1);
    } else {
        dims.remove(axis);
    }
    Ok(vec![TensorType {
        dtype: DType::I64,
        shape: Shape(dims),
    }])
}

fn lower(cx: &LowerCtx, max: bool) -> TokenStream {
    let shape = &cx.input(0).shape;
    let axis = normalize_axis("ArgMax", cx.attrs.int("axis"), shape.len(), "axis")
        .expect("checked during inference");
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let last = cx.attrs.int("select_last_index") == 1;
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    quote! { #kernels::reduce::arg_extreme::<_, #outer, #n, #inner>(#x, #y, #max, #last); }
}
