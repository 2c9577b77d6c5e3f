//! Element-wise unary operators: `Identity`, `Relu`, `Sigmoid`, `Tanh` (opset 13/14 semantics).

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::TensorType;

const INPUTS: &[InputSpec] = &[input("X")];

macro_rules! unary_op {
    ($static:ident, $name:literal, $lower:ident, $view:literal) => {
        unary_op!($static, $name, $lower, $view, &[DType::F32]);
    };
    ($static:ident, $name:literal, $lower:ident, $view:literal, $dtypes:expr $(, $field:ident = $value:expr)*) => {
        pub static $static: OpSchema = OpSchema {
            $($field: $value,)*
            op_type: $name,
            dtypes: $dtypes,
            inputs: INPUTS,
            inplace: Some(0),
            view: $view,
            infer,
            lower: $lower,
            cases: |op| unary_cases(op, None),
            ..BASE
        };

        fn $lower(cx: &LowerCtx) -> TokenStream {
            lower(cx, $name)
        }
    };
}

unary_op!(IDENTITY, "Identity", lower_identity, true, ALL_DTYPES);
unary_op!(
    RELU,
    "Relu",
    lower_relu,
    false,
    &[DType::F32, DType::F64],
    absorbed = Some(Absorbed::Relu)
);
unary_op!(
    SIGMOID,
    "Sigmoid",
    lower_sigmoid,
    false,
    &[DType::F32, DType::F64]
);
unary_op!(TANH, "Tanh", lower_tanh, false, &[DType::F32, DType::F64]);

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
        return quote! { #kernels::copy::copy(#y, #x); };
    }
    if cx.outputs[0].dtype == DType::F64 {
        // f64: libm's double-precision functions through the generic `map` kernel (the
        // f32 kernels use single-precision vector approximations).
        let f = match kernel {
            "Relu" => quote!(|v: f64| if v < 0.0 { 0.0 } else { v }),
            "Sigmoid" => quote!(|v: f64| 1.0 / (1.0 + ::tinyonnx::__export::libm::exp(-v))),
            _ => quote!(|v: f64| ::tinyonnx::__export::libm::tanh(v)),
        };
        if cx.inplace {
            return quote! { #kernels::unary::map_inplace(#y, #f); };
        }
        let x = &cx.input(0).expr;
        return quote! { #kernels::unary::map(#x, #y, #f); };
    }
    let op = Ident::new(kernel, Span::call_site());
    if cx.inplace {
        return quote! { #kernels::unary::unary_inplace::<#kernels::unary::#op>(#y); };
    }
    let x = &cx.input(0).expr;
    quote! { #kernels::unary::unary::<#kernels::unary::#op>(#x, #y); }
}

/// `Gelu` (opset 20): `approximate = "none"` uses erf, `"tanh"` the tanh formula.
pub static GELU: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 20; input x: f32[2, 3, 4]; output y = Gelu(Mul(x, 3.0)); output z = Gelu(Mul(x, 3.0), approximate = \"tanh\");",
            "opset = 20; input x: f32[]; output y = Gelu(x);",
        ])
    },
    op_type: "Gelu",
    inputs: INPUTS,
    attrs: &[attr("approximate", AttrKind::Str, AttrDefault::Str("none"))],
    since_opset: 20,
    inplace: Some(0),
    infer: infer_gelu,
    lower: lower_gelu,
    ..BASE
};

fn infer_gelu(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    match cx.attrs.string("approximate") {
        Some("none") | Some("tanh") => Ok(vec![cx.input(0).clone()]),
        other => Err(OpError::attr(
            "approximate",
            format!(
                "Gelu approximate must be \"none\" or \"tanh\", got \"{}\"",
                other.unwrap_or_default()
            ),
        )),
    }
}

fn lower_gelu(cx: &LowerCtx) -> TokenStream {
    let kernel = if cx.attrs.string("approximate") == Some("tanh") {
        "GeluTanh"
    } else {
        "GeluErf"
    };
    lower(cx, kernel)
}
