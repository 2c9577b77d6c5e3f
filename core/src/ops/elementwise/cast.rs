//! `Cast` (opset 13) between every element type the DSL knows.
//!
//! `Cast`'s `to` is the ONNX `TensorProto.DataType` code (`1` float, `11` double, `7`
//! int64, `6` int32, `3` int8, `2` uint8, `9` bool); the DSL also takes the dtype's name
//! (`to = i64`). Float to integer truncates toward zero; ONNX leaves out-of-range values
//! undefined, the kernel saturates them (Rust's `as`).

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::TensorType;

pub static CAST: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3]; output a = Cast(Mul(x, 7.0), to = i32); output b = Cast(Mul(x, 7.0), to = i64); output c = Cast(Mul(x, 7.0), to = i8); output d = Cast(Abs(Mul(x, 100.0)), to = u8); output e = Cast(x, to = f64); output f = Cast(Cast(Mul(x, 2.0), to = i32), to = bool); output g = Cast(x, to = f32);",
            "input x: f64[4]; output a = Cast(x, to = f32); output b = Cast(Mul(x, Cast(Constant(value_float = 9.0), to = f64)), to = i64);",
            "input x: i64[2, 2]; output a = Cast(x, to = f32); output b = Cast(x, to = i32); output c = Cast(x, to = u8); output d = Cast(x, to = bool); output e = Cast(x, to = 11);",
            "input x: i32[3]; output a = Cast(Mul(x, Cast(Constant(value_int = 40), to = i32)), to = i8); output b = Cast(x, to = f64);",
            "input x: i8[5]; output a = Cast(x, to = u8); output b = Cast(x, to = i64); output c = Cast(x, to = f32);",
            "input x: u8[5]; output a = Cast(x, to = i8); output b = Cast(x, to = i32); output c = Cast(x, to = 1);",
            "input x: f32[2, 3]; output a = Cast(Mul(x, 900.0), to = i16); output b = Cast(Mul(x, 900.0), to = u16); output c = Cast(Mul(x, 9.0), to = u32); output d = Cast(Abs(Mul(x, 9.0)), to = u64);",
            "input x: u16[5]; output a = Cast(x, to = f32); output b = Cast(x, to = i16); output c = Cast(x, to = u64); output d = Cast(Cast(x, to = u32), to = i8); output e = Cast(x, to = bool);",
            "input x: i16[5]; output a = Cast(x, to = f64); output b = Cast(x, to = u16); output c = Cast(x, to = u32); output d = Cast(x, to = i64);",
            "input x: u64[5]; output a = Cast(x, to = f32); output b = Cast(x, to = i32); output c = Cast(x, to = u8);",
            "input x: bool[2, 3]; output a = Cast(x, to = f32); output b = Cast(x, to = i64); output c = Cast(x, to = u8); output d = Cast(x, to = f64);",
        ])
    },
    op_type: "Cast",
    inputs: &[input("input")],
    attrs: &[attr("to", AttrKind::Int, AttrDefault::Required)],
    dtypes: ALL_DTYPES,
    infer: infer_cast,
    fold: Some(fold_cast),
    lower: lower_cast,
    ..BASE
};

/// A cast of a compile-time value, when every value converts exactly as the kernel would
/// without leaving the target's range (otherwise the kernel casts on the device).
fn fold_cast(cx: &InferCtx) -> Result<Vec<Data>, OpError> {
    let Some(x) = cx.consts.first().copied().flatten() else {
        return Ok(Vec::new());
    };
    let to = target(cx.attrs)?;
    // i64 beyond 2^53 does not pass through f64 exactly.
    if let Data::I64(v) = x
        && v.iter().any(|&i| i.unsigned_abs() > 1 << 53)
    {
        return Ok(Vec::new());
    }
    let v = x.to_f64();
    let data = match to {
        DType::F32 => Data::F32(v.iter().map(|&f| f as f32).collect()),
        DType::F64 => Data::Typed {
            dtype: to,
            values: v,
        },
        DType::Bool => Data::Typed {
            dtype: to,
            values: v.iter().map(|&f| f64::from(u8::from(f != 0.0))).collect(),
        },
        _ => {
            let (lo, hi) = match to {
                DType::I64 => (-(2f64.powi(53)), 2f64.powi(53)),
                DType::U64 => (0.0, 2f64.powi(53)),
                DType::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
                DType::U32 => (0.0, f64::from(u32::MAX)),
                DType::I16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
                DType::U16 => (0.0, f64::from(u16::MAX)),
                DType::I8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
                _ => (0.0, f64::from(u8::MAX)),
            };
            let t: Vec<f64> = v.iter().map(|f| f.trunc()).collect();
            if t.iter().any(|f| !(lo..=hi).contains(f)) {
                return Ok(Vec::new());
            }
            if to == DType::I64 {
                Data::I64(t.iter().map(|&f| f as i64).collect())
            } else {
                Data::Typed {
                    dtype: to,
                    values: t,
                }
            }
        }
    };
    Ok(vec![data])
}

/// The dtype whose ONNX `TensorProto.DataType` code is `code`.
pub fn dtype_of_code(code: i64) -> Option<DType> {
    DType::ALL
        .into_iter()
        .find(|d| i64::from(d.onnx_code()) == code)
}

/// The dtype of `Cast`'s `to`.
fn target(cx_attrs: &Attrs) -> Result<DType, OpError> {
    let code = cx_attrs.int("to");
    dtype_of_code(code)
        .ok_or_else(|| {
            let known: Vec<String> = DType::ALL
                .iter()
                .map(|d| format!("{} ({d})", d.onnx_code()))
                .collect();
            OpError::attr(
                "to",
                format!(
                    "Cast to = {code} is not a dtype tinyonnx supports: expected one of {}, or the name (to = i64)",
                    known.join(", ")
                ),
            )
        })
}

fn infer_cast(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    Ok(vec![TensorType {
        dtype: target(cx.attrs)?,
        shape: cx.input(0).shape.clone(),
    }])
}

fn lower_cast(cx: &LowerCtx) -> TokenStream {
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    if cx.input(0).dtype == cx.outputs[0].dtype {
        return quote! { <[_]>::copy_from_slice(#y, #x); };
    }
    quote! { #kernels::num::cast(#x, #y); }
}

/// `CastLike` (opset 15): `Cast` to the element type of a second tensor, whose values are
/// not read.
pub static CAST_LIKE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 15; input x: f32[2, 3]; input t: i32[1]; output a = CastLike(Mul(x, 7.0), t); output b = CastLike(x, x);",
            "opset = 15; input x: i64[4]; input t: f64[]; input u: u8[2]; output a = CastLike(x, t); output b = CastLike(x, u);",
            "opset = 15; input x: bool[3]; input t: f32[3]; output a = CastLike(x, t);",
        ])
    },
    op_type: "CastLike",
    inputs: &[input("input"), any_input("target_type", false)],
    dtypes: ALL_DTYPES,
    since_opset: 15,
    infer: |cx| {
        Ok(vec![TensorType {
            dtype: cx.input(1).dtype,
            shape: cx.input(0).shape.clone(),
        }])
    },
    lower: lower_cast,
    ..BASE
};
