//! `Transpose` (opset 13): permutes axes; `perm` defaults to reversing them.

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Shape, TensorType};

pub static TRANSPOSE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output y = Transpose(x); output z = Transpose(x, perm = [1, 0, 2]); output w = Transpose(x, perm = [2, 0, 1]);",
            "input x: i64[2, 3]; input b: bool[1, 3, 2]; input u: u8[4, 1]; output y = Transpose(x); output z = Transpose(b, perm = [2, 1, 0]); output w = Transpose(u);",
            "input x: f64[2, 2, 2, 3]; input i: i8[3, 2]; input k: i32[2, 5]; output y = Transpose(x, perm = [3, 1, 2, 0]); output z = Transpose(i); output w = Transpose(k, perm = [1, 0]);",
        ])
    },
    op_type: "Transpose",
    inputs: &[input("data")],
    attrs: &[attr("perm", AttrKind::Ints, AttrDefault::Absent)],
    output_names: &["transposed"],
    dtypes: ALL_DTYPES,
    infer,
    lower,
    macs: no_macs,
    ..BASE
};

fn perm(attrs: &Attrs, rank: usize) -> Result<Vec<usize>, OpError> {
    let Some(p) = attrs.ints("perm") else {
        return Ok((0..rank).rev().collect());
    };
    let mut seen = vec![false; rank];
    let ok = p.len() == rank
        && p.iter().all(|&a| {
            let fresh = a >= 0 && (a as usize) < rank && !seen[a as usize];
            if fresh {
                seen[a as usize] = true;
            }
            fresh
        });
    if !ok {
        return Err(OpError::attr(
            "perm",
            format!("perm {p:?} is not a permutation of the {rank} axes 0..{rank}"),
        ));
    }
    Ok(p.iter().map(|&a| a as usize).collect())
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let p = perm(cx.attrs, x.shape.rank())?;
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(p.iter().map(|&a| x.shape.0[a].clone()).collect()),
    }])
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let x = cx.input(0);
    let p = perm(cx.attrs, x.shape.len()).expect("checked during inference");
    transpose_call(&x.expr, &cx.outputs[0].expr, &x.shape, &p)
}

/// `y` = `x` viewed with `shape`, its axes permuted by `perm`: one transpose kernel call.
pub fn transpose_call(
    x: &TokenStream,
    y: &TokenStream,
    shape: &[usize],
    perm: &[usize],
) -> TokenStream {
    let rank = shape.len();
    let mut in_strides = vec![1; rank];
    for a in (0..rank.saturating_sub(1)).rev() {
        in_strides[a] = in_strides[a + 1] * shape[a + 1];
    }
    let strides: Vec<usize> = perm.iter().map(|&a| in_strides[a]).collect();
    let out: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    let kernels = kernels();
    quote! { #kernels::copy::transpose::<_, #rank>(#x, #y, &[#(#out),*], &[#(#strides),*]); }
}
