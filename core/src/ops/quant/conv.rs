//! `ConvInteger` (opset 10: int32 sums) and `QLinearConv` (opset 10): a convolution of 8-bit values with int32 sums and one
//! requantization, `y = saturate(round((sum((x - x_zp)(w - w_zp)) + B) * x_scale *
//! w_scale / y_scale) + y_zp)`, the weight quantized per tensor or per output channel.
//! The geometry is `Conv`'s. The weights must be known at compile time: they are packed
//! then, per group, in the order of `tinyonnx_layout::q8`, and each output position's
//! patch is gathered once into the scratch and multiplied with every panel.

use super::integer::{BYTES, Q8Statics, byte_type, folded_offsets, multiplier, q8_statics};
use super::{check_scale, check_zero_point, or_empty};
use crate::ops::convolution::conv::{CONV_ATTRS, as_2d, geometry, infer_at};
use crate::ops::schema::prelude::*;
use crate::types::Dim;

/// The output of an integer convolution whose X, W and bias are inputs `[x, w, b]`
/// (W of 8-bit values), and its number of channels.
fn byte_conv(cx: &InferCtx, [x, w, b]: [usize; 3]) -> Result<(Vec<TensorType>, Dim), OpError> {
    let wt = cx.input(w);
    if !BYTES.contains(&wt.dtype) {
        return Err(OpError::input(
            w,
            format!("{} takes w as i8 or u8, got {}", cx.op.op_type, wt.dtype),
        ));
    }
    let out = infer_at(cx, [x, w, b])?;
    Ok((out, wt.shape.0.first().cloned().unwrap_or(Dim::Fixed(1))))
}

