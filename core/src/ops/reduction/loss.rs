//! `NegativeLogLikelihoodLoss` and `SoftmaxCrossEntropyLoss` (opset 13): scores `[N, C,
//! d1, ...]`, class indices `[N, d1, ...]` (i32 or i64, read at run time), optional
//! class weights `[C]`, `ignore_index`, and `reduction` none, sum or mean.

use crate::ops::schema::prelude::*;
use crate::types::Shape;

const ATTRS: &[AttrSpec] = &[
    attr("ignore_index", AttrKind::Int, AttrDefault::Absent),
    attr("reduction", AttrKind::Str, AttrDefault::Str("mean")),
];

pub static NEGATIVE_LOG_LIKELIHOOD_LOSS: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[3, 4]; input z: f32[3, 4]; let t = ArgMax(z, axis = 1, keepdims = 0); output a = NegativeLogLikelihoodLoss(x, t); output b = NegativeLogLikelihoodLoss(x, t, reduction = \"none\"); output c = NegativeLogLikelihoodLoss(x, t, reduction = \"sum\");",
            "input x: f32[2, 3, 2, 2]; input z: f32[2, 3, 2, 2]; weight w: f32[3] = uniform(low = 0.5, high = 2.0, seed = 3); let t = ArgMax(z, axis = 1, keepdims = 0); output a = NegativeLogLikelihoodLoss(x, t, w); output b = NegativeLogLikelihoodLoss(x, t, w, reduction = \"none\", ignore_index = 1); output c = NegativeLogLikelihoodLoss(x, t, w, ignore_index = 2);",
            "input x: f64[2, 3, 5]; input z: f32[2, 3, 5]; let t = Cast(ArgMax(z, axis = 1, keepdims = 0), to = i32); output a = NegativeLogLikelihoodLoss(x, t, reduction = \"sum\", ignore_index = 0);",
        ])
    },
    op_type: "NegativeLogLikelihoodLoss",
    inputs: &[
        input("input"),
        any_input("target", false),
        optional("weight"),
    ],
    attrs: ATTRS,
    dtypes: &[DType::F32, DType::F64],
    output_names: &["loss"],
    infer,
    lower,
    macs: |cx| cx.input(1).numel() as u64,
    ..BASE
};

/// The mean, sum or each of `-log_softmax(scores)[label]`; the second output is the
/// LogSoftmax itself.
pub static SOFTMAX_CROSS_ENTROPY_LOSS: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[3, 5]; input z: f32[3, 5]; let t = ArgMax(z, axis = 1, keepdims = 0); output a = SoftmaxCrossEntropyLoss(x, t); let (b, lp) = SoftmaxCrossEntropyLoss(x, t, reduction = \"none\"); output b; output lp;",
            "input x: f32[2, 4, 3, 2]; input z: f32[2, 4, 3, 2]; weight w: f32[4] = uniform(low = 0.5, high = 2.0, seed = 4); let t = ArgMax(z, axis = 1, keepdims = 0); output a = SoftmaxCrossEntropyLoss(x, t, w, ignore_index = 3); output b = SoftmaxCrossEntropyLoss(x, t, w, reduction = \"sum\");",
            "input x: f64[2, 3, 4]; input z: f32[2, 3, 4]; let t = ArgMax(z, axis = 1, keepdims = 0); output a = SoftmaxCrossEntropyLoss(x, t, ignore_index = 1);",
        ])
    },
    op_type: "SoftmaxCrossEntropyLoss",
    inputs: &[
        input("scores"),
        any_input("labels", false),
        optional("weights"),
    ],
    outputs: 2,
    attrs: ATTRS,
    dtypes: &[DType::F32, DType::F64],
    output_names: &["output", "log_prob"],
    infer,
    lower,
    macs: |cx| 4 * cx.input(0).numel() as u64,
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let op = cx.op.op_type;
    let (x, t) = (cx.input(0), cx.input(1));
    if x.shape.rank() < 2 {
        return Err(OpError::input(
            0,
            format!("{op} takes scores [N, C, d1, ...], got {}", x.shape),
        ));
    }
    if !matches!(t.dtype, DType::I64 | DType::I32) {
        return Err(OpError::input(
            1,
            format!("{op} takes class indices of i32 or i64, got {}", t.dtype),
        ));
    }
    let mut want = x.shape.0.clone();
    let c = want.remove(1);
    if t.shape.0 != want {
        return Err(OpError::input(
            1,
            format!(
                "{op} takes one class index per score vector: [{}], got {}",
                Shape(want.clone()),
                t.shape
            ),
        )
        .with_note(At::Input(0), format!("the scores are {}", x.shape)));
    }
    if let Some(w) = cx.opt_input(2)
        && w.shape.0 != [c.clone()]
    {
        return Err(OpError::input(
            2,
            format!("{op} takes one weight per class: [{c}], got {}", w.shape),
        ));
    }
    let reduced = match cx.attrs.string("reduction") {
        Some("none") => false,
        Some("sum" | "mean") => true,
        other => {
            return Err(OpError::attr(
                "reduction",
                format!("{op} reduction is \"none\", \"sum\" or \"mean\", got {other:?}"),
            ));
        }
    };
    let loss = TensorType {
        dtype: x.dtype,
        shape: if reduced {
            Shape(Vec::new())
        } else {
            t.shape.clone()
        },
    };
    let mut out = vec![loss];
    if cx.op.outputs == 2 {
        out.push(x.clone());
    }
    Ok(out)
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let x = cx.input(0);
    let (n, c) = (x.shape[0], x.shape[1]);
    let d: usize = x.shape[2..].iter().product();
    let r = match cx.attrs.string("reduction") {
        Some("none") => 0u8,
        Some("sum") => 1,
        _ => 2,
    };
    let ignore = match cx.attrs.get("ignore_index") {
        Some(AttrValue::Int(v)) => quote!(Some(#v)),
        _ => quote!(None),
    };
    let (t, ti) = (elem(x.dtype), elem(cx.input(1).dtype));
    let (xe, target, weight) = (&x.expr, &cx.input(1).expr, cx.opt_expr(2));
    let (y, kernels) = (&cx.outputs[0].expr, kernels());
    match cx.outputs.get(1) {
        Some(lp) => {
            let lp = &lp.expr;
            quote! { #kernels::loss::softmax_cross_entropy::<#t, #ti, #n, #c, #d, #r>(#xe, #target, #weight, #ignore, #y, #lp); }
        }
        None => {
            quote! { #kernels::loss::nll_loss::<#t, #ti, #n, #c, #d, #r>(#xe, #target, #weight, #ignore, #y); }
        }
    }
}
