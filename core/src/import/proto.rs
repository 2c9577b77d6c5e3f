//! Reading the messages of an ONNX file into the compiler's values: tensors (every
//! element type the runtime has, f16 and bf16 widened to f32), attributes, and the
//! element types of graph inputs.

use tinyonnx_proto as pb;

use tinyonnx_layout::narrow::Narrow;

use crate::data::Data;
use crate::ops::{AttrKind, AttrValue};
use crate::types::{DType, MAX_DIM};

/// A value known at compile time: its dims and its elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Const {
    pub dims: Vec<usize>,
    pub data: Data,
}

/// ONNX `TensorProto.DataType` codes.
pub mod code {
    pub const FLOAT: i32 = 1;
    pub const UINT8: i32 = 2;
    pub const INT8: i32 = 3;
    pub const UINT16: i32 = 4;
    pub const INT16: i32 = 5;
    pub const UINT32: i32 = 12;
    pub const UINT64: i32 = 13;
    pub const INT32: i32 = 6;
    pub const INT64: i32 = 7;
    pub const BOOL: i32 = 9;
    pub const FLOAT16: i32 = 10;
    pub const DOUBLE: i32 = 11;
    pub const BFLOAT16: i32 = 16;
}

/// The runtime's element type for an ONNX data type: the narrow formats (f16, bf16, the
/// float 8 formats, FLOAT4E2M1, INT4, UINT4) are carried in f32, i8 or u8.
pub fn dtype(code: i32) -> Option<DType> {
    if let Some(n) = Narrow::from_onnx(i64::from(code)) {
        return Some(crate::ops::elementwise::cast::carrier(n));
    }
    Some(match code {
        code::FLOAT => DType::F32,
        code::UINT8 => DType::U8,
        code::INT8 => DType::I8,
        code::INT32 => DType::I32,
        code::INT64 => DType::I64,
        code::BOOL => DType::Bool,
        code::DOUBLE => DType::F64,
        code::INT16 => DType::I16,
        code::UINT16 => DType::U16,
        code::UINT32 => DType::U32,
        code::UINT64 => DType::U64,
        _ => return None,
    })
}

/// The ONNX name of a data type, for messages.
pub fn type_name(code: i32) -> String {
    const NAMES: &[&str] = &[
        "UNDEFINED",
        "FLOAT",
        "UINT8",
        "INT8",
        "UINT16",
        "INT16",
        "INT32",
        "INT64",
        "STRING",
        "BOOL",
        "FLOAT16",
        "DOUBLE",
        "UINT32",
        "UINT64",
        "COMPLEX64",
        "COMPLEX128",
        "BFLOAT16",
        "FLOAT8E4M3FN",
        "FLOAT8E4M3FNUZ",
        "FLOAT8E5M2",
        "FLOAT8E5M2FNUZ",
        "UINT4",
        "INT4",
        "FLOAT4E2M1",
        "FLOAT8E8M0",
        "UINT2",
        "INT2",
        "FLOAT6E2M3",
        "FLOAT6E3M2",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("data type {code}"), |n| n.to_string())
}

/// The dims of a tensor, each at most [`MAX_DIM`], as is their product.
pub fn dims(t: &pb::TensorProto) -> Result<Vec<usize>, String> {
    let dims: Vec<usize> = t
        .dims
        .iter()
        .map(|&d| {
            usize::try_from(d)
                .ok()
                .filter(|&d| d <= MAX_DIM)
                .ok_or_else(|| format!("has dimension {d}"))
        })
        .collect::<Result<_, _>>()?;
    crate::types::checked_numel(dims.iter().copied())
        .filter(|&n| n <= MAX_DIM)
        .ok_or_else(|| format!("has dims {dims:?}, more than {MAX_DIM} elements"))?;
    Ok(dims)
}

