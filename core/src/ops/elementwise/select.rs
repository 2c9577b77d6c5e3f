//! `Where` (opset 9 semantics; 16 only adds bfloat16): element-wise selection with
//! broadcasting.

use crate::ops::schema::prelude::*;
use crate::types::{broadcast, broadcast_strides};

pub static WHERE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input c: bool[2, 3]; input x: f32[2, 3]; input y: f32[3]; output z = Where(c, x, y); output w = Where(c, y, x);",
            "input c: bool[3, 1]; input x: i64[1, 4]; input y: i64[]; output z = Where(c, x, y);",
            "input c: bool[4]; input x: i32[2, 4]; input y: i32[2, 1]; output z = Where(c, x, y);",
            "input c: bool[]; input x: f64[3]; input y: f64[3]; output z = Where(c, x, y);",
            "input c: bool[2, 2]; input x: i8[2, 2]; input y: i8[2, 2]; input a: f32[2, 2]; output z = Where(c, x, y); output u = Where(Greater(a, Constant(value_float = 0.0)), Cast(x, to = u8), Cast(y, to = u8));",
        ])
    },
    op_type: "Where",
    inputs: &[bool_input("condition"), input("X"), input("Y")],
    // ONNX allows bool X and Y too; ONNX Runtime has no kernel for them, so nothing could
    // check ours: write Or(And(c, x), And(Not(c), y)) instead.
    dtypes: NUMERIC,
    inplace: Some(1),
    infer: infer_where,
    lower: lower_where,
    ..BASE
};

fn infer_where(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let (c, x, y) = (cx.input(0), cx.input(1), cx.input(2));
    let xy = broadcast(&x.shape, &y.shape).ok_or_else(|| {
        OpError::input(
            2,
            format!("Where cannot broadcast X {} with Y {}", x.shape, y.shape),
        )
    })?;
    let shape = broadcast(&c.shape, &xy).ok_or_else(|| {
        OpError::input(
            0,
            format!(
                "Where cannot broadcast the condition {} with X and Y ({xy})",
                c.shape
            ),
        )
    })?;
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape,
    }])
}

fn lower_where(cx: &LowerCtx) -> TokenStream {
    let kernels = kernels();
    let out = &cx.outputs[0];
    let shape = &out.shape;
    let rank = shape.len();
    let y = &out.expr;
    let operand = |i: usize| {
        let o = cx.input(i);
        let (e, s) = (&o.expr, broadcast_strides(&o.shape, shape));
        (e.clone(), quote!(&[#(#s),*]))
    };
    let (c, cs) = operand(0);
    let (z, zs) = operand(2);
    if cx.inplace {
        // X's buffer is the output: keep X where the condition holds.
        return quote! {
            #kernels::binary::select_inplace::<_, #rank>(#c, #cs, #z, #zs, #y, &[#(#shape),*]);
        };
    }
    let (x, xs) = operand(1);
    quote! {
        #kernels::binary::select::<_, #rank>(#c, #cs, #x, #xs, #z, #zs, #y, &[#(#shape),*]);
    }
}
