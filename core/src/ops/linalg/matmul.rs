//! `MatMul`: numpy matmul (rank-1 operands promoted, batch dimensions broadcast). Opset 13.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType, broadcast, broadcast_strides};

pub static MATMUL: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input a: f32[3, 4]; weight b: f32[4, 5] = glorot_uniform(seed = 1); output y = MatMul(a, b);",
            "input a: f32[2, 3, 4]; input b: f32[2, 4, 6]; output y = MatMul(a, b);",
            "input a: f32[2, 1, 3, 4]; input b: f32[3, 4, 2]; output y = MatMul(a, b);",
            "input a: f32[4]; input b: f32[4, 3]; input c: f32[2, 4]; input d: f32[4]; output y = MatMul(a, b); output z = MatMul(c, d);",
            "input a: f32[2, 9]; weight b: f32[9, 10] = glorot_uniform(seed = 2); weight c: f32[10] = uniform(low = -0.5, high = 0.5, seed = 3); output y = Relu(Add(MatMul(a, b), c));",
            "input a: f32[2, 3, 9]; weight b: f32[9, 3] = glorot_uniform(seed = 4); weight c: f32[3] = uniform(low = -0.5, high = 0.5, seed = 5); weight d: f32[9, 1] = glorot_uniform(seed = 6); output y = Relu(Add(MatMul(a, b), c)); output z = MatMul(a, d);",
        ])
    },
    op_type: "MatMul",
    inputs: &[input("A"), input("B")],
    infer,
    lower,
    macs,
    packs: |cx| {
        if packed_rows(cx).is_some() {
            vec![1]
        } else {
            Vec::new()
        }
    },
    fusion: Fusion {
        relu: &[DType::F32],
        row_bias: true,
        batch_norm: false,
    },
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let a = cx.input(0);
    let b = cx.input(1);
    for (i, t) in [(0, a), (1, b)] {
        if t.shape.rank() == 0 {
            return Err(OpError::input(
                i,
                "MatMul does not accept a scalar (rank 0)",
            ));
        }
    }
    let ar = a.shape.rank();
    let br = b.shape.rank();
    let ka = &a.shape.0[ar - 1];
    let kb = if br == 1 {
        &b.shape.0[0]
    } else {
        &b.shape.0[br - 2]
    };
    if ka != kb {
        return Err(OpError::input(
            1,
            format!(
                "MatMul inner dimensions differ: A is {} ({ka} columns), B is {} ({kb} rows)",
                a.shape, b.shape
            ),
        )
        .with_note(At::Input(0), format!("A has {ka} columns here")));
    }
    let a_batch = Shape(a.shape.0[..ar.saturating_sub(2)].to_vec());
    let b_batch = Shape(b.shape.0[..br.saturating_sub(2)].to_vec());
    let Some(batch) = broadcast(&a_batch, &b_batch) else {
        return Err(OpError::input(
            1,
            format!(
                "MatMul batch dimensions do not broadcast: A is {}, B is {}",
                a.shape, b.shape
            ),
        ));
    };
    let mut out: Vec<Dim> = batch.0;
    if ar >= 2 {
        out.push(a.shape.0[ar - 2].clone());
    }
    if br >= 2 {
        out.push(b.shape.0[br - 1].clone());
    }
    Ok(vec![TensorType {
        dtype: a.dtype,
        shape: Shape(out),
    }])
}

/// (batch shape, a batch strides, b batch strides, M, K, N), strides in elements.
type Plan = (Vec<usize>, Vec<usize>, Vec<usize>, usize, usize, usize);

