//! `Add`, `Sub`, `Mul`, `Div`: element-wise with numpy (multidirectional) broadcasting.
//! Opset 14 for Add/Sub/Mul/Div adds only integer types over 13; the float semantics are equal.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::*;
use crate::types::{TensorType, broadcast, broadcast_strides};

const INPUTS: &[InputSpec] = &[input("A"), input("B")];

macro_rules! binary_op {
    ($static:ident, $name:literal, $lower:ident, $kernel:literal) => {
        pub static $static: OpSchema = OpSchema {
            op_type: $name,
            inputs: INPUTS,
            inplace: Some(0),
            infer,
            lower: $lower,
            ..BASE
        };

        fn $lower(cx: &LowerCtx) -> TokenStream {
            lower(cx, $kernel)
        }
    };
}

binary_op!(ADD, "Add", lower_add, "Add");
binary_op!(SUB, "Sub", lower_sub, "Sub");
binary_op!(MUL, "Mul", lower_mul, "Mul");
binary_op!(DIV, "Div", lower_div, "Div");

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let a = cx.input(0);
    let b = cx.input(1);
    match broadcast(&a.shape, &b.shape) {
        Some(shape) => Ok(vec![TensorType {
            dtype: a.dtype,
            shape,
        }]),
        None => Err(OpError::input(
            1,
            format!(
                "{} cannot broadcast A {} with B {}",
                cx.op.op_type, a.shape, b.shape
            ),
        )
        .with_note(At::Input(0), format!("A is {}", a.shape))),
    }
}

fn lower(cx: &LowerCtx, kernel: &str) -> TokenStream {
    let op = Ident::new(kernel, Span::call_site());
    let kernels = kernels();
    let out = &cx.outputs[0];
    let y = &out.expr;
    let b = cx.input(1);
    let b_expr = &b.expr;
    let b_str = broadcast_strides(&b.shape, &out.shape);
    let shape = &out.shape;
    let rank = shape.len();
    if cx.inplace {
        return quote! {
            #kernels::binary::binary_inplace::<#kernels::binary::#op, #rank>(#y, #b_expr, &[#(#b_str),*], &[#(#shape),*]);
        };
    }
    let a = cx.input(0);
    let a_expr = &a.expr;
    if a.shape == out.shape && b.shape == out.shape {
        return quote! {
            #kernels::binary::binary_same::<#kernels::binary::#op>(#a_expr, #b_expr, #y);
        };
    }
    let a_str = broadcast_strides(&a.shape, &out.shape);
    quote! {
        #kernels::binary::binary::<#kernels::binary::#op, #rank>(#a_expr, &[#(#a_str),*], #b_expr, &[#(#b_str),*], #y, &[#(#shape),*]);
    }
}