/// The values of a tensor, from `raw_data` or the typed field of its data type.
pub fn tensor(t: &pb::TensorProto) -> Result<Const, String> {
    let dims = dims(t)?;
    let numel: usize = dims.iter().product();
    if t.data_location == Some(1) || !t.external_data.is_empty() {
        return Err("is stored as external data, which is read only for initializers".into());
    }
    let code = t.data_type.unwrap_or(0);
    let Some(dtype) = dtype(code) else {
        return Err(format!(
            "has element type {}; tinyonnx reads FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8, BOOL, the FLOAT8 types, FLOAT4E2M1, INT4, UINT4, INT2 and UINT2",
            type_name(code)
        ));
    };
    if let Some(n) = Narrow::from_onnx(i64::from(code)).filter(|n| n.bits() < 16) {
        return narrow_tensor(t, n, dims, numel);
    }
    let width = match code {
        code::FLOAT | code::INT32 | code::UINT32 => 4,
        code::INT64 | code::DOUBLE | code::UINT64 => 8,
        code::FLOAT16 | code::BFLOAT16 | code::INT16 | code::UINT16 => 2,
        _ => 1,
    };
    let raw = t.raw_data.as_deref().unwrap_or(&[]);
    let data = if !raw.is_empty() {
        // Raw bytes must be exactly what the dims need: more or fewer mean corruption.
        if Some(raw.len()) != numel.checked_mul(width) {
            return Err(format!(
                "is truncated or corrupt: dims {dims:?} need {} bytes of raw data, it holds {}",
                numel.saturating_mul(width),
                raw.len()
            ));
        }
        match code {
            code::FLOAT => Data::F32(
                raw.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            code::FLOAT16 => Data::F32(
                raw.chunks_exact(2)
                    .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                    .collect(),
            ),
            code::BFLOAT16 => Data::F32(
                raw.chunks_exact(2)
                    .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
                    .collect(),
            ),
            code::INT64 => Data::I64(
                raw.chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect(),
            ),
            code::DOUBLE => typed(
                dtype,
                raw.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
            ),
            code::INT32 => typed(
                dtype,
                raw.chunks_exact(4)
                    .map(|c| f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
            ),
            code::INT8 => typed(dtype, raw.iter().map(|&b| f64::from(b as i8))),
            code::INT16 => typed(
                dtype,
                raw.chunks_exact(2)
                    .map(|c| f64::from(i16::from_le_bytes([c[0], c[1]]))),
            ),
            code::UINT16 => typed(
                dtype,
                raw.chunks_exact(2)
                    .map(|c| f64::from(u16::from_le_bytes([c[0], c[1]]))),
            ),
            code::UINT32 => typed(
                dtype,
                raw.chunks_exact(4)
                    .map(|c| f64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
            ),
            code::UINT64 => typed(
                dtype,
                raw.chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as f64),
            ),
            code::BOOL => typed(dtype, raw.iter().map(|&b| f64::from(u8::from(b != 0)))),
            _ => typed(dtype, raw.iter().map(|&b| f64::from(b))),
        }
    } else {
        match code {
            code::FLOAT => Data::F32(t.float_data.clone()),
            code::FLOAT16 => Data::F32(
                t.int32_data
                    .iter()
                    .map(|&v| half::f16::from_bits(v as u16).to_f32())
                    .collect(),
            ),
            code::BFLOAT16 => Data::F32(
                t.int32_data
                    .iter()
                    .map(|&v| half::bf16::from_bits(v as u16).to_f32())
                    .collect(),
            ),
            code::INT64 => Data::I64(t.int64_data.clone()),
            code::DOUBLE => typed(dtype, t.double_data.iter().copied()),
            code::INT8 => typed(dtype, t.int32_data.iter().map(|&v| f64::from(v as i8))),
            code::UINT8 => typed(dtype, t.int32_data.iter().map(|&v| f64::from(v as u8))),
            code::INT16 => typed(dtype, t.int32_data.iter().map(|&v| f64::from(v as i16))),
            code::UINT16 => typed(dtype, t.int32_data.iter().map(|&v| f64::from(v as u16))),
            code::UINT32 => typed(dtype, t.uint64_data.iter().map(|&v| f64::from(v as u32))),
            code::UINT64 => typed(dtype, t.uint64_data.iter().map(|&v| v as f64)),
            code::BOOL => typed(
                dtype,
                t.int32_data.iter().map(|&v| f64::from(u8::from(v != 0))),
            ),
            _ => typed(dtype, t.int32_data.iter().map(|&v| f64::from(v))),
        }
    };
    if data.len() != numel {
        return Err(format!(
            "is truncated or corrupt: dims {dims:?} need {numel} values, it holds {}",
            data.len()
        ));
    }
    // Compile-time values are exact as f64 up to 2^53; a larger uint64 would round.
    if let Data::Typed {
        dtype: DType::U64,
        values,
    } = &data
        && values.iter().any(|&v| v > 9_007_199_254_740_992.0)
    {
        return Err("holds a UINT64 value above 2^53, which tinyonnx cannot keep exact".into());
    }
    Ok(Const { dims, data })
}

/// A tensor of an 8-, 4- or 2-bit format: one value a byte, or two or four (the first in
/// the lowest bits), in `raw_data` or, one byte each, in `int32_data`; widened to its
/// carrier.
fn narrow_tensor(
    t: &pb::TensorProto,
    n: Narrow,
    dims: Vec<usize>,
    numel: usize,
) -> Result<Const, String> {
    let bytes: Vec<u8> = match t.raw_data.as_deref() {
        Some(raw) if !raw.is_empty() => raw.to_vec(),
        _ => t.int32_data.iter().map(|&v| v as u8).collect(),
    };
    let per_byte = (8 / n.bits()) as usize;
    if bytes.len() != numel.div_ceil(per_byte) {
        return Err(format!(
            "is truncated or corrupt: dims {dims:?} need {} bytes of {}, it holds {}",
            numel.div_ceil(per_byte),
            type_name(n.onnx_code()),
            bytes.len()
        ));
    }
    let (bits, mask) = (n.bits() as usize, (1u32 << n.bits()) - 1);
    let values = (0..numel).map(|i| {
        let byte = u32::from(bytes[i / per_byte]);
        n.decode(byte >> (bits * (i % per_byte)) & mask)
    });
    let dtype = crate::ops::elementwise::cast::carrier(n);
    let data = if dtype == DType::F32 {
        Data::F32(values.map(|v| v as f32).collect())
    } else {
        typed(dtype, values)
    };
    Ok(Const { dims, data })
}

fn typed(dtype: DType, values: impl Iterator<Item = f64>) -> Data {
    Data::Typed {
        dtype,
        values: values.collect(),
    }
}

/// The kind an attribute holds: its `type` field, or the field that is set when an
/// old exporter left `type` out.
pub fn attr_kind(a: &pb::AttributeProto) -> Option<i32> {
    if let Some(t) = a.r#type.filter(|&t| t != 0) {
        return Some(t);
    }
    Some(if a.f.is_some() {
        1
    } else if a.i.is_some() {
        2
    } else if a.s.is_some() {
        3
    } else if a.t.is_some() {
        4
    } else if a.g.is_some() {
        5
    } else if !a.floats.is_empty() {
        6
    } else if !a.ints.is_empty() {
        7
    } else if !a.strings.is_empty() {
        8
    } else {
        return None;
    })
}

/// An attribute as the value an operator's schema wants (`kind`); ints convert to
/// floats where a float is wanted.
pub fn attr_value(a: &pb::AttributeProto, kind: AttrKind) -> Result<AttrValue, String> {
    let k = attr_kind(a);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(match (kind, k) {
        (AttrKind::Int, Some(2)) => AttrValue::Int(a.i.unwrap_or(0)),
        (AttrKind::Float, Some(1)) => AttrValue::Float(a.f.unwrap_or(0.0)),
        (AttrKind::Float, Some(2)) => AttrValue::Float(a.i.unwrap_or(0) as f32),
        (AttrKind::Ints, Some(7)) => AttrValue::Ints(a.ints.clone()),
        (AttrKind::Ints, None) => AttrValue::Ints(Vec::new()),
        (AttrKind::Floats, Some(6)) => AttrValue::Floats(a.floats.clone()),
        (AttrKind::Floats, None) => AttrValue::Floats(Vec::new()),
        (AttrKind::Str, Some(3)) => AttrValue::Str(text(a.s.as_deref().unwrap_or(&[]))),
        (AttrKind::Strs, Some(8)) => AttrValue::Strs(a.strings.iter().map(|s| text(s)).collect()),
        (AttrKind::Strs, None) => AttrValue::Strs(Vec::new()),
        (want, got) => {
            return Err(format!(
                "should hold {}, the file has {}",
                want.describe(),
                match got {
                    Some(1) => "a float",
                    Some(2) => "an integer",
                    Some(3) => "a string",
                    Some(4) => "a tensor",
                    Some(5) => "a graph",
                    Some(6) => "a list of floats",
                    Some(7) => "a list of integers",
                    Some(8) => "a list of strings",
                    _ => "no value",
                }
            ));
        }
    })
}

/// An integer attribute.
pub fn int(node: &pb::NodeProto, name: &str) -> Option<i64> {
    find(node, name).and_then(|a| a.i)
}

/// A list-of-integers attribute.
pub fn ints(node: &pb::NodeProto, name: &str) -> Option<Vec<i64>> {
    find(node, name).map(|a| a.ints.clone())
}

/// A float attribute.
pub fn float(node: &pb::NodeProto, name: &str) -> Option<f32> {
    find(node, name).and_then(|a| a.f)
}

/// A string attribute (lossily decoded).
pub fn string(node: &pb::NodeProto, name: &str) -> Option<String> {
    find(node, name)
        .and_then(|a| a.s.as_deref())
        .map(|s| String::from_utf8_lossy(s).into_owned())
}

/// The attribute `name` of `node`.
pub fn find<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    node.attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
}

/// An INT attribute.
pub fn int_attr(name: &str, i: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.into()),
        r#type: Some(2),
        i: Some(i),
        ..Default::default()
    }
}
