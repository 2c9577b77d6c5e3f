//! `Gemm`: Y = alpha * op(A) @ op(B) + beta * C, C unidirectionally broadcast to [M, N].
//! Opset 13 semantics (C optional since 11; bfloat16 added in 13).

use quote::quote;

use super::*;
use crate::types::{Dim, Shape, TensorType, broadcast, broadcast_strides};

pub static GEMM: OpSchema = OpSchema {
    op_type: "Gemm",
    inputs: &[input("A"), input("B"), optional("C")],
    attrs: &[
        attr("alpha", AttrKind::Float, AttrDefault::Float(1.0)),
        attr("beta", AttrKind::Float, AttrDefault::Float(1.0)),
        attr("transA", AttrKind::Int, AttrDefault::Int(0)),
        attr("transB", AttrKind::Int, AttrDefault::Int(0)),
    ],
    infer,
    lower,
    macs,
    ..BASE
};

fn flag(cx: &InferCtx, name: &'static str) -> Result<bool, OpError> {
    match cx.attrs.int(name) {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(OpError::attr(
            name,
            format!("Gemm {name} must be 0 or 1, got {v}"),
        )),
    }
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let (ta, tb) = (flag(cx, "transA")?, flag(cx, "transB")?);
    let a = cx.input(0);
    let b = cx.input(1);
    for (i, t, name) in [(0, a, "A"), (1, b, "B")] {
        if t.shape.rank() != 2 {
            return Err(OpError::input(
                i,
                format!("Gemm expects a rank-2 {name}, got {}", t.shape),
            ));
        }
    }
    let (m, ka) = pick(&a.shape, ta);
    let (kb, n) = pick(&b.shape, tb);
    if ka != kb {
        let a_what = if ta { "A^T" } else { "A" };
        let b_what = if tb { "B^T" } else { "B" };
        return Err(OpError::input(
            1,
            format!(
                "Gemm inner dimensions differ: {a_what} has {ka} columns (A is {}), {b_what} has {kb} rows (B is {})",
                a.shape, b.shape
            ),
        )
        .with_note(At::Input(0), format!("{a_what} has {ka} columns here")));
    }
    let out = Shape(vec![m.clone(), n.clone()]);
    if let Some(c) = cx.inputs.get(2).copied().flatten()
        && broadcast(&c.shape, &out).as_ref() != Some(&out)
    {
        return Err(OpError::input(
            2,
            format!(
                "Gemm bias C is {} and does not broadcast to the output [M, N] = {out}",
                c.shape
            ),
        ));
    }
    Ok(vec![TensorType {
        dtype: a.dtype,
        shape: out,
    }])
}

/// Returns (rows, cols) of a rank-2 shape, swapped when `trans`.
fn pick(s: &Shape, trans: bool) -> (&Dim, &Dim) {
    if trans {
        (&s.0[1], &s.0[0])
    } else {
        (&s.0[0], &s.0[1])
    }
}

fn dims(cx: &LowerCtx) -> (usize, usize, usize, bool, bool) {
    let ta = cx.attrs.int("transA") == 1;
    let tb = cx.attrs.int("transB") == 1;
    let a = &cx.input(0).shape;
    let (m, k) = if ta { (a[1], a[0]) } else { (a[0], a[1]) };
    let n = cx.outputs[0].shape[1];
    (m, k, n, ta, tb)
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let (m, k, n, ta, tb) = dims(cx);
    let a = &cx.input(0).expr;
    let b = &cx.input(1).expr;
    let y = &cx.outputs[0].expr;
    let alpha = cx.attrs.float("alpha");
    let beta = cx.attrs.float("beta");
    let c = match &cx.inputs.get(2).cloned().flatten() {
        Some(c) => {
            let s = broadcast_strides(&c.shape, &[m, n]);
            let (s0, s1) = (s[0], s[1]);
            let e = &c.expr;
            quote!(::core::option::Option::Some((#e, #s0, #s1)))
        }
        None => quote!(::core::option::Option::None),
    };
    let kernels = kernels();
    quote! {
        #kernels::gemm::gemm::<#m, #k, #n, #ta, #tb>(#a, #b, #c, #alpha, #beta, #y);
    }
}

fn macs(cx: &LowerCtx) -> u64 {
    let (m, k, n, _, _) = dims(cx);
    (m * k * n) as u64
}
