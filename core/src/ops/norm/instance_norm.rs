//! `InstanceNormalization`: per image and channel, `y = scale (x - mean) / sqrt(var +
//! epsilon) + B` over the spatial positions.

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

fn infer_instance_norm(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    if x.shape.rank() < 3 {
        return Err(OpError::input(
            0,
            format!(
                "InstanceNormalization expects [N, C, spatial...], got {}",
                x.shape
            ),
        ));
    }
    let c = &x.shape.0[1];
    for (i, name) in [(1, "scale"), (2, "B")] {
        let t = cx.input(i);
        if t.shape.0.len() != 1 || &t.shape.0[0] != c {
            return Err(OpError::input(
                i,
                format!(
                    "InstanceNormalization {name} must be [C] = [{c}], got {}",
                    t.shape
                ),
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
    let kernels = kernels();
    let (x, scale, b) = (&cx.input(0).expr, &cx.input(1).expr, &cx.input(2).expr);
    let y = &cx.outputs[0].expr;
    quote! {
        #kernels::norm::instance_norm::<#n, #c, #s>(#x, #scale, #b, #eps, #y);
    }
}
