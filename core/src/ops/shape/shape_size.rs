//! `Shape` (with `start`/`end` from opset 15) and `Size`: int64 facts of a tensor's
//! shape, known at compile time (folded), also emitted as run-time values.

use crate::ops::schema::prelude::*;
use crate::types::Shape;

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
