//! The data sets of the ONNX backend node test cases and the comparison the suite makes:
//! `|ours - expected| <= atol + rtol * |expected|` with rtol 1e-3 and atol 1e-7 for
//! floats (NaN equal to NaN, infinities equal), integers and bools exactly. Shared by the
//! host runner (`tests/node-suite`) and the firmware sample (`cargo xtask firmware`).

use std::path::Path;

use tinyonnx::layout::narrow::Narrow;
use tinyonnx_core::data::Data;
use tinyonnx_core::types::DType;
use tinyonnx_proto::Message;

use crate::Values;

pub const RTOL: f64 = 1e-3;
pub const ATOL: f64 = 1e-7;

/// A tensor of a data set: its name, dims, values (narrow floats widened to f32) and the
/// 16-bit float type it was stored in, if it was.
#[derive(Debug, Clone)]
pub struct Stored {
    pub name: String,
    pub dims: Vec<usize>,
    pub values: Values,
    pub sixteen: Option<Narrow>,
}

/// Reads one `input_K.pb` or `output_K.pb`.
pub fn read_tensor(path: &Path) -> Result<Stored, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let t = tinyonnx_proto::TensorProto::decode(bytes.as_slice())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let c = tinyonnx_core::import::proto::tensor(&t)
        .map_err(|e| format!("{}: the tensor {e}", path.display()))?;
    let values = match c.data {
        Data::F32(v) => Values::F32(v),
        Data::I64(v) => Values::I64(v),
        Data::Typed { dtype, values } => match dtype {
            DType::F64 => Values::F64(values),
            DType::I32 => Values::I32(values.iter().map(|&v| v as i32).collect()),
            DType::I8 => Values::I8(values.iter().map(|&v| v as i8).collect()),
            DType::U8 => Values::U8(values.iter().map(|&v| v as u8).collect()),
            DType::Bool => Values::Bool(values.iter().map(|&v| v != 0.0).collect()),
            DType::I16 => Values::I16(values.iter().map(|&v| v as i16).collect()),
            DType::U16 => Values::U16(values.iter().map(|&v| v as u16).collect()),
            DType::U32 => Values::U32(values.iter().map(|&v| v as u32).collect()),
            DType::U64 => Values::U64(values.iter().map(|&v| v as u64).collect()),
            other => return Err(format!("{}: unexpected dtype {other}", path.display())),
        },
    };
    let sixteen = match t.data_type {
        Some(10) => Some(Narrow::F16),
        Some(16) => Some(Narrow::Bf16),
        _ => None,
    };
    Ok(Stored {
        name: t.name.unwrap_or_default(),
        dims: c.dims,
        values,
        sixteen,
    })
}

/// The files `input_K.pb` (or `output_K.pb`, `kind` "output") of a data set, in order.
pub fn tensors(dir: &Path, kind: &str) -> Result<Vec<Stored>, String> {
    let mut out = Vec::new();
    loop {
        let p = dir.join(format!("{kind}_{}.pb", out.len()));
        if !p.exists() {
            return Ok(out);
        }
        out.push(read_tensor(&p)?);
    }
}

/// What differs between our output and the stored one, if anything. An output stored
/// as a 16-bit float is compared after rounding ours (computed in f32) to that type,
/// which is what a runtime computing in the file's type returns.
pub fn differs(ours: &Values, expected: &Values, sixteen: Option<Narrow>) -> Option<String> {
    if ours.dtype() != expected.dtype() {
        return Some(format!(
            "dtype {} instead of {}",
            ours.dtype(),
            expected.dtype()
        ));
    }
    let (a, b) = (ours.to_f64(), expected.to_f64());
    if a.len() != b.len() {
        return Some(format!("{} values instead of {}", a.len(), b.len()));
    }
    let exact = ours.is_exact();
    let mut worst: Option<(usize, f64, f64)> = None;
    let mut count = 0;
    for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
        let x = sixteen.map_or(x, |n| n.round(x, false));
        let ok = if exact {
            x == y
        } else if x.is_nan() || y.is_nan() {
            x.is_nan() && y.is_nan()
        } else if x.is_infinite() || y.is_infinite() {
            x == y
        } else {
            (x - y).abs() <= ATOL + RTOL * y.abs()
        };
        if !ok {
            count += 1;
            if worst.is_none() {
                worst = Some((i, x, y));
            }
        }
    }
    worst.map(|(i, x, y)| {
        format!(
            "{count} of {} values differ, first [{i}]: {x} instead of {y}",
            a.len()
        )
    })
}
