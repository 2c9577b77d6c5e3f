//! `Det` (opset 11): the determinant of each square matrix in the last two axes.

use crate::ops::schema::prelude::*;
use crate::types::Shape;

pub static DET: OpSchema = OpSchema {
    op_type: "Det",
    inputs: &[input("X")],
    since_opset: 11,
    infer: |cx| {
        let x = cx.input(0);
        let r = x.shape.rank();
        let square =
            r >= 2 && x.shape.0[r - 1] == x.shape.0[r - 2] && x.shape.0[r - 1].fixed().is_some();
        if !square {
            return Err(OpError::input(
                0,
                format!("Det takes [..., M, M] with M fixed, got {}", x.shape),
            ));
        }
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape(x.shape.0[..r - 2].to_vec()),
        }])
    },
    lower: |cx| {
        let x = cx.input(0);
        let m = x.shape[x.shape.len() - 1];
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::norm::det::<#m>(#xe, #y); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[3, 3]; output y = Det(x);",
            "input x: f32[2, 4, 4]; output y = Det(Mul(x, 2.0));",
        ])
    },
    ..BASE
};
