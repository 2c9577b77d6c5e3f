//! `DepthToSpace` (opset 13: `mode` "DCR" or "CRD") and `SpaceToDepth` on `[N, C, H, W]`:
//! each one transpose of a 6-D view of the input.

use crate::ops::schema::prelude::*;
use crate::ops::shape::transpose::transpose_call;
use crate::types::{Dim, Shape};

/// What ONNX Runtime computes them on.
const DTYPES: &[DType] = &[DType::F32, DType::F64, DType::I8, DType::U8];

pub static DEPTH_TO_SPACE: OpSchema = OpSchema {
    op_type: "DepthToSpace",
    inputs: &[input("input")],
    dtypes: DTYPES,
    attrs: &[
        attr("blocksize", AttrKind::Int, AttrDefault::Required),
        attr("mode", AttrKind::Str, AttrDefault::Str("DCR")),
    ],
    infer: |cx| infer(cx, true),
    lower: |cx| lower(cx, true),
    cases: |_| {
        cases(&[
            "input x: f32[2, 8, 2, 3]; output y = DepthToSpace(x, blocksize = 2); output z = DepthToSpace(x, blocksize = 2, mode = \"CRD\");",
            "input x: u8[1, 9, 1, 2]; output y = DepthToSpace(x, blocksize = 3, mode = \"CRD\");",
        ])
    },
    ..BASE
};

pub static SPACE_TO_DEPTH: OpSchema = OpSchema {
    op_type: "SpaceToDepth",
    inputs: &[input("input")],
    dtypes: DTYPES,
    attrs: &[attr("blocksize", AttrKind::Int, AttrDefault::Required)],
    infer: |cx| infer(cx, false),
    lower: |cx| lower(cx, false),
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4, 6]; output y = SpaceToDepth(x, blocksize = 2);",
            "input x: f64[1, 2, 3, 3]; output y = SpaceToDepth(x, blocksize = 3);",
        ])
    },
    ..BASE
};

fn infer(cx: &InferCtx, to_space: bool) -> Result<Vec<TensorType>, OpError> {
    let op = cx.op.op_type;
    let x = cx.input(0);
    let b = cx.attrs.int("blocksize");
    if b < 1 {
        return Err(OpError::attr(
            "blocksize",
            format!("{op} blocksize must be at least 1, got {b}"),
        ));
    }
    if to_space && !matches!(cx.attrs.string("mode"), Some("DCR" | "CRD")) {
        return Err(OpError::attr(
            "mode",
            format!(
                "DepthToSpace mode must be \"DCR\" or \"CRD\", got \"{}\"",
                cx.attrs.string("mode").unwrap_or_default()
            ),
        ));
    }
    let dims = &x.shape.0;
    let fixed: Option<Vec<usize>> = dims
        .get(1..)
        .and_then(|d| d.iter().map(Dim::fixed).collect());
    let (Some([c, h, w]), 4) = (
        fixed
            .as_deref()
            .and_then(|f| <[usize; 3]>::try_from(f).ok()),
        dims.len(),
    ) else {
        return Err(OpError::input(
            0,
            format!(
                "{op} takes [N, C, H, W] with C, H and W fixed, got {}",
                x.shape
            ),
        ));
    };
    let b = b as usize;
    let out = if to_space {
        if c % (b * b) != 0 {
            return Err(OpError::input(
                0,
                format!(
                    "DepthToSpace needs the channels ({c}) divisible by blocksize^2 ({})",
                    b * b
                ),
            ));
        }
        [c / (b * b), h * b, w * b]
    } else {
        if h % b != 0 || w % b != 0 {
            return Err(OpError::input(
                0,
                format!("SpaceToDepth needs H ({h}) and W ({w}) divisible by the blocksize ({b})"),
            ));
        }
        [c * b * b, h / b, w / b]
    };
    let mut shape = vec![dims[0].clone()];
    shape.extend(out.iter().map(|&d| Dim::Fixed(d)));
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(shape),
    }])
}

fn lower(cx: &LowerCtx, to_space: bool) -> TokenStream {
    let x = cx.input(0);
    let [n, c, h, w] = <[usize; 4]>::try_from(x.shape.as_slice()).expect("checked: rank 4");
    let b = cx.attrs.int("blocksize") as usize;
    let (view, perm) = if !to_space {
        ([n, c, h / b, b, w / b, b], [0, 3, 5, 1, 2, 4])
    } else if cx.attrs.string("mode") == Some("CRD") {
        ([n, c / (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3])
    } else {
        ([n, b, b, c / (b * b), h, w], [0, 3, 4, 1, 5, 2])
    };
    transpose_call(&x.expr, &cx.outputs[0].expr, &view, &perm)
}
