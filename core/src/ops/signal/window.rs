//! `HannWindow`, `HammingWindow`, `BlackmanWindow` (opset 17): a window of `size` values,
//! periodic (the default) or symmetric; and `MelWeightMatrix` (opset 17). All computed at
//! compile time in f64.

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
    Ok((size, output_type(cx)?))
}

/// The element type `output_datatype` asks for: f32 or f64.
fn output_type(cx: &InferCtx) -> Result<DType, OpError> {
    let code = cx.attrs.int("output_datatype");
    dtype_of_code(code)
        .filter(|d| matches!(d, DType::F32 | DType::F64))
        .ok_or_else(|| {
            OpError::attr(
                "output_datatype",
                format!(
                    "{} output_datatype = {code}: tinyonnx makes f32 (1) or f64 (11)",
                    cx.op.op_type
                ),
            )
        })
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

/// `MelWeightMatrix` (opset 17): the `[dft_length / 2 + 1, num_mel_bins]` matrix of
/// triangular filters that maps a spectrogram onto mel bins, computed at compile time as
/// the ONNX reference does (band edges spaced evenly in mel over `num_mel_bins + 2`
/// steps, then floored to spectrogram bins).
pub static MEL_WEIGHT_MATRIX: OpSchema = OpSchema {
    op_type: "MelWeightMatrix",
    inputs: &[
        i64_const("num_mel_bins", false),
        i64_const("dft_length", false),
        i64_const("sample_rate", false),
        any_const("lower_edge_hertz", false),
        any_const("upper_edge_hertz", false),
    ],
    attrs: &[attr("output_datatype", AttrKind::Int, AttrDefault::Int(1))],
    dtypes: &[DType::I64],
    since_opset: 17,
    infer: |cx| {
        let (mel, dtype) = mel_matrix(cx)?;
        let bins = mel.len() / mel_bins(cx)?.max(1);
        Ok(vec![TensorType {
            dtype,
            shape: Shape::fixed(&[bins, mel_bins(cx)?]),
        }])
    },
    fold: Some(|cx| {
        let (values, dtype) = mel_matrix(cx)?;
        Ok(vec![match dtype {
            DType::F32 => Data::F32(values.iter().map(|&v| v as f32).collect()),
            _ => Data::Typed { dtype, values },
        }])
    }),
    lower: lower_const,
    macs: no_macs,
    cases: |_| {
        cases(&[
            "opset = 17; input x: f32[1]; output a = Add(MelWeightMatrix(Constant(value_int = 8), Constant(value_int = 64), Constant(value_int = 16000), Constant(value_float = 20.0), Constant(value_float = 8000.0)), x);",
            "opset = 17; input x: f32[1]; output a = Add(MelWeightMatrix(Constant(value_int = 20), Constant(value_int = 512), Constant(value_int = 16000), Constant(value_float = 0.0), Constant(value_float = 4000.0)), x);",
        ])
    },
    ..BASE
};

/// `num_mel_bins`, checked.
fn mel_bins(cx: &InferCtx) -> Result<usize, OpError> {
    match cx.const_i64(0) {
        Some(&[n]) if (1..=4096).contains(&n) => Ok(n as usize),
        _ => Err(OpError::input(
            0,
            "MelWeightMatrix num_mel_bins must be one value from 1 to 4096",
        )),
    }
}

/// The matrix (row-major, spectrogram bins by mel bins) and its element type.
fn mel_matrix(cx: &InferCtx) -> Result<(Vec<f64>, DType), OpError> {
    let mel = mel_bins(cx)?;
    let one = |i: usize, what: &str| -> Result<i64, OpError> {
        match cx.const_i64(i) {
            Some(&[v]) if (1..=1 << 20).contains(&v) => Ok(v),
            _ => Err(OpError::input(
                i,
                format!("MelWeightMatrix {what} must be one value from 1 to 2^20"),
            )),
        }
    };
    let (dft, rate) = (one(1, "dft_length")?, one(2, "sample_rate")?);
    let hertz = |i: usize| -> Result<f64, OpError> {
        let t = cx.input(i);
        let v = cx.consts.get(i).copied().flatten().map(Data::to_f64);
        match v.as_deref() {
            Some(&[v]) if t.dtype == DType::F32 && v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(OpError::input(
                i,
                format!(
                    "MelWeightMatrix {} must be one finite, non-negative f32",
                    cx.op.inputs[i].name
                ),
            )),
        }
    };
    let (low, high) = (hertz(3)?, hertz(4)?);
    let dtype = output_type(cx)?;
    let spectrogram = (dft / 2 + 1) as usize;
    let to_mel = |hz: f64| 2595.0 * (hz / 700.0).ln_1p() / 10f64.ln();
    let (lo, hi) = (to_mel(low), to_mel(high));
    let step = (hi - lo) / (mel + 2) as f64;
    let edges: Vec<i64> = (0..mel + 2)
        .map(|k| {
            let hz = 700.0 * ((k as f64 * step + lo) / 2595.0 * 10f64.ln()).exp_m1();
            (((dft + 1) as f64 * hz) / rate as f64).floor() as i64
        })
        .collect();
    let mut out = vec![0.0f64; spectrogram * mel];
    let mut put = |j: i64, i: usize, v: f64| -> Result<(), OpError> {
        let j = usize::try_from(j)
            .ok()
            .filter(|&j| j < spectrogram)
            .ok_or_else(|| {
                OpError::input(4, format!("MelWeightMatrix puts a filter edge at bin {j}, outside the {spectrogram} spectrogram bins"))
            })?;
        out[j * mel + i] = v;
        Ok(())
    };
    for i in 0..mel {
        let (left, centre, right) = (edges[i], edges[i + 1], edges[i + 2]);
        if centre == left {
            put(centre, i, 1.0)?;
        } else {
            for j in left..=centre {
                put(j, i, (j - left) as f64 / (centre - left) as f64)?;
            }
        }
        if right > centre {
            for j in centre..right {
                put(j, i, (right - j) as f64 / (right - centre) as f64)?;
            }
        }
    }
    Ok((out, dtype))
}
