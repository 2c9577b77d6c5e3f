//! `GridSample` (opset 20: N-D, modes `linear`, `nearest`, `cubic`; `bilinear` and
//! `bicubic`, opset 16's names, are taken too): samples `X` at the normalized
//! coordinates of `grid`, read at run time.

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static GRID_SAMPLE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 20; input x: f32[1, 2, 4, 5]; input g: f32[1, 3, 6, 2]; output a = GridSample(x, g); output b = GridSample(x, g, mode = \"nearest\", padding_mode = \"border\"); output c = GridSample(x, g, mode = \"cubic\", padding_mode = \"reflection\"); output d = GridSample(x, Mul(g, 1.7), align_corners = 1, padding_mode = \"reflection\"); output e = GridSample(x, Mul(g, 1.3), mode = \"cubic\", align_corners = 1);",
            "opset = 20; input x: f32[2, 2, 3, 4, 5]; input g: f32[2, 2, 3, 4, 3]; output a = GridSample(x, g); output b = GridSample(x, Mul(g, 1.5), mode = \"nearest\", padding_mode = \"reflection\", align_corners = 1); output c = GridSample(x, Mul(g, 1.5), padding_mode = \"border\");",
        ])
    },
    op_type: "GridSample",
    inputs: &[input("X"), input("grid")],
    attrs: &[
        attr("align_corners", AttrKind::Int, AttrDefault::Int(0)),
        attr("mode", AttrKind::Str, AttrDefault::Str("linear")),
        attr("padding_mode", AttrKind::Str, AttrDefault::Str("zeros")),
    ],
    output_names: &["Y"],
    since_opset: 20,
    infer: |cx| {
        let (x, grid) = (cx.input(0), cx.input(1));
        modes(cx.attrs)?;
        let r = x.shape.rank();
        let spatial_fixed = x.shape.0.iter().skip(2).all(|d| d.fixed().is_some());
        if !(3..=5).contains(&r) || !spatial_fixed {
            return Err(OpError::input(
                0,
                format!(
                    "GridSample takes [N, C, D1...] with 1 to 3 fixed spatial axes, got {}",
                    x.shape
                ),
            ));
        }
        let want_last = Dim::Fixed(r - 2);
        if grid.shape.rank() != r
            || grid.shape.0[0] != x.shape.0[0]
            || grid.shape.0[r - 1] != want_last
        {
            return Err(OpError::input(
                1,
                format!(
                    "GridSample grid must be [N, ..., {}] of rank {r} for X {}, got {}",
                    r - 2,
                    x.shape,
                    grid.shape
                ),
            ));
        }
        let mut out = x.shape.0[..2].to_vec();
        out.extend(grid.shape.0[1..r - 1].iter().cloned());
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape(out),
        }])
    },
    lower: |cx| {
        let (x, grid) = (cx.input(0), cx.input(1));
        let (mode, padding) = modes(cx.attrs).expect("checked during inference");
        let (n, c) = (x.shape[0], x.shape[1]);
        let dims = &x.shape[2..];
        let points: usize = grid.shape[1..grid.shape.len() - 1].iter().product();
        let align = cx.attrs.int("align_corners") != 0;
        let (xe, ge, y, kernels) = (&x.expr, &grid.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::resize::grid_sample(#xe, #ge, #y, #n, #c, [#(#dims),*], #points, #mode, #padding, #align); }
    },
    macs: |cx| cx.outputs[0].numel() as u64 * 4,
    ..BASE
};

/// The kernel's mode (0 nearest, 1 linear, 2 cubic) and padding (0 zeros, 1 border, 2
/// reflection).
fn modes(attrs: &Attrs) -> Result<(u8, u8), OpError> {
    let mode = match attrs.string("mode") {
        Some("nearest") => 0u8,
        Some("linear" | "bilinear") => 1,
        Some("cubic" | "bicubic") => 2,
        other => {
            return Err(OpError::attr(
                "mode",
                format!("GridSample mode is \"linear\", \"nearest\" or \"cubic\", got {other:?}"),
            ));
        }
    };
    let padding = match attrs.string("padding_mode") {
        Some("zeros") => 0u8,
        Some("border") => 1,
        Some("reflection") => 2,
        other => {
            return Err(OpError::attr(
                "padding_mode",
                format!(
                    "GridSample padding_mode is \"zeros\", \"border\" or \"reflection\", got {other:?}"
                ),
            ));
        }
    };
    Ok((mode, padding))
}
