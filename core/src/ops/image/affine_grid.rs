//! `AffineGrid` (opset 20): the sampling grid of `GridSample` for a batch of 2-D (`[N,
//! 2, 3]`) or 3-D (`[N, 3, 4]`) affine matrices and an output size known at compile
//! time.

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static AFFINE_GRID: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 20; input t: f32[2, 2, 3]; output a = AffineGrid(t, [2, 3, 5, 6]); output b = AffineGrid(t, [2, 1, 4, 3], align_corners = 1);",
            // A length-1 axis with align_corners is left out: ONNX Runtime puts its one
            // position at +1, the ONNX reference (followed here) at -1.
            "opset = 20; input t: f32[2, 3, 4]; output a = AffineGrid(t, [2, 3, 4, 5, 6]); output b = AffineGrid(t, [2, 3, 4, 5, 6], align_corners = 1);",
        ])
    },
    op_type: "AffineGrid",
    inputs: &[input("theta"), i64_const("size", false)],
    attrs: &[attr("align_corners", AttrKind::Int, AttrDefault::Int(0))],
    output_names: &["grid"],
    since_opset: 20,
    infer: |cx| {
        let theta = cx.input(0);
        let size = spatial(&theta.shape, cx.const_i64(1))?;
        if !matches!(cx.attrs.int("align_corners"), 0 | 1) {
            return Err(OpError::attr(
                "align_corners",
                "AffineGrid align_corners is 0 or 1",
            ));
        }
        let mut out = vec![theta.shape.0[0].clone()];
        out.extend(size.iter().map(|&d| Dim::Fixed(d)));
        out.push(Dim::Fixed(size.len()));
        Ok(vec![TensorType {
            dtype: theta.dtype,
            shape: Shape(out),
        }])
    },
    lower: |cx| {
        let theta = cx.input(0);
        let consts = cx.const_i64(1);
        let size = spatial(&Shape::fixed(&theta.shape), consts).expect("checked during inference");
        let n = theta.shape[0];
        let align = cx.attrs.int("align_corners") == 1;
        let (t, y, kernels) = (&theta.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::resize::affine_grid(#t, #y, #n, [#(#size),*], #align); }
    },
    macs: |cx| cx.outputs[0].numel() as u64 * 4,
    ..BASE
};

/// The output's spatial size from `size` (`[N, C, H, W]` or `[N, C, D, H, W]`), checked
/// against theta's `[N, R, R + 1]`.
fn spatial(theta: &Shape, size: Option<&[i64]>) -> Result<Vec<usize>, OpError> {
    let Some(size) = size else {
        return Err(OpError::input(
            1,
            "AffineGrid needs its size known at compile time",
        ));
    };
    if !matches!(size.len(), 4 | 5)
        || size
            .iter()
            .any(|&d| d < 1 || d > crate::types::MAX_DIM as i64)
    {
        return Err(OpError::input(
            1,
            format!(
                "AffineGrid size is [N, C, H, W] or [N, C, D, H, W] of positive values, got {size:?}"
            ),
        ));
    }
    let r = size.len() - 2;
    let want = Shape(vec![
        Dim::Fixed(size[0] as usize),
        Dim::Fixed(r),
        Dim::Fixed(r + 1),
    ]);
    if theta != &want {
        return Err(OpError::input(
            0,
            format!("AffineGrid theta must be {want} for size {size:?}, got {theta}"),
        ));
    }
    Ok(size[2..].iter().map(|&d| d as usize).collect())
}
