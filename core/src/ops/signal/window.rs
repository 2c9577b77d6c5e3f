//! `HannWindow`, `HammingWindow`, `BlackmanWindow` (opset 17): a window of `size` values,
//! periodic (the default) or symmetric, computed at compile time in f64.

use std::f64::consts::PI;

use crate::ops::elementwise::cast::dtype_of_code;
use crate::ops::schema::prelude::*;
use crate::types::Shape;

const WINDOW_ATTRS: &[AttrSpec] = &[
    attr("output_datatype", AttrKind::Int, AttrDefault::Int(1)),
    attr("periodic", AttrKind::Int, AttrDefault::Int(1)),
];

macro_rules! window {
    ($static:ident, $name:literal) => {
        pub static $static: OpSchema = OpSchema {
            op_type: $name,
            inputs: &[i64_const("size", false)],
            attrs: WINDOW_ATTRS,
            dtypes: &[DType::I64],
            since_opset: 17,
            infer,
            fold: Some(fold),
            lower: lower_const,
            macs: no_macs,
            cases: |op| {
                let n = op.op_type;
                // f64 windows are left out: ONNX Runtime's are only as exact as f32.
                vec![format!(
                    "opset = 17; input x: f32[1]; output a = Add({n}(Constant(value_int = 10)), x); output b = Add({n}(Constant(value_int = 7), periodic = 0), x);"
                )]
            },
            ..BASE
        };
    };
}

window!(HANN_WINDOW, "HannWindow");
window!(HAMMING_WINDOW, "HammingWindow");
window!(BLACKMAN_WINDOW, "BlackmanWindow");

/// The window's length and element type.
fn length_and_type(cx: &InferCtx) -> Result<(usize, DType), OpError> {
    let op = cx.op.op_type;
    let size = match cx.const_i64(0) {
        Some(&[n]) if n >= 1 => n as usize,
        _ => {
            return Err(OpError::input(
                0,
                format!("{op} size must be one positive value"),
            ));
        }
    };
    let code = cx.attrs.int("output_datatype");
    let dtype = dtype_of_code(code)
        .filter(|d| matches!(d, DType::F32 | DType::F64))
        .ok_or_else(|| {
            OpError::attr(
                "output_datatype",
                format!(
                    "{op} output_datatype = {code}: tinyonnx makes windows of f32 (1) or f64 (11)"
                ),
            )
        })?;
    Ok((size, dtype))
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let (n, dtype) = length_and_type(cx)?;
    Ok(vec![TensorType {
        dtype,
        shape: Shape::fixed(&[n]),
    }])
}

fn fold(cx: &InferCtx) -> Result<Vec<Data>, OpError> {
    let (n, dtype) = length_and_type(cx)?;
    let periodic = cx.attrs.int("periodic") != 0;
    let span = if periodic { n as f64 } else { n as f64 - 1.0 };
    let values: Vec<f64> = (0..n)
        .map(|i| {
            let t = i as f64 / span;
            match cx.op.op_type {
                "HannWindow" => (PI * t).sin().powi(2),
                "HammingWindow" => {
                    let alpha = 25.0 / 46.0;
                    alpha - (1.0 - alpha) * (2.0 * PI * t).cos()
                }
                _ => 0.42 - 0.5 * (2.0 * PI * t).cos() + 0.08 * (4.0 * PI * t).cos(),
            }
        })
        .collect();
    Ok(vec![match dtype {
        DType::F32 => Data::F32(values.iter().map(|&v| v as f32).collect()),
        _ => Data::Typed { dtype, values },
    }])
}
