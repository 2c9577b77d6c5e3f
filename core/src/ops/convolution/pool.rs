//! `MaxPool`, `AveragePool` (opset 19 semantics: dilations, ceil_mode, count_include_pad)
//! and `GlobalAveragePool`, for 1-D and 2-D inputs.

use quote::quote;

use super::conv::{Axis, as_2d, geometry, spatial};
use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType};

const WINDOW_ATTRS: [AttrSpec; 6] = [
    attr("auto_pad", AttrKind::Str, AttrDefault::Str("NOTSET")),
    attr("ceil_mode", AttrKind::Int, AttrDefault::Int(0)),
    // MaxPool has dilations since 10; AveragePool since 19 (its list overrides this).
    attr("dilations", AttrKind::Ints, AttrDefault::Absent),
    attr("kernel_shape", AttrKind::Ints, AttrDefault::Required),
    attr("pads", AttrKind::Ints, AttrDefault::Absent),
    attr("strides", AttrKind::Ints, AttrDefault::Absent),
];

pub static MAX_POOL: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[1, 3, 7, 8]; output y = MaxPool(x, kernel_shape = [2, 2]); output z = MaxPool(x, kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]); output w = MaxPool(x, kernel_shape = [3, 2], strides = [2, 2], ceil_mode = 1);",
            "input x: f32[2, 2, 9]; output y = MaxPool(x, kernel_shape = [3], strides = [2], auto_pad = \"SAME_UPPER\"); output z = MaxPool(x, kernel_shape = [2], dilations = [3]);",
        ])
    },
    op_type: "MaxPool",
    inputs: &[input("X")],
    attrs: &[
        WINDOW_ATTRS[0],
        WINDOW_ATTRS[1],
        WINDOW_ATTRS[2],
        WINDOW_ATTRS[3],
        WINDOW_ATTRS[4],
        attr("storage_order", AttrKind::Int, AttrDefault::Int(0)),
        WINDOW_ATTRS[5],
    ],
    output_names: &["Y"],
    infer,
    lower: lower_max,
    macs: window_macs,
    ..BASE
};

pub static AVERAGE_POOL: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[1, 3, 7, 8]; output y = AveragePool(x, kernel_shape = [2, 2]); output z = AveragePool(x, kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]); output w = AveragePool(x, kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1, ceil_mode = 1);",
            "opset = 19; input x: f32[1, 2, 8, 8]; output y = AveragePool(x, kernel_shape = [2, 2], dilations = [2, 2]); output z = AveragePool(x, kernel_shape = [3, 2], auto_pad = \"SAME_LOWER\");",
        ])
    },
    op_type: "AveragePool",
    inputs: &[input("X")],
    attrs: &[
        WINDOW_ATTRS[0],
        WINDOW_ATTRS[1],
        attr("count_include_pad", AttrKind::Int, AttrDefault::Int(0)),
        WINDOW_ATTRS[2].since(19),
        WINDOW_ATTRS[3],
        WINDOW_ATTRS[4],
        WINDOW_ATTRS[5],
    ],
    output_names: &["Y"],
    infer,
    lower: lower_avg,
    macs: window_macs,
    ..BASE
};

pub static GLOBAL_AVERAGE_POOL: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4, 5]; input z: f32[1, 4, 7]; output y = GlobalAveragePool(x); output w = GlobalAveragePool(z);",
        ])
    },
    op_type: "GlobalAveragePool",
    inputs: &[input("X")],
    output_names: &["Y"],
    infer: infer_global,
    lower: |cx| lower_global(cx, false),
    ..BASE
};

/// `GlobalMaxPool`: the maximum over every spatial position (NaN propagates).
pub static GLOBAL_MAX_POOL: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4, 5]; input z: f32[1, 4, 7]; output y = GlobalMaxPool(x); output w = GlobalMaxPool(z);",
        ])
    },
    op_type: "GlobalMaxPool",
    inputs: &[input("X")],
    output_names: &["Y"],
    infer: infer_global,
    lower: |cx| lower_global(cx, true),
    ..BASE
};

