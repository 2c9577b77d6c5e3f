//! `Attention` (opset 23): scaled dot-product attention over 4-D (`[batch, heads, seq,
//! head]`) or 3-D (`[batch, seq, heads * head]`, with `q_num_heads` and `kv_num_heads`)
//! queries, keys and values; grouped heads, a float or bool mask (broadcast, padded with
//! masked keys), a causal mask, a past key/value cache, softcap, and the
//! `qk_matmul_output` of the reference's modes. Computed as `kernels::attention`.

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static ATTENTION: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 23; input q: f32[2, 4, 3, 8]; input k: f32[2, 2, 5, 8]; input v: f32[2, 2, 5, 6]; let (y, pk, pv, s) = Attention(q, k, v); output y; output pk; output pv; let (yc, pkc, pvc, sc) = Attention(q, k, v, is_causal = 1, scale = 0.2, softcap = 2.0); output yc;",
            "opset = 23; input q: f32[1, 2, 3, 4]; input k: f32[1, 2, 3, 4]; input v: f32[1, 2, 3, 4]; input m: f32[3, 5]; input pk: f32[1, 2, 2, 4]; input pv: f32[1, 2, 2, 4]; let (y, ko, vo, s) = Attention(q, k, v, m, pk, pv); output y; output ko; output vo; let (yc, kc, vc, sc) = Attention(q, k, v, m, pk, pv, is_causal = 1); output yc;",
            "opset = 23; input q: f32[2, 3, 16]; input k: f32[2, 4, 8]; input v: f32[2, 4, 12]; input z: f32[2, 1, 3, 4]; let m = Greater(z, Constant(value_float = -0.5)); let (y, pk, pv, s) = Attention(q, k, v, m, q_num_heads = 4, kv_num_heads = 2); output y; output pk;",
        ])
    },
    op_type: "Attention",
    inputs: &[
        input("Q"),
        input("K"),
        input("V"),
        any_input("attn_mask", true),
        optional("past_key"),
        optional("past_value"),
    ],
    outputs: 4,
    attrs: &[
        attr("is_causal", AttrKind::Int, AttrDefault::Int(0)),
        attr("kv_num_heads", AttrKind::Int, AttrDefault::Absent),
        attr("q_num_heads", AttrKind::Int, AttrDefault::Absent),
        attr("qk_matmul_output_mode", AttrKind::Int, AttrDefault::Int(0)),
        attr("scale", AttrKind::Float, AttrDefault::Absent),
        attr("softcap", AttrKind::Float, AttrDefault::Float(0.0)),
        attr("softmax_precision", AttrKind::Int, AttrDefault::Absent),
    ],
    output_names: &["Y", "present_key", "present_value", "qk_matmul_output"],
    since_opset: 23,
    infer: |cx| {
        let shapes: Vec<Option<Vec<usize>>> = (0..6)
            .map(|i| {
                cx.opt_input(i)
                    .and_then(|t| t.shape.0.iter().map(Dim::fixed).collect())
            })
            .collect();
        let mask = cx.opt_input(3).map(|m| m.dtype);
        let (g, _) = geometry(&shapes, mask, cx.attrs)?;
        let f = |d: &[usize]| TensorType {
            dtype: cx.input(0).dtype,
            shape: Shape::fixed(d),
        };
        let total = g.past + g.kv_len;
        let y = if g.three_d {
            vec![g.batch, g.q_len, g.q_heads * g.dv]
        } else {
            vec![g.batch, g.q_heads, g.q_len, g.dv]
        };
        Ok(vec![
            f(&y),
            f(&[g.batch, g.kv_heads, total, g.dk]),
            f(&[g.batch, g.kv_heads, total, g.dv]),
            f(&[g.batch, g.q_heads, g.q_len, total]),
        ])
    },
    lower: |cx| {
        let shapes: Vec<Option<Vec<usize>>> = (0..6)
            .map(|i| cx.inputs.get(i).cloned().flatten().map(|o| o.shape))
            .collect();
        let mask_type = cx.inputs.get(3).cloned().flatten().map(|m| m.dtype);
        let (g, strides) =
            geometry(&shapes, mask_type, cx.attrs).expect("checked during inference");
        let kernels = kernels();
        let mask = match (cx.inputs.get(3).cloned().flatten(), strides) {
            (Some(m), Some((s, len))) => {
                let e = m.expr;
                quote!(::core::option::Option::Some(#kernels::attention::Mask { values: #e, strides: [#(#s),*], len: #len }))
            }
            _ => quote!(::core::option::Option::<#kernels::attention::Mask<'_, f32>>::None),
        };
        let Geometry {
            batch,
            q_heads,
            kv_heads,
            q_len,
            kv_len,
            past,
            dk,
            dv,
            three_d,
            causal,
            scale,
            softcap,
            mode,
        } = g;
        let (q, k, v) = (&cx.input(0).expr, &cx.input(1).expr, &cx.input(2).expr);
        let (pk, pv) = (cx.opt_expr(4), cx.opt_expr(5));
        let o: Vec<&TokenStream> = cx.outputs.iter().map(|o| &o.expr).collect();
        let (y, ko, vo, qk) = (o[0], o[1], o[2], o[3]);
        let scratch = &cx
            .scratch
            .as_ref()
            .expect("Attention asks for scratch")
            .expr;
        quote! {
            #kernels::attention::attention(#q, #k, #v, #mask, #pk, #pv, #y, #ko, #vo, #qk, #scratch,
                #kernels::attention::Geometry {
                    batch: #batch, q_heads: #q_heads, kv_heads: #kv_heads, q_len: #q_len,
                    kv_len: #kv_len, past: #past, dk: #dk, dv: #dv, three_d: #three_d,
                    causal: #causal, scale: #scale, softcap: #softcap, mode: #mode,
                });
        }
    },
    scratch: |cx| {
        cx.outputs
            .get(3)
            .and_then(|s| s.last().copied())
            .unwrap_or(0)
    },
    macs: |cx| {
        let s = &cx.outputs[3].shape;
        let dk = cx.outputs[1].shape.last().copied().unwrap_or(0);
        let dv = cx.outputs[2].shape.last().copied().unwrap_or(0);
        (s.iter().product::<usize>() * (dk + dv)) as u64
    },
    ..BASE
};

