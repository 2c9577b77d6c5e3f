//! `BatchNormalization`, inference form (opset 15 semantics; `training_mode` must be 0):
//! `Y = (X - mean) / sqrt(var + epsilon) * scale + B` per channel (axis 1).

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Shape, TensorType};

pub static BATCH_NORMALIZATION: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4, 5]; weight s: f32[3] = uniform(low = 0.5, high = 1.5, seed = 1); weight b: f32[3] = uniform(low = -0.5, high = 0.5, seed = 2); weight m: f32[3] = uniform(low = -0.2, high = 0.2, seed = 3); weight v: f32[3] = uniform(low = 0.5, high = 2.0, seed = 4); output y = BatchNormalization(x, s, b, m, v, epsilon = 0.001);",
            "input x: f32[4, 2]; input s: f32[2]; input b: f32[2]; weight m: f32[2] = [0.1, -0.1]; weight v: f32[2] = [1.5, 0.5]; output y = BatchNormalization(x, s, b, m, v);",
        ])
    },
    op_type: "BatchNormalization",
    inputs: &[
        input("X"),
        input("scale"),
        input("B"),
        input("input_mean"),
        input("input_var"),
    ],
    attrs: &[
        attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5)),
        attr("momentum", AttrKind::Float, AttrDefault::Float(0.9)),
        attr("training_mode", AttrKind::Int, AttrDefault::Int(0)).since(14),
    ],
    output_names: &["Y"],
    inplace: Some(0),
    infer,
    lower,
    absorbed: Some(Absorbed::BatchNorm),
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    if cx.attrs.int("training_mode") != 0 {
        return Err(OpError::attr(
            "training_mode",
            "tinyonnx runs BatchNormalization for inference only: training_mode must be 0",
        ));
    }
    if x.shape.rank() < 2 {
        return Err(OpError::input(
            0,
            format!(
                "BatchNormalization expects X as [N, C, ...], got {}",
                x.shape
            ),
        ));
    }
    let Some(c) = x.shape.0[1].fixed() else {
        return Err(OpError::input(
            0,
            format!(
                "BatchNormalization needs a fixed channel dimension, got {}",
                x.shape
            ),
        ));
    };
    for (i, name) in [(1, "scale"), (2, "B"), (3, "input_mean"), (4, "input_var")] {
        let t = cx.input(i);
        if t.shape != Shape::fixed(&[c]) {
            return Err(OpError::input(
                i,
                format!(
                    "BatchNormalization {name} must be [{c}] for the {c} channels of X {}, got {}",
                    x.shape, t.shape
                ),
            ));
        }
    }
    Ok(vec![x.clone()])
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let shape = &cx.outputs[0].shape;
    let (n, c) = (shape[0], shape[1]);
    let s: usize = shape[2..].iter().product();
    let eps = cx.attrs.float("epsilon");
    let [scale, b, mean, var] = [1, 2, 3, 4].map(|i| cx.input(i).expr.clone());
    let y = &cx.outputs[0].expr;
    let kernels = kernels();
    if cx.inplace {
        return quote! {
            #kernels::norm::batch_norm_inplace::<#n, #c, #s>(#scale, #b, #mean, #var, #eps, #y);
        };
    }
    let x = &cx.input(0).expr;
    quote! {
        #kernels::norm::batch_norm::<#n, #c, #s>(#x, #scale, #b, #mean, #var, #eps, #y);
    }
}

/// A `BatchNormalization` after a convolution folded into its weights `w` (`[M][...]`)
/// and bias (`M` values): `w' = w * s`, `b' = (b - mean) * s + B` with
/// `s = scale / sqrt(var + epsilon)` per output channel, in f64. The plan's fusion and
/// compile-time quantization both fold with this.
pub fn fold_into_conv(
    w: &[f32],
    bias: &[f32],
    [scale, beta, mean, var]: [&[f32]; 4],
    epsilon: f32,
) -> (Vec<f32>, Vec<f32>) {
    let m = bias.len();
    let per = w.len().checked_div(m).unwrap_or(0);
    let eps = f64::from(epsilon);
    let mut w2 = Vec::with_capacity(w.len());
    let mut b2 = Vec::with_capacity(m);
    for oc in 0..m {
        let at = |t: &[f32]| f64::from(t.get(oc).copied().unwrap_or(0.0));
        let s = at(scale) / (at(var) + eps).sqrt();
        w2.extend(
            w[oc * per..(oc + 1) * per]
                .iter()
                .map(|&v| (f64::from(v) * s) as f32),
        );
        b2.push(((f64::from(bias[oc]) - at(mean)) * s + at(beta)) as f32);
    }
    (w2, b2)
}
