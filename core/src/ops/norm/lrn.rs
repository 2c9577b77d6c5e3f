//! `LRN` (opset 13): local response normalization across channels.

use crate::ops::schema::prelude::*;

pub static LRN: OpSchema = OpSchema {
    op_type: "LRN",
    inputs: &[input("X")],
    attrs: &[
        attr("alpha", AttrKind::Float, AttrDefault::Float(0.0001)),
        attr("beta", AttrKind::Float, AttrDefault::Float(0.75)),
        attr("bias", AttrKind::Float, AttrDefault::Float(1.0)),
        attr("size", AttrKind::Int, AttrDefault::Required),
    ],
    infer: |cx| {
        let x = cx.input(0);
        if x.shape.rank() < 3 {
            return Err(OpError::input(
                0,
                format!("LRN takes [N, C, D1, ...], got {}", x.shape),
            ));
        }
        if cx.attrs.int("size") < 1 {
            return Err(OpError::attr("size", "LRN size must be at least 1"));
        }
        Ok(vec![x.clone()])
    },
    lower: |cx| {
        let x = cx.input(0);
        let (n, c) = (x.shape[0], x.shape[1]);
        let inner: usize = x.shape[2..].iter().product();
        let size = cx.attrs.int("size") as usize;
        let (alpha, beta, bias) = (
            cx.attrs.float("alpha"),
            cx.attrs.float("beta"),
            cx.attrs.float("bias"),
        );
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::norm::lrn(#xe, #y, #n, #c, #inner, #size, #alpha, #beta, #bias); }
    },
    macs: |cx| cx.input(0).numel() as u64 * cx.attrs.int("size").max(1) as u64,
    cases: |_| {
        cases(&[
            "input x: f32[2, 5, 3, 2]; output a = LRN(x, size = 3); output b = LRN(Mul(x, 4.0), size = 1, alpha = 0.01, beta = 0.5, bias = 2.0);",
            // ONNX Runtime takes odd sizes on 4-D inputs only.
            "input x: f32[1, 4, 6, 1]; output a = LRN(x, size = 5, alpha = 0.1);",
        ])
    },
    ..BASE
};
