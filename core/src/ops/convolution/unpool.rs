//! `GlobalLpPool` (opset 2: the p-norm over the spatial axes) and `MaxUnpool` (opset 11:
//! values scattered to the flat indices a MaxPool reported, read at run time; with
//! `output_shape`, into the unpooled tensor at the start of the larger output, as the
//! ONNX reference places it).

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static GLOBAL_LP_POOL: OpSchema = OpSchema {
    op_type: "GlobalLpPool",
    inputs: &[input("X")],
    attrs: &[attr("p", AttrKind::Int, AttrDefault::Int(2))],
    infer: |cx| {
        let x = cx.input(0);
        if x.shape.rank() < 3 {
            return Err(OpError::input(
                0,
                format!("GlobalLpPool takes [N, C, D1, ...], got {}", x.shape),
            ));
        }
        if cx.attrs.int("p") < 1 {
            return Err(OpError::attr("p", "GlobalLpPool p must be at least 1"));
        }
        let mut shape = x.shape.0[..2].to_vec();
        shape.extend(std::iter::repeat_n(Dim::Fixed(1), x.shape.rank() - 2));
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape(shape),
        }])
    },
    lower: |cx| {
        let x = cx.input(0);
        let spatial: usize = x.shape[2..].iter().product();
        let p = cx.attrs.int("p") as f32;
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::norm::global_lp_pool(#xe, #y, #spatial, #p); }
    },
    macs: |cx| cx.input(0).numel() as u64,
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4, 5]; output a = GlobalLpPool(x); output b = GlobalLpPool(x, p = 1); output c = GlobalLpPool(x, p = 3);",
            "input x: f32[1, 2, 7]; output a = GlobalLpPool(x);",
        ])
    },
    ..BASE
};

pub static MAX_UNPOOL: OpSchema = OpSchema {
    op_type: "MaxUnpool",
    inputs: &[
        input("X"),
        any_input("I", false),
        i64_const("output_shape", true),
    ],
    attrs: &[
        attr("kernel_shape", AttrKind::Ints, AttrDefault::Required),
        attr("pads", AttrKind::Ints, AttrDefault::Absent),
        attr("strides", AttrKind::Ints, AttrDefault::Absent),
    ],
    since_opset: 11,
    infer: |cx| {
        let x = cx.input(0);
        let i = cx.input(1);
        if i.dtype != DType::I64 || i.shape != x.shape {
            return Err(OpError::input(
                1,
                format!(
                    "MaxUnpool I must be i64 of X's shape {}, got {} {}",
                    x.shape, i.dtype, i.shape
                ),
            ));
        }
        let dims: Option<Vec<usize>> = x.shape.0.iter().map(Dim::fixed).collect();
        let Some(dims) = dims.filter(|d| d.len() >= 3) else {
            return Err(OpError::input(
                0,
                format!(
                    "MaxUnpool takes [N, C, D1, ...] with fixed dims, got {}",
                    x.shape
                ),
            ));
        };
        let out = unpool_shape(cx.attrs, &dims, cx.const_i64(2))?;
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape::fixed(&out),
        }])
    },
    lower: |cx| {
        let out = &cx.outputs[0].shape;
        let unpooled =
            unpool_shape(cx.attrs, &cx.input(0).shape, None).expect("checked during inference");
        let rank = out.len();
        let (x, i, y, kernels) = (
            &cx.input(0).expr,
            &cx.input(1).expr,
            &cx.outputs[0].expr,
            kernels(),
        );
        quote! { #kernels::copy::unpool::<_, #rank>(#x, #i, #y, &[#(#unpooled),*], &[#(#out),*]); }
    },
    cases: |_| {
        cases(&[
            "input p: f32[1, 2, 2, 2]; input i: i64[1, 2, 2, 2]; output y = MaxUnpool(p, Abs(Mul(i, Cast(Constant(value_int = 3), to = i64))), kernel_shape = [2, 2], strides = [2, 2]);",
            // With output_shape, the indices address the unpooled tensor placed at the start
            // of the larger output, as the ONNX reference does; ONNX Runtime addresses the
            // output itself, so the node suite checks that form.
        ])
    },
    ..BASE
};

/// MaxUnpool's output dims: `output_shape`, or `(in - 1) * stride + kernel - pads`.
fn unpool_shape(
    attrs: &Attrs,
    dims: &[usize],
    given: Option<&[i64]>,
) -> Result<Vec<usize>, OpError> {
    let s = dims.len() - 2;
    let kernel = attrs.ints("kernel_shape").unwrap_or(&[]);
    if kernel.len() != s {
        return Err(OpError::attr(
            "kernel_shape",
            format!("MaxUnpool kernel_shape needs {s} values"),
        ));
    }
    let strides = attrs.ints("strides").map_or(vec![1; s], <[i64]>::to_vec);
    let pads = attrs.ints("pads").map_or(vec![0; 2 * s], <[i64]>::to_vec);
    if strides.len() != s || pads.len() != 2 * s {
        return Err(OpError::attr(
            "strides",
            format!("MaxUnpool needs {s} strides and {} pads", 2 * s),
        ));
    }
    let mut out = dims[..2].to_vec();
    for d in 0..s {
        let v = (dims[d + 2] as i64 - 1) * strides[d] + kernel[d] - pads[d] - pads[d + s];
        if v < 1 {
            return Err(OpError::attr(
                "kernel_shape",
                format!("MaxUnpool would make a dim of {v}"),
            ));
        }
        out.push(v as usize);
    }
    if let Some(g) = given {
        if g.len() != dims.len() || g.iter().zip(&out).any(|(&a, &b)| a < b as i64) {
            return Err(OpError::input(
                2,
                format!(
                    "MaxUnpool output_shape {g:?} must have rank {} and be at least {out:?}",
                    dims.len()
                ),
            ));
        }
        return Ok(g.iter().map(|&v| v as usize).collect());
    }
    Ok(out)
}
