//! `LayerNormalization` (opset 17): normalizes over the axes from `axis` to the last,
//! then applies `Scale` and `B`. Only the `Y` output is produced. `RMSNormalization`
//! (opset 23): the same without the mean (`x / sqrt(mean(x^2) + epsilon) * scale`).

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{TensorType, broadcast};

pub static LAYER_NORMALIZATION: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 8]; weight s: f32[8] = uniform(low = 0.5, high = 1.5, seed = 1); weight b: f32[8] = uniform(low = -0.5, high = 0.5, seed = 2); output y = LayerNormalization(x, s, b); output z = LayerNormalization(x, s, epsilon = 0.01);",
            "input x: f32[2, 3, 4]; weight s: f32[3, 4] = uniform(low = 0.5, high = 1.5, seed = 3); output y = LayerNormalization(x, s, axis = -2); output z = LayerNormalization(x, Constant(value_floats = [1.0, 2.0, 0.5, 1.5]), axis = 2);",
        ])
    },
    op_type: "LayerNormalization",
    inputs: &[input("X"), input("Scale"), optional("B")],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(-1)),
        attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5)),
        attr("stash_type", AttrKind::Int, AttrDefault::Int(1)),
    ],
    output_names: &["Y"],
    since_opset: 17,
    inplace: Some(0),
    infer,
    lower: |cx| lower(cx, false),
    macs: |cx| 4 * cx.outputs[0].numel() as u64,
    ..BASE
};

pub static RMS_NORMALIZATION: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 23; input x: f32[2, 3, 8]; weight s: f32[8] = uniform(low = 0.5, high = 1.5, seed = 1); output y = RMSNormalization(x, s); output z = RMSNormalization(x, s, epsilon = 0.01);",
            "opset = 23; input x: f32[2, 3, 4]; weight s: f32[3, 4] = uniform(low = 0.5, high = 1.5, seed = 3); output y = RMSNormalization(x, s, axis = -2); output z = RMSNormalization(x, Constant(value_floats = [1.0, 2.0, 0.5, 1.5]), axis = 2);",
        ])
    },
    op_type: "RMSNormalization",
    inputs: &[input("X"), input("scale")],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(-1)),
        attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5)),
        attr("stash_type", AttrKind::Int, AttrDefault::Int(1)),
    ],
    output_names: &["Y"],
    since_opset: 23,
    inplace: Some(0),
    infer,
    lower: |cx| lower(cx, true),
    macs: |cx| 3 * cx.outputs[0].numel() as u64,
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let op = cx.op.op_type;
    let x = cx.input(0);
    let rank = x.shape.rank();
    if rank == 0 {
        return Err(OpError::input(
            0,
            format!("{op} needs an input of rank 1 or more"),
        ));
    }
    let axis = normalize_axis(op, cx.attrs.int("axis"), rank, "axis")?;
    if cx.attrs.int("stash_type") != 1 {
        return Err(OpError::attr(
            "stash_type",
            "only stash_type = 1 (float32 statistics) is supported",
        ));
    }
    let normalized = crate::types::Shape(x.shape.0[axis..].to_vec());
    if normalized.fixed_numel().is_none() {
        return Err(OpError::input(
            0,
            format!(
                "{op} needs fixed normalized dimensions, got {} from axis {axis}",
                x.shape
            ),
        ));
    }
    for (i, name) in [(1, cx.op.inputs[1].name), (2, "B")] {
        if let Some(t) = cx.opt_input(i) {
            let n = t.shape.fixed_numel().unwrap_or(0);
            if broadcast(&t.shape, &normalized).as_ref() != Some(&normalized)
                || (n != 1 && t.shape != normalized)
            {
                return Err(OpError::input(
                    i,
                    format!(
                        "{op} {name} must be {normalized} (the dimensions of X {} from axis {axis}), got {}",
                        x.shape, t.shape
                    ),
                ));
            }
        }
    }
    Ok(vec![x.clone()])
}

fn lower(cx: &LowerCtx, rms: bool) -> TokenStream {
    let shape = &cx.outputs[0].shape;
    let axis = normalize_axis("norm", cx.attrs.int("axis"), shape.len(), "axis").expect("checked");
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis..].iter().product();
    let eps = cx.attrs.float("epsilon");
    let scale = &cx.input(1).expr;
    let b = match cx.inputs.get(2).cloned().flatten() {
        Some(b) => {
            let e = b.expr;
            quote!(::core::option::Option::Some(#e))
        }
        None => quote!(::core::option::Option::None),
    };
    let y = &cx.outputs[0].expr;
    let kernels = kernels();
    if cx.inplace {
        return quote! { #kernels::norm::layer_norm_inplace::<#outer, #inner, #rms>(#scale, #b, #eps, #y); };
    }
    let x = &cx.input(0).expr;
    quote! { #kernels::norm::layer_norm::<#outer, #inner, #rms>(#x, #scale, #b, #eps, #y); }
}
