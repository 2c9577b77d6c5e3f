//! `Constant` (opset 13): a tensor from an attribute, folded at compile time. The DSL
//! takes `value_float`, `value_floats`, `value_int` or `value_ints`.

use quote::quote;

use crate::data::Data;
use crate::ops::schema::prelude::*;
use crate::types::{Shape, TensorType};

pub static CONSTANT: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[3]; output y = Add(x, Constant(value_floats = [0.5, -1.0, 2.0])); output z = Mul(x, Constant(value_float = 3.0));",
            "input x: i64[2]; output y = Add(x, Constant(value_ints = [7, -3])); output z = Sub(x, Constant(value_int = 4));",
        ])
    },
    op_type: "Constant",
    attrs: &[
        attr("value_float", AttrKind::Float, AttrDefault::Absent),
        attr("value_floats", AttrKind::Floats, AttrDefault::Absent),
        attr("value_int", AttrKind::Int, AttrDefault::Absent),
        attr("value_ints", AttrKind::Ints, AttrDefault::Absent),
    ],
    dtypes: &[DType::F32, DType::I64],
    infer,
    fold: Some(fold),
    lower,
    macs: no_macs,
    ..BASE
};

fn fold(cx: &InferCtx) -> Result<Vec<Data>, OpError> {
    let given: Vec<&str> = ["value_float", "value_floats", "value_int", "value_ints"]
        .into_iter()
        .filter(|n| cx.attrs.is_explicit(n))
        .collect();
    if given.len() != 1 {
        return Err(OpError::op(format!(
            "Constant needs exactly one of value_float, value_floats, value_int, value_ints; got {}",
            if given.is_empty() {
                "none".to_string()
            } else {
                given.join(", ")
            }
        )));
    }
    Ok(vec![match cx.attrs.get(given[0]).expect("explicit") {
        AttrValue::Float(v) => Data::F32(vec![*v]),
        AttrValue::Floats(v) => Data::F32(v.clone()),
        AttrValue::Int(v) => Data::I64(vec![*v]),
        AttrValue::Ints(v) => Data::I64(v.clone()),
        other => unreachable!("bug: Constant attribute {other:?}"),
    }])
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let data = fold(cx)?;
    let scalar = cx.attrs.is_explicit("value_float") || cx.attrs.is_explicit("value_int");
    let shape = if scalar {
        Shape(vec![])
    } else {
        Shape::fixed(&[data[0].len()])
    };
    let dtype = data[0].dtype();
    Ok(vec![TensorType { dtype, shape }])
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let y = &cx.outputs[0].expr;
    match cx.output_consts[0].expect("Constant folds") {
        Data::F32(v) => quote! { <[_]>::copy_from_slice(#y, &[#(#v),*]); },
        Data::I64(v) => quote! { <[_]>::copy_from_slice(#y, &[#(#v),*]); },
        Data::Typed { .. } => unreachable!("bug: Constant folds to f32 or i64"),
    }
}