fn plan(cx: &LowerCtx) -> Plan {
    let a = &cx.input(0).shape;
    let b = &cx.input(1).shape;
    let (m, k) = if a.len() >= 2 {
        (a[a.len() - 2], a[a.len() - 1])
    } else {
        (1, a[0])
    };
    let n = if b.len() >= 2 { b[b.len() - 1] } else { 1 };
    let a_batch = &a[..a.len().saturating_sub(2)];
    let b_batch = &b[..b.len().saturating_sub(2)];
    let rank = a_batch.len().max(b_batch.len());
    let mut batch = vec![1; rank];
    for (i, d) in batch.iter_mut().enumerate() {
        let pa = (i + a_batch.len()).checked_sub(rank).map(|j| a_batch[j]);
        let pb = (i + b_batch.len()).checked_sub(rank).map(|j| b_batch[j]);
        *d = pa.unwrap_or(1).max(pb.unwrap_or(1));
    }
    let scale = |s: Vec<usize>, mat: usize| s.into_iter().map(|x| x * mat).collect();
    let a_str = scale(broadcast_strides(a_batch, &batch), m * k);
    let b_str = scale(broadcast_strides(b_batch, &batch), k * n);
    (batch, a_str, b_str, m, k, n)
}

/// The packed path: `B` known at compile time and not batched (one matrix for every
/// batch index), `A` not broadcast, so all of A's rows form one `[rows, K]` matrix.
/// Returns the number of rows.
fn packed_rows(cx: &LowerCtx) -> Option<usize> {
    let b = cx.input_consts.get(1).copied().flatten()?.as_f32()?;
    let (batch, a_str, b_str, m, k, _) = plan(cx);
    if b_str.iter().any(|&s| s != 0) || b.is_empty() {
        return None;
    }
    // Size-1 batch axes have stride 0 and do not matter.
    let contiguous = a_str
        .iter()
        .enumerate()
        .all(|(i, &s)| batch[i] == 1 || s == batch[i + 1..].iter().product::<usize>() * m * k);
    contiguous.then(|| batch.iter().product::<usize>() * m)
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let (batch, a_str, b_str, m, k, n) = plan(cx);
    let a = &cx.input(0).expr;
    let b = &cx.input(1).expr;
    let y = &cx.outputs[0].expr;
    let kernels = kernels();
    if let Some(rows) = packed_rows(cx) {
        let values = cx.input_consts[1]
            .and_then(Data::as_f32)
            .expect("checked by packed_rows");
        let stored = ConstB::new(k, n, |kk, j| values[kk * n + j]);
        let relu = cx.epilogue.relu;
        let (bias_decl, init) = match cx.epilogue_bias {
            Some(v) => {
                let (decl, e) = node_static("bias", v.to_vec());
                (
                    decl,
                    quote!(::core::option::Option::Some(#kernels::packed::Strided { values: #e, rows: 0, cols: 1 })),
                )
            }
            None => (TokenStream::new(), quote!(::core::option::Option::None)),
        };
        let call = stored.product((rows, k, n), a, &init, y, relu);
        return quote! {
            #bias_decl
            #call
        };
    }
    // The fused bias and Relu run after the product: the bias (`n` values) added to
    // each of the output's rows as a broadcast `Add` is.
    let epilogue = {
        let bias = cx.epilogue_bias.map(|v| {
            let (decl, e) = node_static("bias", v.to_vec());
            let y = &cx.outputs[0].expr;
            let rows = batch.iter().product::<usize>() * m;
            quote! {
                #decl
                #kernels::binary::binary_inplace::<#kernels::binary::Add, f32, 2>(#y, #e, &[0, 1], &[#rows, #n]);
            }
        });
        let relu = cx.epilogue.relu.then(|| {
            let y = &cx.outputs[0].expr;
            quote!(#kernels::unary::unary_inplace::<#kernels::unary::Relu>(#y);)
        });
        quote!(#bias #relu)
    };
    if batch.is_empty() {
        return quote! {
            #kernels::gemm::gemm::<#m, #k, #n, false, false>(#a, #b, ::core::option::Option::None, 1.0, 1.0, #y);
            #epilogue
        };
    }
    let rank = batch.len();
    quote! {
        #kernels::gemm::batched_matmul::<#m, #k, #n, #rank>(#a, #b, #y, &[#(#batch),*], &[#(#a_str),*], &[#(#b_str),*]);
        #epilogue
    }
}

fn macs(cx: &LowerCtx) -> u64 {
    let (batch, _, _, m, k, n) = plan(cx);
    (batch.iter().product::<usize>() * m * k * n) as u64
}
