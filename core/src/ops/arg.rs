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
    op_type: "ArgMin",
    inputs: &[input("data")],
    attrs: ATTRS,
    dtypes: NUMERIC,
    infer,
    lower: |cx| lower(cx, false),
    output_names: &["reduced"],
    ..BASE
};

fn flag(cx: &InferCtx, name: &'static str) -> Result<bool, OpError> {
    match cx.attrs.int(name) {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(OpError::attr(
            name,
            format!("{} {name} must be 0 or 1, got {v}", cx.op.op_type),
        )),
    }
}

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
    op_type: "Shape",
    inputs: &[input("data")],
    attrs: &[
        attr("start", AttrKind::Int, AttrDefault::Int(0)),
        attr("end", AttrKind::Int, AttrDefault::Absent),
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
    if (cx.attrs.is_explicit("start") || cx.attrs.is_explicit("end")) && cx.opset < 15 {
        return Err(OpError::attr(
            if cx.attrs.is_explicit("start") {
                "start"
            } else {
                "end"
            },
            format!(
                "Shape start and end exist from opset 15; this model is opset {}",
                cx.opset
            ),
        ));
    }
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
