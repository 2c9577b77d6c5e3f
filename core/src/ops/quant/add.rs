//! `com.microsoft.QLinearAdd` (ONNX Runtime's quantized Add) as the plan forms it from a
//! QDQ `Add` of two 8-bit tensors of one shape (`plan::qdq`), outside the registry like
//! `QGemm`; its arithmetic is ONNX Runtime's x86-64 kernel's, so that the 8-bit results
//! are the ones ONNX Runtime gives for the same file.

use super::integer::BYTES;
use crate::ops::schema::prelude::*;

/// `(ra, rb, fixed)` of `quant::qlinear_add` for per-tensor scales and zero points,
/// formed in f32 as ONNX Runtime forms them: `ra = a_scale / y_scale`, `rb = b_scale /
/// y_scale`, `fixed = y_zp - fma(ra, a_zp, rb * b_zp)`. None when a sum of two 8-bit
/// values could leave the range where the kernel's rounding is exact (`|t| < 2^22`: the
/// ratios and zero points of any real model are far inside it), when the integer form
/// of the parameters does not fit 64 bits, or when a scale is not a positive finite
/// number.
pub fn params(scales: [f64; 3], zero_points: [f64; 3]) -> Option<(f32, f32, f32)> {
    let [sa, sb, sy] = scales.map(|s| s as f32);
    let [za, zb, zy] = zero_points.map(|z| z as f32);
    if ![sa, sb, sy].iter().all(|s| s.is_finite() && *s > 0.0) {
        return None;
    }
    let (ra, rb) = (sa / sy, sb / sy);
    let fixed = zy - ra.mul_add(za, rb * zb);
    // 8-bit values are at most 255 from 0; the cores without an FPU take the units.
    let bound = 255.0 * (ra.abs() + rb.abs()) + fixed.abs();
    let units = tinyonnx_layout::qadd::units(ra, rb, fixed);
    (bound.is_finite() && bound < (1 << 21) as f32 && units.is_some()).then_some((ra, rb, fixed))
}

pub static QLINEAR_ADD: OpSchema = OpSchema {
    op_type: "QLinearAdd",
    inputs: &[
        input("A"),
        any_input("A_scale", false),
        any_input("A_zero_point", false),
        any_input("B", false),
        any_input("B_scale", false),
        any_input("B_zero_point", false),
        any_input("C_scale", false),
        any_input("C_zero_point", false),
    ],
    dtypes: BYTES,
    since_opset: 1,
    infer: |_| {
        Err(OpError::input(
            0,
            "QLinearAdd of the com.microsoft domain is read as DequantizeLinear, Add and QuantizeLinear (the plan forms it from QDQ Adds)",
        ))
    },
    lower: |cx| {
        let value = |i: usize| {
            cx.const_f64(i)
                .and_then(|v| v.first().copied())
                .unwrap_or(f64::NAN)
        };
        let Some((ra, rb, fixed)) = params([1, 4, 6].map(value), [2, 5, 7].map(value)) else {
            return quote!(::core::compile_error!("tinyonnx bug: a QLinearAdd the plan should not have formed"););
        };
        let (ra, rb, fixed) = (ra.to_bits(), rb.to_bits(), fixed.to_bits());
        let (a, b, y) = (&cx.input(0).expr, &cx.input(3).expr, &cx.outputs[0].expr);
        let kernels = kernels();
        // The integer form evaluated where the model compiles, by the function `params`
        // checked it with, so the kernel need not convert (nor keep a path for none).
        quote! {
            #kernels::quant::qlinear_add(
                #a, #b, #y,
                (f32::from_bits(#ra), f32::from_bits(#rb), f32::from_bits(#fixed)),
                &const {
                    match ::tinyonnx::layout::qadd::units(f32::from_bits(#ra), f32::from_bits(#rb), f32::from_bits(#fixed)) {
                        ::core::option::Option::Some(u) => u,
                        ::core::option::Option::None => ::core::panic!("tinyonnx bug: QLinearAdd parameters without integer units"),
                    }
                },
            );
        }
    },
    ..BASE
};