fn window(op: &str, cx_attrs: &Attrs, sp: &[usize]) -> Result<Vec<Axis>, OpError> {
    let ks = cx_attrs.ints("kernel_shape").unwrap_or(&[]);
    if ks.len() != sp.len()
        || ks
            .iter()
            .any(|&k| k <= 0 || k as u64 > crate::types::MAX_DIM as u64)
    {
        return Err(OpError::attr(
            "kernel_shape",
            format!(
                "{op} kernel_shape needs {} positive values for the spatial axes, got {ks:?}",
                sp.len()
            ),
        ));
    }
    let kernel: Vec<usize> = ks.iter().map(|&k| k as usize).collect();
    let ceil = match cx_attrs.int("ceil_mode") {
        0 => false,
        1 => true,
        v => {
            return Err(OpError::attr(
                "ceil_mode",
                format!("{} ceil_mode must be 0 or 1, got {v}", op),
            ));
        }
    };
    geometry(op, cx_attrs, sp, &kernel, ceil)
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let sp = spatial(cx.op.op_type, x, 0)?;
    if cx.op.op_type == "MaxPool" && cx.attrs.int("storage_order") != 0 {
        return Err(OpError::attr(
            "storage_order",
            "only storage_order = 0 (row major) is supported",
        ));
    }
    if let Some(AttrValue::Int(v)) = cx.attrs.get("count_include_pad")
        && *v != 0
        && *v != 1
    {
        return Err(OpError::attr(
            "count_include_pad",
            format!("count_include_pad must be 0 or 1, got {v}"),
        ));
    }
    let axes = window(cx.op.op_type, cx.attrs, &sp)?;
    let mut out = x.shape.0[..2].to_vec();
    out.extend(axes.iter().map(|a| Dim::Fixed(a.output)));
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out),
    }])
}

fn plan(cx: &LowerCtx) -> (usize, [Axis; 2]) {
    let x = &cx.input(0).shape;
    let axes = window("pool", cx.attrs, &x[2..]).expect("checked during inference");
    (x[0] * x[1], as_2d(&axes))
}

fn args(cx: &LowerCtx) -> Vec<usize> {
    let (nc, [h, w]) = plan(cx);
    vec![
        nc,
        h.input,
        w.input,
        h.kernel,
        w.kernel,
        h.output,
        w.output,
        h.stride,
        w.stride,
        h.dilation,
        w.dilation,
        h.pad_begin,
        w.pad_begin,
    ]
}

fn lower_max(cx: &LowerCtx) -> TokenStream {
    let a = args(cx);
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let kernels = kernels();
    quote! { #kernels::pool::max_pool2d::<#(#a),*>(#x, #y); }
}

fn lower_avg(cx: &LowerCtx) -> TokenStream {
    let a = args(cx);
    let (_, [h, w]) = plan(cx);
    let include = cx.attrs.int("count_include_pad") == 1;
    let (pb, pr) = (h.pad_end, w.pad_end);
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let kernels = kernels();
    quote! { #kernels::pool::avg_pool2d::<#(#a),*, #pb, #pr, #include>(#x, #y); }
}

fn window_macs(cx: &LowerCtx) -> u64 {
    let (nc, [h, w]) = plan(cx);
    (nc * h.output * w.output * h.kernel * w.kernel) as u64
}

fn infer_global(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    if x.shape.rank() < 3 {
        return Err(OpError::input(
            0,
            format!(
                "{} expects [N, C, spatial...], got {}",
                cx.op.op_type, x.shape
            ),
        ));
    }
    let mut out = x.shape.0[..2].to_vec();
    for d in &x.shape.0[2..] {
        if d.fixed().is_none() {
            return Err(OpError::input(
                0,
                format!(
                    "GlobalAveragePool needs fixed spatial dimensions, got {}",
                    x.shape
                ),
            ));
        }
        out.push(Dim::Fixed(1));
    }
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out),
    }])
}

fn lower_global(cx: &LowerCtx, max: bool) -> TokenStream {
    let x = cx.input(0);
    let nc = x.shape[0] * x.shape[1];
    let s: usize = x.shape[2..].iter().product();
    let (xe, y) = (&x.expr, &cx.outputs[0].expr);
    let kernels = kernels();
    if max {
        return quote! { #kernels::pool::global_max_pool::<#nc, #s>(#xe, #y); };
    }
    quote! { #kernels::pool::global_avg_pool::<#nc, #s>(#xe, #y); }
}
