//! `Gemm`: Y = alpha * op(A) @ op(B) + beta * C, C unidirectionally broadcast to [M, N].
//! Opset 13 semantics (C optional since 11; bfloat16 added in 13).

use proc_macro2::TokenStream;
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType, broadcast, broadcast_strides};

pub static GEMM: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input a: f32[3, 5]; weight b: f32[5, 4] = glorot_uniform(seed = 1); weight c: f32[4] = uniform(low = -0.5, high = 0.5, seed = 2); output y = Gemm(a, b, c); output z = Gemm(a, b);",
            "input a: f32[5, 3]; weight b: f32[4, 5] = glorot_uniform(seed = 3); weight c: f32[1] = [0.5]; output y = Gemm(a, b, c, transA = 1, transB = 1, alpha = 0.5, beta = 2.0);",
            "input a: f32[2, 6]; input b: f32[6, 3]; input c: f32[2, 1]; output y = Gemm(a, b, c, beta = -1.0);",
            "input a: f32[1, 20]; weight b: f32[20, 17] = glorot_uniform(seed = 4); weight c: f32[17] = uniform(low = -0.5, high = 0.5, seed = 5); output y = Relu(Gemm(a, b, c));",
            // Two rows and one through the boards' panel routines, whose Relu meets NaN
            // and infinities in the NaN check.
            "input a: f32[3, 20]; weight b: f32[20, 16] = glorot_uniform(seed = 9); weight c: f32[16] = uniform(low = -0.5, high = 0.5, seed = 10); output y = Relu(Gemm(a, b, c));",
            "input a: f32[3, 7]; weight b: f32[2, 7] = glorot_uniform(seed = 6); weight c: f32[3, 1] = uniform(low = -0.5, high = 0.5, seed = 7); weight d: f32[7, 1] = glorot_uniform(seed = 8); output y = Gemm(a, b, c, transB = 1, alpha = 0.5, beta = 2.0); output z = Relu(Gemm(a, d)); output w = Gemm(a, d, c);",
        ])
    },
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
    packs: |cx| {
        if const_b_plan(cx).is_some() {
            vec![1, 2]
        } else {
            Vec::new()
        }
    },
    fusion: Fusion {
        relu: &[DType::F32],
        ..Fusion::NONE
    },
    ..BASE
};

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

/// The constant-`B` path: `B` known at compile time (scaled by alpha, packed into
/// panels or transposed), `A` not transposed, and `C` either absent, known at compile
/// time (scaled by beta) or used as is (beta = 1). Returns B's stored values and the
/// values of `beta * C` when they are emitted too.
fn const_b_plan(cx: &LowerCtx) -> Option<(ConstB, Option<Vec<f32>>)> {
    let (_, k, n, ta, tb) = dims(cx);
    let b = cx.input_consts.get(1).copied().flatten()?.as_f32()?;
    if ta {
        return None;
    }
    let alpha = cx.attrs.float("alpha");
    let beta = cx.attrs.float("beta");
    let c = match cx.input_consts.get(2).copied().flatten() {
        Some(c) => Some(c.as_f32()?.iter().map(|v| beta * v).collect()),
        None if cx.inputs.get(2).cloned().flatten().is_some() && beta != 1.0 => return None,
        None => None,
    };
    let at = |kk: usize, j: usize| {
        let v = if tb { b[j * k + kk] } else { b[kk * n + j] };
        if alpha == 1.0 { v } else { alpha * v }
    };
    Some((ConstB::new(k, n, at), c))
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let (m, k, n, ta, tb) = dims(cx);
    let kernels = kernels();
    if let Some((stored, c_values)) = const_b_plan(cx) {
        let a = &cx.input(0).expr;
        let y = &cx.outputs[0].expr;
        let relu = cx.epilogue.relu;
        let (c_decl, init) = match cx.inputs.get(2).cloned().flatten() {
            Some(c) => {
                let s = broadcast_strides(&c.shape, &[m, n]);
                let (s0, s1) = (s[0], s[1]);
                let (decl, e) = match c_values {
                    Some(v) => node_static("cp", v),
                    None => (TokenStream::new(), c.expr),
                };
                (
                    decl,
                    quote!(::core::option::Option::Some(#kernels::packed::Strided { values: #e, rows: #s0, cols: #s1 })),
                )
            }
            None => (TokenStream::new(), quote!(::core::option::Option::None)),
        };
        let call = stored.product((m, k, n), a, &init, y, relu);
        return quote! {
            #c_decl
            #call
        };
    }
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
    let relu = cx.epilogue.relu.then(|| {
        let y = &cx.outputs[0].expr;
        quote!(#kernels::unary::unary_inplace::<#kernels::unary::Relu>(#y);)
    });
    quote! {
        #kernels::gemm::gemm::<#m, #k, #n, #ta, #tb>(#a, #b, #c, #alpha, #beta, #y);
        #relu
    }
}

fn macs(cx: &LowerCtx) -> u64 {
    let (m, k, n, _, _) = dims(cx);
    (m * k * n) as u64
}
