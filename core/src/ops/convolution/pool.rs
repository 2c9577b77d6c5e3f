//! `MaxPool`, `AveragePool` (opset 19 semantics: dilations, ceil_mode, count_include_pad)
//! and `GlobalAveragePool`, for 1-D, 2-D and 3-D inputs.

use quote::quote;

use super::conv::{Axis, as_2d, geometry, spatial_upto};
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
            "input x: f32[1, 2, 5, 6, 7]; output y = MaxPool(x, kernel_shape = [2, 3, 2], strides = [2, 1, 2], pads = [1, 0, 1, 0, 1, 1]); output z = MaxPool(x, kernel_shape = [2, 2, 2], dilations = [2, 1, 2], ceil_mode = 1, strides = [2, 2, 2]);",
            "input x: i8[1, 3, 7, 8]; input u: u8[2, 2, 9]; output y = MaxPool(x, kernel_shape = [2, 2]); output z = MaxPool(x, kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 2]); output w = MaxPool(u, kernel_shape = [3], strides = [2], auto_pad = \"SAME_UPPER\", ceil_mode = 0);",
            // A Relu the plan moves after the pool: windows inside the input over 32
            // channels (the boards' shared loop), and padded 3x3 windows.
            "input x: f32[1, 32, 4, 6]; output y = MaxPool(Relu(Add(x, x)), kernel_shape = [2, 2], strides = [2, 2]);",
            "input x: f32[1, 2, 7, 8]; output y = MaxPool(Relu(Add(x, x)), kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]);",
            // The 2x2 stride-2 window with and without a Relu (the Arm FPU boards'
            // routine): planes of an even and of an odd number of rows, an odd last
            // window a row.
            "input x: f32[1, 2, 6, 10]; input u: f32[1, 3, 7, 11]; output y = MaxPool(x, kernel_shape = [2, 2], strides = [2, 2]); output z = MaxPool(Relu(x), kernel_shape = [2, 2], strides = [2, 2]); output v = MaxPool(u, kernel_shape = [2, 2], strides = [2, 2]); output w = MaxPool(Relu(u), kernel_shape = [2, 2], strides = [2, 2]);",
            // A QDQ pooling of one scale, which the plan runs on the 8-bit values.
            "input x: i8[1, 2, 6, 6]; let s = Constant(value_float = 0.05); let z = Cast(Constant(value_int = -7), to = i8); output y = QuantizeLinear(MaxPool(DequantizeLinear(x, s, z), kernel_shape = [2, 2], strides = [2, 2]), s, z);",
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
    // 8-bit values: a quantized model's pooling between two convolutions (ONNX Runtime
    // computes it from opset 12).
    dtypes: &[DType::F32, DType::I8, DType::U8],
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
            "input x: f32[1, 2, 5, 6, 7]; output y = AveragePool(x, kernel_shape = [2, 3, 2], strides = [2, 1, 2], pads = [1, 0, 1, 0, 1, 1]); output z = AveragePool(x, kernel_shape = [3, 3, 3], pads = [1, 1, 1, 1, 1, 1], count_include_pad = 1, strides = [2, 2, 2], ceil_mode = 1);",
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

