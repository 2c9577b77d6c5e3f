//! `Cast` (opset 13) between every element type the DSL knows.
//!
//! `Cast`'s `to` is the ONNX `TensorProto.DataType` code (`1` float, `11` double, `7`
//! int64, `6` int32, `3` int8, `2` uint8, `9` bool); the DSL also takes the dtype's name
//! (`to = i64`). Float to integer truncates toward zero; ONNX leaves out-of-range values
//! undefined, the kernel saturates them (Rust's `as`).
//!
//! `to` may also name a narrow storage format (`f16`, `bf16`, the float 8 formats,
//! `f4e2m1`, `i4`, `u4`, `i2`, `u2`: [`Narrow`]), which tinyonnx carries in a wider element type
//! (f32, i8, u8): the cast rounds to the format's grid, and the emitted ONNX says so
//! with a `Cast` to the format followed by one back to the carrier.

use quote::quote;
use tinyonnx_layout::narrow::Narrow;

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
            // Narrow formats (ONNX Runtime has no FLOAT4E2M1 cast; the node suite checks it).
            "opset = 21; input x: f32[2, 3]; output a = Cast(Mul(x, 300.0), to = f16); output b = Cast(Mul(x, 1000.0), to = bf16); output c = Cast(Mul(x, 500.0), to = f8e4m3fn); output d = Cast(Mul(x, 200.0), to = f8e4m3fnuz, saturate = 0); output e = Cast(Mul(x, 70000.0), to = f8e5m2); output f = Cast(Mul(x, 50000.0), to = 20, saturate = 0); output g = Cast(Cast(Mul(x, 20.0), to = i32), to = i4); output h = Cast(Cast(Mul(x, 20.0), to = i32), to = u4); output i = Cast(Cast(Mul(x, 20.0), to = i32), to = i2); output j = Cast(Mul(x, 20.0), to = u2); output k = Cast(Mul(x, 9.0), to = i2);",
            "opset = 21; input x: f64[5]; output a = Cast(Mul(x, Cast(Constant(value_float = 30000.0), to = f64)), to = f16); output b = Cast(x, to = f8e5m2); output c = Cast(Cast(x, to = f8e4m3fn), to = f64);",
            "input x: f32[4]; output a = Add(Cast(Mul(x, 5000.0), to = f16), x); output b = Cast(Constant(value_floats = [0.1, 60000.0, -3.3]), to = f16);",
        ])
    },
    op_type: "Cast",
    inputs: &[input("input")],
    attrs: &[
        attr("to", AttrKind::Int, AttrDefault::Required),
        attr("saturate", AttrKind::Int, AttrDefault::Int(1)).since(19),
    ],
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
    let to = match target(cx.attrs)? {
        Target::Plain(d) => d,
        Target::Narrow(n) => return Ok(fold_narrow(x, n, saturate(cx.attrs))),
    };
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

/// A cast to a narrow format of a compile-time value, rounded by the function the kernel
/// calls; integers only where the conversion to i64 is exact (below 2^53, not NaN).
fn fold_narrow(x: &Data, to: Narrow, saturate: bool) -> Vec<Data> {
    let v = x.to_f64();
    if to.is_int() {
        if v.iter()
            .any(|f| f.is_nan() || f.abs() >= 9_007_199_254_740_992.0)
        {
            return Vec::new();
        }
        return vec![Data::Typed {
            dtype: carrier(to),
            values: v
                .iter()
                .map(|&f| to.wrap(f.trunc() as i64) as f64)
                .collect(),
        }];
    }
    vec![Data::F32(
        v.iter().map(|&f| to.round(f, saturate) as f32).collect(),
    )]
}

/// What a `Cast` makes: an element type, or a narrow format carried in one.
#[derive(Debug, Clone, Copy)]
enum Target {
    Plain(DType),
    Narrow(Narrow),
}

/// The element type that carries a narrow format's values.
pub fn carrier(n: Narrow) -> DType {
    match n {
        Narrow::I4 | Narrow::I2 => DType::I8,
        Narrow::U4 | Narrow::U2 => DType::U8,
        _ => DType::F32,
    }
}

fn saturate(attrs: &Attrs) -> bool {
    attrs.int("saturate") != 0
}

/// The dtype whose ONNX `TensorProto.DataType` code is `code`.
pub fn dtype_of_code(code: i64) -> Option<DType> {
    DType::ALL
        .into_iter()
        .find(|d| i64::from(d.onnx_code()) == code)
}

/// What `Cast`'s `to` names.
fn target(cx_attrs: &Attrs) -> Result<Target, OpError> {
    let code = cx_attrs.int("to");
    if let Some(d) = dtype_of_code(code) {
        return Ok(Target::Plain(d));
    }
    if let Some(n) = Narrow::from_onnx(code) {
        return Ok(Target::Narrow(n));
    }
    let known: Vec<String> = DType::ALL
        .iter()
        .map(|d| format!("{} ({d})", d.onnx_code()))
        .chain(
            Narrow::ALL
                .iter()
                .map(|n| format!("{} ({})", n.onnx_code(), n.name())),
        )
        .collect();
    Err(OpError::attr(
        "to",
        format!(
            "Cast to = {code} is not a type tinyonnx supports: expected one of {}, or the name (to = i64)",
            known.join(", ")
        ),
    ))
}

fn infer_cast(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let dtype = match target(cx.attrs)? {
        Target::Plain(d) => d,
        Target::Narrow(n) => {
            if cx.opset < n.since_opset() {
                return Err(OpError::attr(
                    "to",
                    format!(
                        "Cast to {} needs opset {} or later; the model has opset {}",
                        n.name(),
                        n.since_opset(),
                        cx.opset
                    ),
                ));
            }
            carrier(n)
        }
    };
    Ok(vec![TensorType {
        dtype,
        shape: cx.input(0).shape.clone(),
    }])
}

fn lower_cast(cx: &LowerCtx) -> TokenStream {
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    if let Ok(Target::Narrow(n)) = target(cx.attrs) {
        let variant = quote::format_ident!("{}", format!("{n:?}"));
        let format = quote! { ::tinyonnx::layout::narrow::Narrow::#variant };
        if n.is_int() {
            return quote! { #kernels::num::cast_narrow_int(#x, #y, #format); };
        }
        let sat = saturate(cx.attrs);
        return quote! { #kernels::num::cast_narrow_float(#x, #y, #format, #sat); };
    }
    lower_plain_cast(cx)
}

/// A cast between two element types.
fn lower_plain_cast(cx: &LowerCtx) -> TokenStream {
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    if cx.input(0).dtype == cx.outputs[0].dtype {
        return quote! { #kernels::copy::copy(#y, #x); };
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
            // A target with no elements, as exporters write it: only its type is read.
            "opset = 15; input x: f32[2, 3]; input t: f64[0]; input u: i8[2, 0]; output a = CastLike(x, t); output b = CastLike(Mul(x, 9.0), u);",
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
    lower: lower_plain_cast,
    ..BASE
};
