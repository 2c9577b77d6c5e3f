//! Element-wise math and activations beyond the seed set, each a scalar formula the
//! lowering writes into one `map` kernel call: `Abs`, `Neg` (any signed type, wrapping),
//! `Not` (bool), `Exp`, `Log`, `Sqrt`,
//! `Reciprocal`, `Floor`, `Ceil`, `Erf`, `Softplus`, `Softsign`, `LeakyRelu`, `Elu`, `Selu`,
//! `HardSigmoid` (opset 6 semantics, unchanged through 21 for f32) and `Clip` (opset 13:
//! `min` and `max` as optional scalar inputs). Transcendentals are libm's; `Exp`, `Log`,
//! `Sqrt`, `Reciprocal`, `Floor`, `Ceil` and `LeakyRelu` also take f64.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::TensorType;

const X: &[InputSpec] = &[input("X")];

/// The scalar formula of an operator over `v`, whose element type is `t` in generated code.
type Formula = fn(&Attrs, &TokenStream, &TokenStream) -> TokenStream;

macro_rules! map_op {
    ($static:ident, $name:literal, $attrs:expr, $formula:expr) => {
        map_op!($static, $name, &[DType::F32], $attrs, $formula);
    };
    ($static:ident, $name:literal, $dtypes:expr, $attrs:expr, $formula:expr) => {
        pub static $static: OpSchema = OpSchema {
            op_type: $name,
            inputs: X,
            dtypes: $dtypes,
            attrs: $attrs,
            inplace: Some(0),
            infer: same_shape,
            cases: math_cases,
            lower: |cx| {
                const F: Formula = $formula;
                lower_map(cx, F)
            },
            ..BASE
        };
    };
}

