//! `Concat` (opset 13): joins one or more tensors along `axis`.

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType};

const OP: &str = "Concat";

pub static CONCAT: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input a: f32[2, 3]; input b: f32[2, 1]; input c: f32[2, 2]; output y = Concat(a, b, c, axis = -1); output z = Concat(a, a, axis = 0); output w = Concat(b, axis = 1);",
            "input a: i64[3]; input b: i64[2]; output y = Concat(a, b, axis = 0);",
            "input a: bool[1, 2, 2]; input b: bool[3, 2, 2]; output y = Concat(a, b, axis = -3);",
            "input a: i8[2, 2]; input b: u8[2, 1]; input c: f64[1, 2]; input d: i32[2, 2]; output y = Concat(a, a, axis = 1); output z = Concat(b, b, axis = 0); output w = Concat(c, c, axis = 0); output v = Concat(d, d, axis = 1);",
        ])
    },
    op_type: "Concat",
    inputs: &[input("inputs")],
    variadic: true,
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Required)],
    output_names: &["concat_result"],
    dtypes: ALL_DTYPES,
    infer,
    lower,
    macs: no_macs,
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let first = cx.input(0);
    let rank = first.shape.rank();
    if rank == 0 {
        return Err(OpError::input(0, "Concat needs inputs of rank 1 or more"));
    }
    let axis = normalize_axis(OP, cx.attrs.int("axis"), rank, "axis")?;
    let mut total = 0;
    for (i, t) in cx.inputs.iter().enumerate() {
        let t = t.expect("variadic inputs are all present");
        let same_rest = t.shape.rank() == rank
            && (0..rank).all(|a| a == axis || t.shape.0[a] == first.shape.0[a]);
        if !same_rest {
            return Err(OpError::input(
                i,
                format!(
                    "Concat along axis {axis}: input {i} is {}, but input 0 is {}; all other dimensions must agree",
                    t.shape, first.shape
                ),
            ));
        }
        match t.shape.0[axis] {
            Dim::Fixed(n) => total = usize::saturating_add(total, n),
            Dim::Sym(ref s) => {
                return Err(OpError::input(
                    i,
                    format!("Concat needs a fixed size on the concat axis, input {i} has `{s}`"),
                ));
            }
        }
    }
    let mut out = first.shape.0.clone();
    out[axis] = Dim::Fixed(total);
    Ok(vec![TensorType {
        dtype: first.dtype,
        shape: Shape(out),
    }])
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let out = &cx.outputs[0].shape;
    let axis = normalize_axis(OP, cx.attrs.int("axis"), out.len(), "axis").expect("checked");
    let outer: usize = out[..axis].iter().product();
    let inner: usize = out[axis + 1..].iter().product();
    let out_chunk = out[axis] * inner;
    let y = &cx.outputs[0].expr;
    let kernels = kernels();
    let mut offset = 0;
    let parts = cx.inputs.iter().flatten().map(|x| {
        let chunk = x.shape[axis] * inner;
        let at = offset;
        offset += chunk;
        let xe = &x.expr;
        quote! { #kernels::copy::concat_part::<_, #outer, #chunk, #out_chunk, #at>(#xe, #y); }
    });
    quote! { #(#parts)* }
}
