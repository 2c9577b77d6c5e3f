//! `InstanceNormalization`: per image and channel, `y = scale (x - mean) / sqrt(var +
//! epsilon) + B` over the spatial positions; `GroupNormalization` (opset 21): the same
//! with one mean and variance per group of channels.

use crate::ops::schema::prelude::*;

pub static INSTANCE_NORMALIZATION: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 5]; weight s: f32[3] = uniform(low = 0.5, high = 1.5, seed = 1); weight b: f32[3] = uniform(low = -1.0, high = 1.0, seed = 2); output y = InstanceNormalization(x, s, b, epsilon = 0.001); output z = InstanceNormalization(x, s, b);",
            "input x: f32[1, 2, 3, 4]; input s: f32[2]; input b: f32[2]; output y = InstanceNormalization(x, s, b);",
        ])
    },
    op_type: "InstanceNormalization",
    inputs: &[input("input"), input("scale"), input("B")],
    attrs: &[attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5))],
    infer: infer_instance_norm,
    lower: lower_instance_norm,
    macs: |cx| 4 * cx.outputs[0].numel() as u64,
    ..BASE
};

pub static GROUP_NORMALIZATION: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 21; input x: f32[2, 6, 5]; weight s: f32[6] = uniform(low = 0.5, high = 1.5, seed = 1); weight b: f32[6] = uniform(low = -1.0, high = 1.0, seed = 2); output y = GroupNormalization(x, s, b, num_groups = 3, epsilon = 0.001); output z = GroupNormalization(x, s, b, num_groups = 1); output w = GroupNormalization(x, s, b, num_groups = 6);",
            "opset = 21; input x: f32[1, 4, 3, 4]; input s: f32[4]; input b: f32[4]; output y = GroupNormalization(x, s, b, num_groups = 2);",
        ])
    },
    op_type: "GroupNormalization",
    inputs: &[input("X"), input("scale"), input("bias")],
    attrs: &[
        attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5)),
        attr("num_groups", AttrKind::Int, AttrDefault::Required),
        attr("stash_type", AttrKind::Int, AttrDefault::Int(1)),
    ],
    output_names: &["Y"],
    // Opset 18 scaled per group; 21 per channel, the form kept here.
    since_opset: 21,
    infer: |cx| {
        let t = infer_instance_norm(cx)?;
        let c = cx.input(0).shape.0[1].fixed();
        let g = cx.attrs.int("num_groups");
        let Some(c) = c else {
            return Err(OpError::input(
                0,
                "GroupNormalization needs a fixed channel count C",
            ));
        };
        if g < 1 || c % g as usize != 0 {
            return Err(OpError::attr(
                "num_groups",
                format!("GroupNormalization num_groups must divide the {c} channels, got {g}"),
            ));
        }
        if cx.attrs.int("stash_type") != 1 {
            return Err(OpError::attr(
                "stash_type",
                "GroupNormalization computes its statistics in f32: stash_type must be 1",
            ));
        }
        Ok(t)
    },
    lower: lower_instance_norm,
    macs: |cx| 4 * cx.outputs[0].numel() as u64,
    ..BASE
};

fn infer_instance_norm(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let op = cx.op.op_type;
    if x.shape.rank() < 3 {
        return Err(OpError::input(
            0,
            format!("{op} expects [N, C, spatial...], got {}", x.shape),
        ));
    }
    let c = &x.shape.0[1];
    for (i, name) in [(1, "scale"), (2, cx.op.inputs[2].name)] {
        let t = cx.input(i);
        if t.shape.0.len() != 1 || &t.shape.0[0] != c {
            return Err(OpError::input(
                i,
                format!("{op} {name} must be [C] = [{c}], got {}", t.shape),
            )
            .with_note(At::Input(0), format!("the input has C = {c}")));
        }
    }
    Ok(vec![x.clone()])
}

fn lower_instance_norm(cx: &LowerCtx) -> TokenStream {
    let shape = &cx.input(0).shape;
    let (n, c) = (shape[0], shape[1]);
    let s: usize = shape[2..].iter().product();
    let eps = cx.attrs.float("epsilon");
    let g = match cx.attrs.get("num_groups") {
        Some(AttrValue::Int(g)) => *g as usize,
        _ => c,
    };
    let kernels = kernels();
    let (x, scale, b) = (&cx.input(0).expr, &cx.input(1).expr, &cx.input(2).expr);
    let y = &cx.outputs[0].expr;
    quote! {
        #kernels::norm::group_norm::<#n, #c, #g, #s>(#x, #scale, #b, #eps, #y);
    }
}
