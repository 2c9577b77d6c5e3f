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
    ($static:ident, $name:literal, $dtypes:expr, $attrs:expr, $formula:expr $(, $field:ident = $value:expr)*) => {
        pub static $static: OpSchema = OpSchema {
            $($field: $value,)*
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
map_op!(
    BITWISE_NOT,
    "BitwiseNot",
    INTEGERS,
    &[],
    |_, v, _| quote!(!#v),
    since_opset = 18
);
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
        // e^x - 1 as ONNX Runtime and the reference compute it (not libm's `expm1f`,
        // 560 more bytes of flash beside `expf`).
        let exp = libm("expf");
        quote!(if #v >= 0.0f32 { #v } else { #alpha * (#exp(#v) - 1.0f32) })
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
        quote!(::tinyonnx::__export::kernels::math::unit_clamp(#alpha * #v + #beta))
    }
);

// The trigonometric and hyperbolic functions (opset 7 and 9), libm's; ONNX Runtime
// computes Sin and Cos also in f64.
macro_rules! float_fn {
    ($($static:ident, $name:literal, $f:literal, $dtypes:expr, $since:literal;)*) => {$(
        map_op!($static, $name, $dtypes, &[], |_, v, _| {
            let f = float($f);
            quote!(#f(#v))
        }, since_opset = $since);
    )*};
}

float_fn! {
    SIN, "Sin", "sin", FLOATS, 7;
    COS, "Cos", "cos", FLOATS, 7;
    TAN, "Tan", "tan", &[DType::F32], 7;
    ASIN, "Asin", "asin", &[DType::F32], 7;
    ACOS, "Acos", "acos", &[DType::F32], 7;
    ATAN, "Atan", "atan", &[DType::F32], 7;
    SINH, "Sinh", "sinh", &[DType::F32], 9;
    COSH, "Cosh", "cosh", &[DType::F32], 9;
    ASINH, "Asinh", "asinh", &[DType::F32], 9;
    ACOSH, "Acosh", "acosh", &[DType::F32], 9;
    ATANH, "Atanh", "atanh", &[DType::F32], 9;
    ROUND, "Round", "round_even", FLOATS, 11;
}

// -1, 0 or 1 (NaN and zeros pass through).
map_op!(
    SIGN,
    "Sign",
    NUMERIC_WIDE,
    &[],
    |_, v, t| {
        let n = quote!(::tinyonnx::__export::kernels::num::Num);
        quote!(if #v > <#t as #n>::ZERO { <#t as #n>::ONE } else if #v < <#t as #n>::ZERO { #n::neg(<#t as #n>::ONE) } else { #v })
    },
    since_opset = 9
);
// x above alpha, else 0.
map_op!(
    THRESHOLDED_RELU,
    "ThresholdedRelu",
    &[DType::F32],
    &[attr("alpha", AttrKind::Float, AttrDefault::Float(1.0))],
    |a, v, _| {
        let alpha = a.float("alpha");
        quote!(if #v > #alpha { #v } else { 0.0f32 })
    },
    since_opset = 10
);
// max(0, x) + min(0, alpha (e^(x / alpha) - 1)).
map_op!(
    CELU,
    "Celu",
    &[DType::F32],
    &[attr("alpha", AttrKind::Float, AttrDefault::Float(1.0))],
    |a, v, _| {
        let alpha = a.float("alpha");
        // e^x - 1 as in `Elu`.
        let exp = libm("expf");
        quote!(if #v > 0.0f32 { #v } else { #alpha * (#exp(#v / #alpha) - 1.0f32) })
    },
    since_opset = 12
);
// x tanh(softplus(x)), softplus as in `Softplus`.
map_op!(
    MISH,
    "Mish",
    &[DType::F32],
    &[],
    |_, v, _| {
        let (log1p, exp, tanh) = (libm("log1pf"), libm("expf"), libm("tanhf"));
        quote!(#v * #tanh(if #v > 20.0f32 { #v } else { #log1p(#exp(#v)) }))
    },
    since_opset = 18
);
// x max(0, min(1, x / 6 + 1/2)).
map_op!(
    HARD_SWISH,
    "HardSwish",
    &[DType::F32],
    &[],
    |_, v, _| {
        let clamp = quote!(::tinyonnx::__export::kernels::math::unit_clamp);
        quote!(#v * #clamp(#v * (1.0f32 / 6.0f32) + 0.5f32))
    },
    since_opset = 14
);
// x + bias below -lambd, x - bias above lambd, else 0.
map_op!(
    SHRINK,
    "Shrink",
    FLOATS,
    &[
        attr("bias", AttrKind::Float, AttrDefault::Float(0.0)),
        attr("lambd", AttrKind::Float, AttrDefault::Float(0.5)),
    ],
    |a, v, t| {
        let (bias, lambd) = (a.float("bias"), a.float("lambd"));
        quote!(if #v < -(#lambd as #t) { #v + (#bias as #t) } else if #v > (#lambd as #t) { #v - (#bias as #t) } else { 0.0 as #t })
    },
    since_opset = 9
);

/// `IsNaN` and `IsInf` (opset 9/10 semantics): a float tensor to bool.
pub static IS_NAN: OpSchema = OpSchema {
    op_type: "IsNaN",
    inputs: X,
    dtypes: FLOATS,
    since_opset: 9,
    infer: to_bool,
    cases: special_cases,
    lower: |cx| map_call(cx, quote!(|v| v != v)),
    ..BASE
};

/// See [`IS_NAN`]: `detect_negative` and `detect_positive` pick the infinities.
pub static IS_INF: OpSchema = OpSchema {
    op_type: "IsInf",
    inputs: X,
    dtypes: FLOATS,
    attrs: &[
        attr("detect_negative", AttrKind::Int, AttrDefault::Int(1)),
        attr("detect_positive", AttrKind::Int, AttrDefault::Int(1)),
    ],
    since_opset: 10,
    infer: to_bool,
    cases: special_cases,
    lower: |cx| {
        let t = elem(cx.input(0).dtype);
        let neg = cx.attrs.int("detect_negative") != 0;
        let pos = cx.attrs.int("detect_positive") != 0;
        map_call(
            cx,
            quote!(|v: #t| (#neg && v == <#t>::NEG_INFINITY) || (#pos && v == <#t>::INFINITY)),
        )
    },
    ..BASE
};

fn to_bool(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    Ok(vec![TensorType {
        dtype: DType::Bool,
        shape: cx.input(0).shape.clone(),
    }])
}

/// Inputs holding NaN and both infinities (`Log` of 0 and of a negative, 1/0 of both
/// signs) beside finite values.
fn special_cases(op: &OpSchema) -> Vec<String> {
    let name = op.op_type;
    let mut c = Vec::new();
    for d in op.dtypes {
        let attrs: &[&str] = if name == "IsInf" {
            &["", ", detect_negative = 0", ", detect_positive = 0"]
        } else {
            &[""]
        };
        for a in attrs {
            c.push(format!(
                "input x: {d}[2, 3]; output y = {name}(Log(x){a}); output z = {name}(Div(x, Sub(x, x)){a}); output w = {name}(x{a});"
            ));
        }
    }
    c
}

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
    let pre = match name {
        "Log" | "Sqrt" | "Reciprocal" => Some("Abs"),
        // Inside the domain: x >= 1, |x| < 1.
        "Acosh" => Some("Cosh"),
        "Atanh" => Some("Tanh"),
        _ => None,
    };
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
        // Halves round to even: 0.5, 1.5, 2.5 and their negatives among the inputs.
        "Round" => cases(&[
            "input x: f32[4, 5]; output y = Round(Mul(x, 4.0)); output z = Round(Div(Round(Mul(x, 4.0)), 2.0));",
        ]),
        "Sign" => cases(&["input x: f32[4, 5]; output y = Sign(Round(x));"]),
        "ThresholdedRelu" => {
            cases(&["input x: f32[4, 5]; output y = ThresholdedRelu(x, alpha = 0.25);"])
        }
        "Celu" => cases(&["input x: f32[4, 5]; output y = Celu(Mul(x, 3.0), alpha = 2.0);"]),
        "Mish" | "HardSwish" => vec![format!(
            "input x: f32[4, 5]; output y = {name}(Mul(x, 30.0));"
        )],
        "Shrink" => cases(&[
            "input x: f32[4, 5]; output y = Shrink(x, lambd = 0.3, bias = 0.1); output z = Shrink(Mul(x, 3.0), lambd = 1.5);",
        ]),
        _ => Vec::new(),
    });
    c
}
