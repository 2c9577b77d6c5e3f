//! Element-wise unary operators: `Identity`, `Relu`, `Sigmoid`, `Tanh` (opset 13/14 semantics).

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::{InferCtx, InputSpec, LowerCtx, OpError, OpSchema, elementwise_macs, kernels};
use crate::types::{DType, TensorType};

const INPUTS: &[InputSpec] = &[InputSpec {
    name: "X",
    optional: false,
}];

macro_rules! unary_op {
    ($static:ident, $name:literal, $lower:ident) => {
        pub static $static: OpSchema = OpSchema {
            op_type: $name,
            inputs: INPUTS,
            outputs: 1,
            attrs: &[],
            since_opset: 13,
            dtypes: &[DType::F32],
            inplace: Some(0),
            infer,
            lower: $lower,
            macs: elementwise_macs,
        };

        fn $lower(cx: &LowerCtx) -> TokenStream {
            lower(cx, $name)
        }
    };
}

unary_op!(IDENTITY, "Identity", lower_identity);
unary_op!(RELU, "Relu", lower_relu);
unary_op!(SIGMOID, "Sigmoid", lower_sigmoid);
unary_op!(TANH, "Tanh", lower_tanh);

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    Ok(vec![cx.input(0).clone()])
}

fn lower(cx: &LowerCtx, kernel: &str) -> TokenStream {
    let kernels = kernels();
    let y = &cx.outputs[0].expr;
    if kernel == "Identity" {
        if cx.inplace {
            return TokenStream::new();
        }
        let x = &cx.input(0).expr;
        return quote! { #y.copy_from_slice(#x); };
    }
    let op = Ident::new(kernel, Span::call_site());
    if cx.inplace {
        return quote! { #kernels::unary::unary_inplace::<#kernels::unary::#op>(#y); };
    }
    let x = &cx.input(0).expr;
    quote! { #kernels::unary::unary::<#kernels::unary::#op>(#x, #y); }
}