/// `ConvInteger`: `sum((x - x_zero_point)(w - w_zero_point))` per output in i32, the
/// weight's zero point per tensor or per output channel (the ONNX node suite's case;
/// ONNX Runtime takes one value only); the weights as they are.
pub static CONV_INTEGER: OpSchema = OpSchema {
    op_type: "ConvInteger",
    inputs: &[
        input("x"),
        any_input("w", false),
        any_input("x_zero_point", true),
        any_input("w_zero_point", true),
    ],
    attrs: CONV_ATTRS,
    dtypes: BYTES,
    since_opset: 10,
    infer: |cx| {
        let (mut out, m) = byte_conv(cx, [0, 1, 4])?;
        for (i, of, per_channel) in [(2, 0, false), (3, 1, true)] {
            let Some(z) = cx.opt_input(i) else { continue };
            let want = cx.input(of).dtype;
            let fits = z.shape.single() || (per_channel && z.shape.0 == [m.clone()]);
            if z.dtype != want || !fits {
                let name = cx.op.inputs[i].name;
                let shape = if per_channel {
                    format!("one value or {m} (one per output channel)")
                } else {
                    "one value".to_string()
                };
                return Err(OpError::input(
                    i,
                    format!(
                        "ConvInteger {name} must be {want} holding {shape}, got {} {}",
                        z.dtype, z.shape
                    ),
                ));
            }
        }
        out[0].dtype = DType::I32;
        Ok(out)
    },
    lower: |cx| {
        let geometry = conv_geometry(cx, 0, 1);
        let (x, w, y) = (&cx.input(0).expr, &cx.input(1).expr, &cx.outputs[0].expr);
        let (za, zb) = (or_empty(cx, 2), or_empty(cx, 3));
        let kernels = kernels();
        let Some((decls, statics, k)) = packed_weights(cx, 1) else {
            return quote! {
                let geometry = #geometry;
                #kernels::quant::conv_integer(#x, #w, #y, &geometry, #za, #zb);
            };
        };
        let (mg, pairs) = (
            statics.colsum.len() / (cx.attrs.int("group").max(1) as usize),
            statics.pairs,
        );
        let depthwise = depthwise3x3(&cx.input(0).shape, &cx.input(1).shape, cx.attrs);
        let call = if depthwise {
            let kernel = quote!(#kernels::quant::conv_integer_depthwise_q8);
            depthwise_call(&geometry, kernel, x, quote!(&product, #y))
        } else {
            let patch = patch(cx);
            quote! {
                let geometry = #geometry;
                #kernels::quant::conv_integer_q8(#x, &geometry, &product, #y, #patch);
            }
        };
        let (offsets, offset, b_zp) =
            folded_offsets(cx, &statics.colsum, k, [Some(2), Some(3), None]);
        let x_elem = byte_type(cx.input(0).dtype);
        quote! {
            #decls
            #offsets
            let a_zp: &[#x_elem] = #za;
            let product = #kernels::quant::Q8Product {
                rows: 1,
                k: #k,
                n: #mg,
                packed: &__BQ8.0,
                colsum: &__COLSUM,
                bias: &[],
                offset: #offset,
                a_zp: a_zp.first().map_or(0, |&z| z as i32),
                b_zp: #b_zp,
                multiplier: &[],
                y_zp: 0,
                pairs: #pairs,
            };
            #call
        }
    },
    scratch: |cx| patch_scratch(cx, 1),
    packs: |cx| {
        if cx.input_consts.get(1).copied().flatten().is_some() {
            vec![1]
        } else {
            Vec::new()
        }
    },
    macs: |cx| {
        let w = &cx.input(1).shape;
        cx.outputs[0].numel() as u64 * w.iter().skip(1).product::<usize>() as u64
    },
    cases: |_| {
        vec![
            format!(
                "input x: u8[1, 3, 7, 8]; weight w: u8[4, 3, 3, 3] = {}; output y = ConvInteger(x, w, Cast(Constant(value_int = 120), to = u8), Cast(Constant(value_int = 128), to = u8)); output z = ConvInteger(x, w, strides = [2, 2], pads = [1, 1, 1, 1], group = 1);",
                values(108, 6, 70, 190)
            ),
            "input x: u8[2, 4, 5, 5]; input w: u8[6, 2, 2, 2]; output y = ConvInteger(x, w, group = 2, dilations = [2, 1], pads = [0, 1, 1, 0]); output z = ConvInteger(x, w, Cast(Constant(value_int = 3), to = u8), Cast(Constant(value_int = 5), to = u8), group = 2, auto_pad = \"SAME_LOWER\");".to_string(),
        ]
    },
    ..BASE
};

pub static QLINEAR_CONV: OpSchema = OpSchema {
    op_type: "QLinearConv",
    inputs: &[
        input("x"),
        any_input("x_scale", false),
        any_input("x_zero_point", false),
        any_input("w", false),
        any_input("w_scale", false),
        any_input("w_zero_point", false),
        any_input("y_scale", false),
        any_input("y_zero_point", false),
        any_input("B", true),
    ],
    attrs: CONV_ATTRS,
    dtypes: BYTES,
    since_opset: 10,
    infer: |cx| {
        let (mut out, m) = byte_conv(cx, [0, 3, 8])?;
        let w = cx.input(3);
        check_scale(cx, 1, None)?;
        check_zero_point(cx, 2, 1, cx.input(0).dtype)?;
        check_scale(cx, 4, Some((0, &m)))?;
        check_zero_point(cx, 5, 4, w.dtype)?;
        check_scale(cx, 6, None)?;
        let yz = cx.input(7);
        if !BYTES.contains(&yz.dtype) || !yz.shape.single() {
            return Err(OpError::input(
                7,
                format!(
                    "QLinearConv y_zero_point must be one i8 or u8 value, got {} {}",
                    yz.dtype, yz.shape
                ),
            ));
        }
        if let Some(b) = cx.opt_input(8)
            && b.dtype != DType::I32
        {
            return Err(OpError::input(
                8,
                format!("QLinearConv takes B as i32 sums, got {}", b.dtype),
            ));
        }
        out[0].dtype = yz.dtype;
        Ok(out)
    },
    lower,
    scratch: |cx| patch_scratch(cx, 3),
    packs: |cx| {
        if cx.input_consts.get(3).copied().flatten().is_some() {
            vec![3]
        } else {
            Vec::new()
        }
    },
    macs: |cx| {
        let w = &cx.input(3).shape;
        cx.outputs[0].numel() as u64 * w.iter().skip(1).product::<usize>() as u64
    },
    cases: |_| qlinear_conv_cases(),
    ..BASE
};

/// The kernel's `ConvGeometry` of a convolution whose X and W are inputs `xi` and `wi`.
fn conv_geometry(cx: &LowerCtx, xi: usize, wi: usize) -> TokenStream {
    let (x, w) = (&cx.input(xi).shape, &cx.input(wi).shape);
    let axes = geometry("convolution", cx.attrs, &x[2..], &w[2..], false)
        .expect("checked during inference");
    let [h, wd] = as_2d(&axes);
    let g = cx.attrs.int("group").max(1) as usize;
    let fields = [
        ("n", x[0]),
        ("c", x[1]),
        ("h", h.input),
        ("w", wd.input),
        ("m", w[0]),
        ("g", g),
        ("kh", h.kernel),
        ("kw", wd.kernel),
        ("oh", h.output),
        ("ow", wd.output),
        ("sh", h.stride),
        ("sw", wd.stride),
        ("dh", h.dilation),
        ("dw", wd.dilation),
        ("pt", h.pad_begin),
        ("pl", wd.pad_begin),
    ]
    .map(|(f, v)| {
        let f = quote::format_ident!("{f}");
        quote!(#f: #v)
    });
    let kernels = kernels();
    quote!(#kernels::quant::ConvGeometry { #(#fields),* })
}

/// The call of the depthwise routine `kernel` (a path) on `args` after X: its geometry in
/// flash, not built on the forward pass's stack (a store a field, and the frame added to
/// the routine's), so that where the layer is the routine's only caller the compiler
/// folds the dimensions into it. The packed products keep theirs built at the call: a
/// static measured 4 % more instructions on the Cortex-M3's int8 CNNs there.
fn depthwise_call(
    geometry: &TokenStream,
    kernel: TokenStream,
    x: &TokenStream,
    args: TokenStream,
) -> TokenStream {
    let kernels = kernels();
    quote! {
        static __GEOMETRY: #kernels::quant::ConvGeometry = #geometry;
        #kernel(#x, &__GEOMETRY, #args);
    }
}

/// The constant weight of input `wi` (`[M, C/G, kh, kw]`) packed for the kernel: each
/// group's `[K, M/G]` operand (one column per output channel) in the q8 order, the
/// groups one after another ([`q8_statics`]); with the channels' sums and `K`. `None`
/// when the weight is not a constant.
fn packed_weights(cx: &LowerCtx, wi: usize) -> Option<(TokenStream, Q8Statics, usize)> {
    let values = cx.const_f64(wi)?;
    let w = &cx.input(wi).shape;
    let g = cx.attrs.int("group").max(1) as usize;
    let (mg, k) = (w[0] / g, w[1..].iter().product::<usize>());
    let depthwise = depthwise3x3(&cx.input(0).shape, w, cx.attrs);
    let (decls, statics) = q8_statics(
        cx.input(wi).dtype,
        &values,
        [k, mg, g],
        (depthwise, BYTES.contains(&cx.input(0).dtype)),
        |gi, t, j| (gi * mg + j) * k + t,
    )?;
    Some((decls, statics, k))
}

/// Whether a 2-D convolution of input shape `x` and weight shape `w` runs the depthwise
/// 3x3 routine (`tinyonnx_layout::q8::depthwise3x3`), which needs no patch scratch.
fn depthwise3x3(x: &[usize], w: &[usize], attrs: &Attrs) -> bool {
    let (&[_, c, _, _], &[m, _, kh, kw]) = (x, w) else {
        return false;
    };
    let g = attrs.int("group").max(1) as usize;
    let dilation = |i: usize| {
        attrs
            .ints("dilations")
            .and_then(|d| d.get(i))
            .map_or(1, |&d| d as usize)
    };
    tinyonnx_layout::q8::depthwise3x3((c, m, g), (kh, kw), (dilation(0), dilation(1)))
}

/// The scratch of a convolution with packed weights (input `wi`): one patch, one byte
/// per value, in f32 slots (none for the depthwise routine).
fn patch_scratch(cx: &ScratchCtx, wi: usize) -> usize {
    if !cx.consts.get(wi).copied().unwrap_or(false) {
        return 0;
    }
    let x = cx.inputs.first().cloned().flatten().unwrap_or_default();
    let w = cx.inputs.get(wi).cloned().flatten().unwrap_or_default();
    if depthwise3x3(&x, &w, cx.attrs) {
        return 0;
    }
    w.iter().skip(1).product::<usize>().div_ceil(4)
}

/// The patch scratch as a slice of X's element type.
fn patch(cx: &LowerCtx) -> TokenStream {
    cx.scratch_of(byte_type(cx.input(0).dtype))
        .unwrap_or_else(|| {
            quote!(::core::compile_error!(
                "tinyonnx bug: a packed convolution without its scratch"
            ))
        })
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let geometry = conv_geometry(cx, 0, 3);
    let (xs, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let (za, zb, zy) = (&cx.input(2).expr, &cx.input(5).expr, &cx.input(7).expr);
    let bias = or_empty(cx, 8);
    let multiplier = multiplier(cx, 1.0, 6);
    let kernels = kernels();
    let Some((decls, statics, k)) = packed_weights(cx, 3) else {
        let ws = &cx.input(3).expr;
        return quote! {
            #multiplier
            let geometry = #geometry;
            #kernels::quant::qlinear_conv(#xs, #ws, #y, &geometry, #za, #zb, #bias, &multiplier, (#zy)[0] as i32);
        };
    };
    let (mg, pairs) = (
        statics.colsum.len() / (cx.attrs.int("group").max(1) as usize),
        statics.pairs,
    );
    let call = if depthwise3x3(&cx.input(0).shape, &cx.input(3).shape, cx.attrs) {
        let kernel = quote!(#kernels::quant::qlinear_conv_depthwise_q8);
        depthwise_call(&geometry, kernel, xs, quote!(&product, #y))
    } else {
        let patch = patch(cx);
        quote! {
            let geometry = #geometry;
            #kernels::quant::qlinear_conv_q8(#xs, &geometry, &product, #y, #patch);
        }
    };
    let (offsets, offset, b_zp) =
        folded_offsets(cx, &statics.colsum, k, [Some(2), Some(5), Some(8)]);
    quote! {
        #decls
        #offsets
        #multiplier
        let product = #kernels::quant::Q8Product {
            rows: 1,
            k: #k,
            n: #mg,
            packed: &__BQ8.0,
            colsum: &__COLSUM,
            bias: #bias,
            offset: #offset,
            a_zp: (#za)[0] as i32,
            b_zp: #b_zp,
            multiplier: &multiplier,
            y_zp: (#zy)[0] as i32,
            pairs: #pairs,
        };
        #call
    }
}

/// Seeded 8-bit values in `lo..=hi` as a DSL list.
fn values(len: usize, seed: usize, lo: i32, hi: i32) -> String {
    let span = (hi - lo + 1) as usize;
    let v: Vec<String> = (0..len)
        .map(|i| (lo + ((i * 37 + seed * 101 + i * i * 13) % span) as i32).to_string())
        .collect();
    format!("[{}]", v.join(", "))
}

/// Cases against ONNX Runtime: u8 and i8 activations, per-tensor and per-channel
/// weights (under 64 in magnitude: ONNX Runtime's x86-64 kernel saturates larger
/// pairs), a bias, groups, depthwise, strides, dilations, pads and auto_pad, 1-D; and a
/// QDQ convolution, which the plan runs as this operator.
fn qlinear_conv_cases() -> Vec<String> {
    let f = |v: f32| format!("Constant(value_float = {v})");
    let q = |d: &str, v: i32| format!("Cast(Constant(value_int = {v}), to = {d})");
    let qs = |d: &str, v: &[i32]| {
        let l: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        format!("Cast(Constant(value_ints = [{}]), to = {d})", l.join(", "))
    };
    vec![
        format!(
            "input x: u8[1, 3, 7, 8]; weight w: i8[4, 3, 3, 3] = {}; weight b: i32[4] = [300, -1200, 45, 0];
             output y = QLinearConv(x, {}, {}, w, {}, {}, {}, {}, b);
             output z = QLinearConv(x, {}, {}, w, Constant(value_floats = [0.01, 0.02, 0.005, 0.03]), {}, {}, {}, b, strides = [2, 2], pads = [1, 1, 1, 1]);",
            values(108, 1, -60, 60),
            f(0.05),
            q("u8", 120),
            f(0.01),
            q("i8", 0),
            f(0.2),
            q("u8", 100),
            f(0.05),
            q("u8", 120),
            qs("i8", &[0, 0, 0, 0]),
            f(0.25),
            q("u8", 7),
        ),
        format!(
            "input x: i8[2, 4, 6, 6]; weight w: i8[4, 1, 3, 3] = {};
             output y = QLinearConv(x, {}, {}, w, {}, {}, {}, {}, group = 4, auto_pad = \"SAME_UPPER\");
             output z = QLinearConv(x, {}, {}, w, {}, {}, {}, {}, group = 4, strides = [2, 2], auto_pad = \"SAME_LOWER\");",
            values(36, 2, -50, 50),
            f(0.1),
            q("i8", -3),
            f(0.02),
            q("i8", 0),
            f(0.3),
            q("i8", 5),
            f(0.1),
            q("i8", -3),
            f(0.02),
            q("i8", 0),
            f(0.15),
            q("i8", -1),
        ),
        format!(
            "input x: u8[1, 4, 5, 5]; weight w: u8[6, 2, 2, 2] = {};
             output y = QLinearConv(x, {}, {}, w, {}, {}, {}, {}, group = 2, dilations = [2, 1], pads = [0, 1, 1, 0]);",
            values(48, 3, 100, 160),
            f(0.02),
            q("u8", 10),
            f(0.03),
            q("u8", 128),
            f(0.05),
            q("u8", 128),
        ),
        format!(
            "input x: i8[2, 3, 12]; weight w: i8[5, 3, 4] = {};
             output y = QLinearConv(x, {}, {}, w, {}, {}, {}, {}, strides = [3], pads = [2, 1], dilations = [2]);",
            values(60, 4, -40, 40),
            f(0.04),
            q("i8", 2),
            f(0.01),
            q("i8", 0),
            f(0.1),
            q("i8", 0),
        ),
        // Weights known only when the model runs (the direct kernel).
        format!(
            "input x: u8[1, 2, 5, 5]; input w: u8[3, 2, 3, 3]; input b: i32[3];
             output y = QLinearConv(x, {}, {}, w, Constant(value_floats = [0.001, 0.002, 0.0005]), Cast(Constant(value_ints = [128, 100, 3]), to = u8), {}, {}, b, pads = [1, 1, 1, 1]);",
            f(0.05),
            q("u8", 9),
            f(0.5),
            q("u8", 128),
        ),
        // A QDQ convolution (weights per output channel, an int32 bias of scale
        // x_scale * w_scale), which the plan runs as QLinearConv.
        format!(
            "input x: u8[1, 2, 6, 6]; weight w: i8[8, 2, 3, 3] = {}; weight c: i32[8] = [10, -200, 3000, 0, 77, -5, 1, 999];
             let a = DequantizeLinear(x, {}, {});
             let k = DequantizeLinear(w, Constant(value_floats = [0.01, 0.02, 0.01, 0.03, 0.01, 0.02, 0.04, 0.01]), {}, axis = 0);
             let bias = DequantizeLinear(c, Constant(value_floats = [0.0005, 0.001, 0.0005, 0.0015, 0.0005, 0.001, 0.002, 0.0005]), {}, axis = 0);
             output y = QuantizeLinear(Conv(a, k, bias, pads = [1, 1, 1, 1]), {}, {});",
            values(144, 5, -60, 60),
            f(0.05),
            q("u8", 128),
            qs("i8", &[0; 8]),
            qs("i32", &[0; 8]),
            f(0.1),
            q("u8", 60),
        ),
    ]
}