/// The compile-time shape of one node (as `kernels::attention::Geometry`).
struct Geometry {
    batch: usize,
    q_heads: usize,
    kv_heads: usize,
    q_len: usize,
    kv_len: usize,
    past: usize,
    dk: usize,
    dv: usize,
    three_d: bool,
    causal: bool,
    scale: f32,
    softcap: f32,
    mode: u8,
}

/// The geometry, and the mask's broadcast strides and key length when there is one.
#[allow(clippy::type_complexity)]
fn geometry(
    shapes: &[Option<Vec<usize>>],
    mask_type: Option<DType>,
    attrs: &Attrs,
) -> Result<(Geometry, Option<([usize; 4], usize)>), OpError> {
    const OP: &str = "Attention";
    let fixed = |i: usize| -> Result<&[usize], OpError> {
        shapes[i]
            .as_deref()
            .ok_or_else(|| OpError::input(i, format!("{OP} needs fixed dimensions")))
    };
    let (q, k, v) = (fixed(0)?, fixed(1)?, fixed(2)?);
    let heads = |name: &'static str| match attrs.get(name) {
        Some(AttrValue::Int(h)) if *h >= 1 => Ok(*h as usize),
        _ => Err(OpError::attr(
            name,
            format!("{OP} of 3-D inputs needs {name} (a positive count)"),
        )),
    };
    let split = |i: usize, hidden: usize, h: usize| {
        if hidden.is_multiple_of(h) {
            Ok(hidden / h)
        } else {
            Err(OpError::input(
                i,
                format!("{OP}: {hidden} values do not split into {h} heads"),
            ))
        }
    };
    let (batch, q_heads, kv_heads, q_len, kv_len, dk, dv, three_d) = match (q, k, v) {
        ([b, hq, l, d], [bk, hk, s, dkk], [bv, hv, sv, dvv]) => {
            if (bk, bv, hv, sv, dkk) != (b, b, hk, s, d) {
                return Err(OpError::input(
                    1,
                    format!(
                        "{OP} takes Q [B, Hq, L, D], K [B, Hkv, S, D], V [B, Hkv, S, Dv]; got {q:?}, {k:?}, {v:?}"
                    ),
                ));
            }
            (*b, *hq, *hk, *l, *s, *d, *dvv, false)
        }
        ([b, l, hidden_q], [bk, s, hidden_k], [bv, sv, hidden_v]) => {
            if (bk, bv, sv) != (b, b, s) {
                return Err(OpError::input(
                    1,
                    format!(
                        "{OP} takes Q [B, L, Hq * D], K [B, S, Hkv * D], V [B, S, Hkv * Dv]; got {q:?}, {k:?}, {v:?}"
                    ),
                ));
            }
            let (hq, hk) = (heads("q_num_heads")?, heads("kv_num_heads")?);
            let (dq, dkk, dvv) = (
                split(0, *hidden_q, hq)?,
                split(1, *hidden_k, hk)?,
                split(2, *hidden_v, hk)?,
            );
            if dq != dkk {
                return Err(OpError::input(
                    1,
                    format!("{OP}: query heads of {dq} values, key heads of {dkk}"),
                ));
            }
            (*b, hq, hk, *l, *s, dq, dvv, true)
        }
        _ => {
            return Err(OpError::input(
                0,
                format!("{OP} takes Q, K and V all 3-D or all 4-D, got {q:?}, {k:?}, {v:?}"),
            ));
        }
    };
    if kv_heads == 0 || q_heads % kv_heads != 0 {
        return Err(OpError::input(
            1,
            format!("{OP}: {q_heads} query heads are not a multiple of {kv_heads} key/value heads"),
        ));
    }
    let past = match (&shapes[4], &shapes[5]) {
        (None, None) => 0,
        (Some(pk), Some(pv)) => match (pk.as_slice(), pv.as_slice()) {
            ([b, h, p, d], [b2, h2, p2, d2])
                if (*b, *h, *d, *b2, *h2, *p2, *d2)
                    == (batch, kv_heads, dk, batch, kv_heads, *p, dv) =>
            {
                *p
            }
            _ => {
                return Err(OpError::input(
                    4,
                    format!(
                        "{OP} past_key and past_value must be [{batch}, {kv_heads}, P, {dk}] and [{batch}, {kv_heads}, P, {dv}], got {pk:?} and {pv:?}"
                    ),
                ));
            }
        },
        _ => {
            return Err(OpError::input(
                4,
                format!("{OP} takes past_key and past_value together"),
            ));
        }
    };
    let total = past + kv_len;
    let mask = match (&shapes[3], mask_type) {
        (None, _) | (_, None) => None,
        (Some(m), Some(t)) => {
            if !matches!(t, DType::F32 | DType::Bool) {
                return Err(OpError::input(
                    3,
                    format!("{OP} attn_mask is f32 or bool, got {t}"),
                ));
            }
            let target = [batch, q_heads, q_len, total];
            let last = m.last().copied().unwrap_or(1);
            if m.is_empty() || m.len() > 4 || last > total {
                return Err(OpError::input(
                    3,
                    format!(
                        "{OP} attn_mask must broadcast to {target:?} (its last axis at most {total} keys), got {m:?}"
                    ),
                ));
            }
            let mut strides = [0usize; 4];
            let mut stride = last;
            strides[3] = 1;
            for (a, &d) in m.iter().rev().enumerate().skip(1) {
                let axis = 3 - a;
                if d != 1 && d != target[axis] {
                    return Err(OpError::input(
                        3,
                        format!("{OP} attn_mask {m:?} does not broadcast to {target:?}"),
                    ));
                }
                strides[axis] = if d == 1 { 0 } else { stride };
                stride *= d;
            }
            Some((strides, last))
        }
    };
    let mode = match attrs.int("qk_matmul_output_mode") {
        m @ 0..=3 => m as u8,
        m => {
            return Err(OpError::attr(
                "qk_matmul_output_mode",
                format!("{OP} qk_matmul_output_mode is 0 to 3, got {m}"),
            ));
        }
    };
    let scale = match attrs.get("scale") {
        Some(AttrValue::Float(s)) => *s,
        _ => 1.0 / (dk as f32).sqrt(),
    };
    let causal = match attrs.int("is_causal") {
        0 => false,
        1 => true,
        c => {
            return Err(OpError::attr(
                "is_causal",
                format!("{OP} is_causal is 0 or 1, got {c}"),
            ));
        }
    };
    let g = Geometry {
        batch,
        q_heads,
        kv_heads,
        q_len,
        kv_len,
        past,
        dk,
        dv,
        three_d,
        causal,
        scale,
        softcap: attrs.float("softcap"),
        mode,
    };
    Ok((g, mask))
}
