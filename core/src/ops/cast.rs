//! `Cast` (opset 13) between every element type the DSL knows, and `Where` (opset 9
//! semantics; 16 only adds bfloat16): element-wise selection with broadcasting.
//!
//! `Cast`'s `to` is the ONNX `TensorProto.DataType` code (`1` float, `11` double, `7`
//! int64, `6` int32, `3` int8, `2` uint8, `9` bool); the DSL also takes the dtype's name
//! (`to = i64`). Float to integer truncates toward zero; ONNX leaves out-of-range values
//! undefined, the kernel saturates them (Rust's `as`).

use quote::quote;

use super::*;
use crate::types::{TensorType, broadcast, broadcast_strides};

pub static CAST: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3]; output a = Cast(Mul(x, 7.0), to = i32); output b = Cast(Mul(x, 7.0), to = i64); output c = Cast(Mul(x, 7.0), to = i8); output d = Cast(Abs(Mul(x, 100.0)), to = u8); output e = Cast(x, to = f64); output f = Cast(Cast(Mul(x, 2.0), to = i32), to = bool); output g = Cast(x, to = f32);",
            "input x: f64[4]; output a = Cast(x, to = f32); output b = Cast(Mul(x, Cast(Constant(value_float = 9.0), to = f64)), to = i64);",
            "input x: i64[2, 2]; output a = Cast(x, to = f32); output b = Cast(x, to = i32); output c = Cast(x, to = u8); output d = Cast(x, to = bool); output e = Cast(x, to = 11);",
            "input x: i32[3]; output a = Cast(Mul(x, Cast(Constant(value_int = 40), to = i32)), to = i8); output b = Cast(x, to = f64);",
            "input x: i8[5]; output a = Cast(x, to = u8); output b = Cast(x, to = i64); output c = Cast(x, to = f32);",
            "input x: u8[5]; output a = Cast(x, to = i8); output b = Cast(x, to = i32); output c = Cast(x, to = 1);",
            "input x: bool[2, 3]; output a = Cast(x, to = f32); output b = Cast(x, to = i64); output c = Cast(x, to = u8); output d = Cast(x, to = f64);",
        ])
    },
    op_type: "Cast",
    inputs: &[input("input")],
    attrs: &[attr("to", AttrKind::Int, AttrDefault::Required)],
    dtypes: ALL_DTYPES,
    infer: infer_cast,
    lower: lower_cast,
    ..BASE
};

/// The dtype of `Cast`'s `to`.
fn target(cx_attrs: &Attrs) -> Result<DType, OpError> {
    let code = cx_attrs.int("to");
    DType::ALL
        .into_iter()
        .find(|d| i64::from(d.onnx_code()) == code)
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

pub static WHERE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input c: bool[2, 3]; input x: f32[2, 3]; input y: f32[3]; output z = Where(c, x, y); output w = Where(c, y, x);",
            "input c: bool[3, 1]; input x: i64[1, 4]; input y: i64[]; output z = Where(c, x, y);",
            "input c: bool[4]; input x: i32[2, 4]; input y: i32[2, 1]; output z = Where(c, x, y);",
            "input c: bool[]; input x: f64[3]; input y: f64[3]; output z = Where(c, x, y);",
            "input c: bool[2, 2]; input x: i8[2, 2]; input y: i8[2, 2]; input a: f32[2, 2]; output z = Where(c, x, y); output u = Where(Greater(a, Constant(value_float = 0.0)), Cast(x, to = u8), Cast(y, to = u8));",
        ])
    },
    op_type: "Where",
    inputs: &[bool_input("condition"), input("X"), input("Y")],
    // ONNX allows bool X and Y too; ONNX Runtime has no kernel for them, so nothing could
    // check ours: write Or(And(c, x), And(Not(c), y)) instead.
    dtypes: NUMERIC,
    inplace: Some(1),
    infer: infer_where,
    lower: lower_where,
    ..BASE
};

fn infer_where(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let (c, x, y) = (cx.input(0), cx.input(1), cx.input(2));
    let xy = broadcast(&x.shape, &y.shape).ok_or_else(|| {
        OpError::input(
            2,
            format!("Where cannot broadcast X {} with Y {}", x.shape, y.shape),
        )
    })?;
    let shape = broadcast(&c.shape, &xy).ok_or_else(|| {
        OpError::input(
            0,
            format!(
                "Where cannot broadcast the condition {} with X and Y ({xy})",
                c.shape
            ),
        )
    })?;
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape,
    }])
}

fn lower_where(cx: &LowerCtx) -> TokenStream {
    let kernels = kernels();
    let out = &cx.outputs[0];
    let shape = &out.shape;
    let rank = shape.len();
    let y = &out.expr;
    let operand = |i: usize| {
        let o = cx.input(i);
        let (e, s) = (&o.expr, broadcast_strides(&o.shape, shape));
        (e.clone(), quote!(&[#(#s),*]))
    };
    let (c, cs) = operand(0);
    let (z, zs) = operand(2);
    if cx.inplace {
        // X's buffer is the output: keep X where the condition holds.
        return quote! {
            #kernels::binary::select_inplace::<_, #rank>(#c, #cs, #z, #zs, #y, &[#(#shape),*]);
        };
    }
    let (x, xs) = operand(1);
    quote! {
        #kernels::binary::select::<_, #rank>(#c, #cs, #x, #xs, #z, #zs, #y, &[#(#shape),*]);
    }
}