/// `LpPool` (opset 18: `ceil_mode` and `dilations`): the p-norm of each window, padding
/// adding nothing.
pub static LP_POOL: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 18; input x: f32[1, 3, 7, 8]; output y = LpPool(x, kernel_shape = [2, 2]); output z = LpPool(x, kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], p = 1); output w = LpPool(x, kernel_shape = [3, 2], strides = [2, 2], ceil_mode = 1, p = 3);",
            "opset = 18; input x: f32[2, 2, 9]; output y = LpPool(x, kernel_shape = [3], strides = [2], auto_pad = \"SAME_UPPER\"); output z = LpPool(x, kernel_shape = [2], dilations = [3]);",
            "opset = 18; input x: f32[1, 2, 5, 6, 7]; output y = LpPool(x, kernel_shape = [2, 3, 2], strides = [2, 1, 2], pads = [1, 0, 1, 0, 1, 1]);",
        ])
    },
    op_type: "LpPool",
    inputs: &[input("X")],
    attrs: &[
        WINDOW_ATTRS[0],
        WINDOW_ATTRS[1].since(18),
        WINDOW_ATTRS[2].since(18),
        WINDOW_ATTRS[3],
        attr("p", AttrKind::Int, AttrDefault::Int(2)),
        WINDOW_ATTRS[4],
        WINDOW_ATTRS[5],
    ],
    output_names: &["Y"],
    since_opset: 11,
    infer: |cx| {
        if cx.attrs.int("p") < 1 {
            return Err(OpError::attr("p", "LpPool p must be at least 1"));
        }
        infer(cx)
    },
    lower: |cx| {
        let (nc, axes) = axes(cx);
        let g = geometry_3d(&axes);
        let p = cx.attrs.int("p") as f32;
        let (x, y, kernels) = (&cx.input(0).expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::pool::lp_pool3d::<#nc>(#x, #y, &#g, #p); }
    },
    macs: window_macs,
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
    let sp = spatial_upto(cx.op.op_type, x, 0, 3)?;
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
    if x.dtype != DType::F32 && sp.len() > 2 {
        return Err(OpError::input(
            0,
            format!(
                "{} of {} runs 1-D and 2-D windows; 3-D ones only on f32",
                cx.op.op_type, x.dtype
            ),
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

fn axes(cx: &LowerCtx) -> (usize, Vec<Axis>) {
    let x = &cx.input(0).shape;
    let axes = window("pool", cx.attrs, &x[2..]).expect("checked during inference");
    (x[0] * x[1], axes)
}

fn plan(cx: &LowerCtx) -> (usize, [Axis; 2]) {
    let (nc, axes) = axes(cx);
    (nc, as_2d(&axes))
}

/// The 3-D kernel's call, if the input has three spatial axes.
fn lower_3d(cx: &LowerCtx, max: bool) -> Option<TokenStream> {
    let (nc, axes) = axes(cx);
    if axes.len() != 3 {
        return None;
    }
    let g = geometry_3d(&axes);
    let include = !max && cx.attrs.int("count_include_pad") == 1;
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let kernels = kernels();
    Some(quote! { #kernels::pool::pool3d::<#nc, #max, #include>(#x, #y, &#g); })
}

/// The windows as the 3-D kernels take them, `[input, kernel, output, stride,
/// dilation, pad_begin, pad_end]` per axis, fewer axes led by unit ones.
fn geometry_3d(axes: &[Axis]) -> TokenStream {
    let unit = [1, 1, 1, 1, 1, 0, 0];
    let g = (axes.len()..3).map(|_| unit).chain(axes.iter().map(|a| {
        [
            a.input,
            a.kernel,
            a.output,
            a.stride,
            a.dilation,
            a.pad_begin,
            a.pad_end,
        ]
    }));
    let g = g.map(|v| quote!([#(#v),*]));
    quote!([#(#g),*])
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
    if let Some(call) = lower_3d(cx, true) {
        return call;
    }
    let a = args(cx);
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let kernels = kernels();
    if cx.input(0).dtype != DType::F32 {
        return quote! { #kernels::pool::max_pool2d_int::<_, #(#a),*>(#x, #y); };
    }
    // The plan moves a Relu before an f32 pool of 1-D or 2-D windows after it.
    let relu = cx.epilogue.relu;
    quote! { #kernels::pool::max_pool2d::<#(#a),*, #relu>(#x, #y); }
}

fn lower_avg(cx: &LowerCtx) -> TokenStream {
    if let Some(call) = lower_3d(cx, false) {
        return call;
    }
    let a = args(cx);
    let (_, [h, w]) = plan(cx);
    let include = cx.attrs.int("count_include_pad") == 1;
    let (pb, pr) = (h.pad_end, w.pad_end);
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let kernels = kernels();
    quote! { #kernels::pool::avg_pool2d::<#(#a),*, #pb, #pr, #include>(#x, #y); }
}

fn window_macs(cx: &LowerCtx) -> u64 {
    let (nc, axes) = axes(cx);
    (nc * axes.iter().map(|a| a.output * a.kernel).product::<usize>()) as u64
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
