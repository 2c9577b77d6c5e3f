//! `ArgMax` and `ArgMin` (opset 13): the int64 index of the largest (smallest) value
//! along `axis`, the first one on ties or the last with `select_last_index = 1`; the axis
//! stays as size 1 with `keepdims = 1` (the default).

use quote::quote;

use super::*;
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

pub static SHAPE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output a = Shape(x); output b = Shape(x, start = 1); output c = Shape(x, start = -2, end = -1); output d = Shape(x, end = 10); output e = Shape(x, start = 2, end = 1);",
            "input x: bool[5]; input y: i8[]; output a = Shape(x); output b = Shape(y);",
            "opset = 17; dim batch = 3; input x: f32[batch, 2]; output a = Shape(x); output b = Mul(Shape(x), Shape(x));",
        ])
    },
    op_type: "Shape",
    inputs: &[input("data")],
    attrs: &[
        attr("start", AttrKind::Int, AttrDefault::Int(0)).since(15),
        attr("end", AttrKind::Int, AttrDefault::Absent).since(15),
    ],
    dtypes: ALL_DTYPES,
    infer: infer_shape,
    fold: Some(fold_shape),
    lower: lower_shape,
    macs: no_macs,
    output_names: &["shape"],
    ..BASE
};

/// The `[start, end)` range of dimensions `Shape` reports (opset 15 clamping: negative
/// values count from the end, out-of-range values clamp).
fn shape_range(attrs: &Attrs, rank: usize) -> (usize, usize) {
    let r = rank as i64;
    let clamp = |v: i64| {
        let v = if v < 0 { v + r } else { v };
        v.clamp(0, r) as usize
    };
    let start = clamp(attrs.int("start"));
    let end = attrs
        .get("end")
        .and_then(|v| match v {
            AttrValue::Int(e) => Some(clamp(*e)),
            _ => None,
        })
        .unwrap_or(rank);
    (start, end.max(start))
}

fn infer_shape(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let (start, end) = shape_range(cx.attrs, cx.input(0).shape.rank());
    Ok(vec![TensorType {
        dtype: DType::I64,
        shape: Shape::fixed(&[end - start]),
    }])
}

/// Folds when every reported dimension is fixed (a symbolic one is only known on the
/// device, where the lowering writes it).
fn fold_shape(cx: &InferCtx) -> Result<Vec<Data>, OpError> {
    let x = cx.input(0);
    let (start, end) = shape_range(cx.attrs, x.shape.rank());
    let dims: Option<Vec<i64>> = x.shape.0[start..end]
        .iter()
        .map(|d| d.fixed().map(|v| v as i64))
        .collect();
    Ok(dims.map(|d| vec![Data::I64(d)]).unwrap_or_default())
}

fn lower_shape(cx: &LowerCtx) -> TokenStream {
    let shape = &cx.input(0).shape;
    let (start, end) = shape_range(cx.attrs, shape.len());
    let dims = shape[start..end].iter().map(|&d| d as i64);
    let y = &cx.outputs[0].expr;
    quote! { <[i64]>::copy_from_slice(#y, &[#(#dims),*]); }
}

pub static SIZE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; input y: u8[]; input z: bool[7, 1]; output a = Size(x); output b = Size(y); output c = Size(z);",
            "dim batch = 2; input x: i32[batch, 5]; output a = Size(x);",
        ])
    },
    op_type: "Size",
    inputs: &[input("data")],
    dtypes: ALL_DTYPES,
    infer: |_| {
        Ok(vec![TensorType {
            dtype: DType::I64,
            shape: Shape(vec![]),
        }])
    },
    fold: Some(|cx| {
        Ok(cx
            .input(0)
            .shape
            .fixed_numel()
            .map(|n| vec![Data::I64(vec![n as i64])])
            .unwrap_or_default())
    }),
    lower: |cx| {
        let n = cx.input(0).numel() as i64;
        let y = &cx.outputs[0].expr;
        quote! { (#y)[0] = #n; }
    },
    macs: no_macs,
    output_names: &["size"],
    ..BASE
};