/// libm's single-precision function `f` in generated code.
fn libm(f: &str) -> TokenStream {
    let f = proc_macro2::Ident::new(f, proc_macro2::Span::call_site());
    quote!(::tinyonnx::__export::libm::#f)
}

/// `Num::abs` / `Num::neg` in generated code: wrapping for integers.
fn num(f: &str) -> TokenStream {
    let f = proc_macro2::Ident::new(f, proc_macro2::Span::call_site());
    quote!(::tinyonnx::__export::kernels::num::Num::#f)
}

map_op!(ABS, "Abs", NUMERIC_WIDE, &[], |_, v, _| {
    let f = num("abs");
    quote!(#f(#v))
});
map_op!(
    NEG,
    "Neg",
    &[DType::F32, DType::F64, DType::I64, DType::I32, DType::I8],
    &[],
    |_, v, _| {
        let f = num("neg");
        quote!(#f(#v))
    }
);
map_op!(NOT, "Not", &[DType::Bool], &[], |_, v, _| quote!(!#v));
/// `Float::<f>` (libm's f32 or f64 function) in generated code.
fn float(f: &str) -> TokenStream {
    let f = proc_macro2::Ident::new(f, proc_macro2::Span::call_site());
    quote!(::tinyonnx::__export::kernels::num::Float::#f)
}

/// f32 and f64: the float types these operators take (ONNX Runtime has both kernels).
const FLOATS: &[DType] = &[DType::F32, DType::F64];

map_op!(EXP, "Exp", FLOATS, &[], |_, v, _| {
    let f = float("exp");
    quote!(#f(#v))
});
map_op!(LOG, "Log", FLOATS, &[], |_, v, _| {
    let f = float("ln");
    quote!(#f(#v))
});
map_op!(SQRT, "Sqrt", FLOATS, &[], |_, v, _| {
    let f = float("sqrt");
    quote!(#f(#v))
});
map_op!(RECIPROCAL, "Reciprocal", FLOATS, &[], |_, v, t| {
    quote!(<#t as ::tinyonnx::__export::kernels::num::Num>::ONE / #v)
});
map_op!(FLOOR, "Floor", FLOATS, &[], |_, v, _| {
    let f = float("floor");
    quote!(#f(#v))
});
map_op!(CEIL, "Ceil", FLOATS, &[], |_, v, _| {
    let f = float("ceil");
    quote!(#f(#v))
});
map_op!(ERF, "Erf", &[], |_, v, _| {
    let f = libm("erff");
    quote!(#f(#v))
});
// log(1 + e^x); above 20, e^x exceeds 1 by more than f32 resolves: x itself.
map_op!(SOFTPLUS, "Softplus", &[], |_, v, _| {
    let (log1p, exp) = (libm("log1pf"), libm("expf"));
    quote!(if #v > 20.0f32 { #v } else { #log1p(#exp(#v)) })
});
// x / (1 + |x|).
map_op!(SOFTSIGN, "Softsign", &[], |_, v, _| {
    let abs = libm("fabsf");
    quote!(#v / (1.0f32 + #abs(#v)))
});
map_op!(
    LEAKY_RELU,
    "LeakyRelu",
    FLOATS,
    &[attr("alpha", AttrKind::Float, AttrDefault::Float(0.01))],
    |a, v, t| {
        // The f32 attribute widened to the element type, as ONNX Runtime does.
        let alpha = a.float("alpha");
        quote!(if #v >= (0.0 as #t) { #v } else { (#alpha as #t) * #v })
    }
);
map_op!(
    ELU,
    "Elu",
    &[attr("alpha", AttrKind::Float, AttrDefault::Float(1.0))],
    |a, v, _| {
        let alpha = a.float("alpha");
        let expm1 = libm("expm1f");
        quote!(if #v >= 0.0f32 { #v } else { #alpha * #expm1(#v) })
    }
);
map_op!(
    SELU,
    "Selu",
    &[
        attr("alpha", AttrKind::Float, AttrDefault::Float(1.673_263_2)),
        attr("gamma", AttrKind::Float, AttrDefault::Float(1.050_701)),
    ],
    |a, v, _| {
        let (alpha, gamma) = (a.float("alpha"), a.float("gamma"));
        let exp = libm("expf");
        quote!(if #v > 0.0f32 { #gamma * #v } else { #gamma * (#alpha * #exp(#v) - #alpha) })
    }
);
map_op!(
    HARD_SIGMOID,
    "HardSigmoid",
    &[
        attr("alpha", AttrKind::Float, AttrDefault::Float(0.2)),
        attr("beta", AttrKind::Float, AttrDefault::Float(0.5)),
    ],
    |a, v, _| {
        let (alpha, beta) = (a.float("alpha"), a.float("beta"));
        quote!({
            let t = #alpha * #v + #beta;
            if t < 0.0f32 { 0.0f32 } else if t > 1.0f32 { 1.0f32 } else { t }
        })
    }
);

fn same_shape(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    Ok(vec![cx.input(0).clone()])
}

/// `y = f(x)` (or in place), `f` the operator's formula.
fn lower_map(cx: &LowerCtx, formula: Formula) -> TokenStream {
    let v = quote!(v);
    let t = elem(cx.input(0).dtype);
    let body = formula(cx.attrs, &v, &quote!(#t));
    map_call(cx, quote!(|#v: #t| #body))
}

fn map_call(cx: &LowerCtx, f: TokenStream) -> TokenStream {
    let kernels = kernels();
    let y = &cx.outputs[0].expr;
    if cx.inplace {
        return quote! { #kernels::unary::map_inplace(#y, #f); };
    }
    let x = &cx.input(0).expr;
    quote! { #kernels::unary::map(#x, #y, #f); }
}

/// `Clip` (opset 13): `min` and `max` are optional scalar inputs, read at run time;
/// NaN passes through.
pub static CLIP: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; weight lo: f32[] = constant(-0.25); output y = Clip(x, lo, 0.5); output z = Clip(x, _, 0.3); output w = Clip(x);",
            "input x: i32[3, 4]; output y = Clip(x, Cast(Constant(value_int = -2), to = i32), Cast(Constant(value_int = 3), to = i32));",
            "input x: u8[5]; output y = Clip(x, _, Cast(Constant(value_int = 9), to = u8));",
            "input x: f64[4]; output y = Clip(x, Cast(Constant(value_float = 0.0), to = f64));",
            // min above max: max everywhere (ONNX 11+: Min(max, Max(x, min))).
            "input x: f32[6]; weight lo: f32[] = constant(2.0); weight hi: f32[] = constant(1.0); output y = Clip(x, lo, hi);",
        ])
    },
    op_type: "Clip",
    inputs: &[input("input"), optional("min"), optional("max")],
    dtypes: NUMERIC,
    inplace: Some(0),
    infer: infer_clip,
    lower: lower_clip,
    ..BASE
};

fn infer_clip(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    for (i, name) in [(1, "min"), (2, "max")] {
        if let Some(t) = cx.opt_input(i)
            && t.shape.rank() != 0
        {
            return Err(OpError::input(
                i,
                format!("Clip {name} must be a scalar (rank 0), got {}", t.shape),
            ));
        }
    }
    Ok(vec![cx.input(0).clone()])
}

fn lower_clip(cx: &LowerCtx) -> TokenStream {
    let bound = |i: usize, none: TokenStream| match cx.inputs.get(i).cloned().flatten() {
        Some(o) => {
            let e = o.expr;
            quote!((#e)[0])
        }
        None => none,
    };
    let t = elem(cx.outputs[0].dtype);
    // An absent bound is the type's lowest or highest finite value (as in ONNX Runtime:
    // Clip(-inf) without a min is f32::MIN, not -inf).
    let lo = bound(1, quote!(<#t>::MIN));
    let hi = bound(2, quote!(<#t>::MAX));
    // Max with min first, then Min with max: a min above max gives max everywhere,
    // and NaN fails both comparisons and passes through.
    let body = quote!({
        let m = if v < lo { lo } else { v };
        if m > hi { hi } else { m }
    });
    let call = map_call(cx, quote!(|v: #t| #body));
    quote! {
        let lo: #t = #lo;
        let hi: #t = #hi;
        #call
    }
}

/// The generated unary cases (inputs made non-negative for `Log` and `Sqrt`) and the
/// attribute variants.
fn math_cases(op: &OpSchema) -> Vec<String> {
    let name = op.op_type;
    let pre = matches!(name, "Log" | "Sqrt" | "Reciprocal").then_some("Abs");
    let mut c = unary_cases(op, pre);
    c.extend(match name {
        "LeakyRelu" => cases(&["input x: f32[4, 5]; output y = LeakyRelu(x, alpha = 0.3);"]),
        "Elu" => cases(&["input x: f32[4, 5]; output y = Elu(x, alpha = 0.5);"]),
        "Selu" => cases(&["input x: f32[4, 5]; output y = Selu(x, alpha = 2.0, gamma = 0.5);"]),
        "HardSigmoid" => cases(&[
            "input x: f32[4, 5]; output y = HardSigmoid(Mul(x, 4.0), alpha = 0.7, beta = 0.4);",
        ]),
        "Softplus" => cases(&["input x: f32[4, 5]; output y = Softplus(Mul(x, 30.0));"]),
        "Softsign" => cases(&["input x: f32[4, 5]; output y = Softsign(Mul(x, 1000.0));"]),
        "Floor" | "Ceil" => vec![format!(
            "input x: f32[4, 5]; output y = {name}(Mul(x, 2.5)); output z = {name}(Neg(Mul(x, 2.5)));"
        )],
        "Abs" | "Neg" => cases(&["input x: i8[2, 3]; output y = Neg(Abs(Mul(x, x)));"]),
        _ => Vec::new(),
    });
    c
}
