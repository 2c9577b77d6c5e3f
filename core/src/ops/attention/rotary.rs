//! `RotaryEmbedding` (opset 23): rotary position embedding of `[batch, heads, seq,
//! head]` (or `[batch, seq, heads * head]` with `num_heads`), from cos and sin caches
//! indexed by `position_ids` (read at run time) or by batch and position.

use crate::ops::schema::prelude::*;
use crate::types::Shape;

pub static ROTARY_EMBEDDING: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 23; input x: f32[2, 4, 3, 8]; input c: f32[10, 4]; input s: f32[10, 4]; input z: f32[2, 3, 10]; let p = ArgMax(z, axis = 2, keepdims = 0); output a = RotaryEmbedding(x, c, s, p); output b = RotaryEmbedding(x, c, s, p, interleaved = 1);",
            "opset = 23; input x: f32[2, 3, 32]; input c: f32[2, 3, 2]; input s: f32[2, 3, 2]; output a = RotaryEmbedding(x, c, s, num_heads = 4, rotary_embedding_dim = 4); output b = RotaryEmbedding(x, c, s, num_heads = 4, rotary_embedding_dim = 4, interleaved = 1);",
        ])
    },
    op_type: "RotaryEmbedding",
    inputs: &[
        input("X"),
        input("cos_cache"),
        input("sin_cache"),
        any_input("position_ids", true),
    ],
    attrs: &[
        attr("interleaved", AttrKind::Int, AttrDefault::Int(0)),
        attr("num_heads", AttrKind::Int, AttrDefault::Int(0)),
        attr("rotary_embedding_dim", AttrKind::Int, AttrDefault::Int(0)),
    ],
    since_opset: 23,
    infer: |cx| {
        let x = cx.input(0);
        let dims: Option<Vec<usize>> = x.shape.0.iter().map(|d| d.fixed()).collect();
        let pos = cx.opt_input(3).map(|p| (p.dtype, p.shape.clone()));
        let cache = cx.input(1).shape.clone();
        geometry(dims.as_deref(), cx.attrs, &cache, &cx.input(2).shape, pos)?;
        Ok(vec![x.clone()])
    },
    lower: |cx| {
        let x = cx.input(0);
        let pos = cx
            .inputs
            .get(3)
            .cloned()
            .flatten()
            .map(|p| (p.dtype, Shape::fixed(&p.shape)));
        let (c, s) = (
            Shape::fixed(&cx.input(1).shape),
            Shape::fixed(&cx.input(2).shape),
        );
        let (g, heads_first) =
            geometry(Some(&x.shape), cx.attrs, &c, &s, pos).expect("checked during inference");
        let interleaved = cx.attrs.int("interleaved") == 1;
        let (xe, ce, se, pe) = (
            &x.expr,
            &cx.input(1).expr,
            &cx.input(2).expr,
            cx.opt_expr(3),
        );
        let (y, kernels) = (&cx.outputs[0].expr, kernels());
        quote! { #kernels::attention::rotary_embedding(#xe, #ce, #se, #pe, #y, [#(#g),*], #heads_first, #interleaved); }
    },
    macs: |cx| 2 * cx.outputs[0].numel() as u64,
    ..BASE
};

/// `[batch, heads, seq, head, rd, rows]` and whether the heads come before the
/// positions (a 4-D input).
fn geometry(
    x: Option<&[usize]>,
    attrs: &Attrs,
    cos: &Shape,
    sin: &Shape,
    pos: Option<(DType, Shape)>,
) -> Result<([usize; 6], bool), OpError> {
    const OP: &str = "RotaryEmbedding";
    let heads_attr = attrs.int("num_heads");
    let (batch, heads, seq, head, heads_first) = match x {
        Some(&[b, h, s, d]) => (b, h, s, d, true),
        Some(&[b, s, hidden]) if heads_attr > 0 && hidden % heads_attr as usize == 0 => {
            let h = heads_attr as usize;
            (b, h, s, hidden / h, false)
        }
        Some(&[_, _, hidden]) => {
            return Err(OpError::attr(
                "num_heads",
                format!(
                    "{OP} of a 3-D input needs num_heads dividing its {hidden} values, got {heads_attr}"
                ),
            ));
        }
        _ => {
            return Err(OpError::input(
                0,
                format!("{OP} takes a fixed [batch, heads, seq, head] or [batch, seq, hidden]"),
            ));
        }
    };
    let rd = match attrs.int("rotary_embedding_dim") {
        0 => head,
        r if r > 0 && r as usize <= head && r % 2 == 0 => r as usize,
        r => {
            return Err(OpError::attr(
                "rotary_embedding_dim",
                format!(
                    "{OP} rotary_embedding_dim must be even and at most the head size {head}, got {r}"
                ),
            ));
        }
    };
    if !matches!(attrs.int("interleaved"), 0 | 1) {
        return Err(OpError::attr(
            "interleaved",
            format!("{OP} interleaved is 0 or 1"),
        ));
    }
    if rd % 2 != 0 {
        return Err(OpError::input(
            0,
            format!("{OP} needs an even head size, got {head}"),
        ));
    }
    let half = rd / 2;
    let rows = match &pos {
        Some((dtype, p)) => {
            if *dtype != DType::I64 || p.0.len() != 2 || p.fixed_numel() != Some(batch * seq) {
                return Err(OpError::input(
                    3,
                    format!("{OP} position_ids must be i64 [{batch}, {seq}], got {dtype} {p}"),
                ));
            }
            match cos.0.as_slice() {
                [r, h] if h.fixed() == Some(half) => r.fixed().unwrap_or(0),
                _ => {
                    return Err(OpError::input(
                        1,
                        format!(
                            "{OP} with position_ids takes caches [max_position, {half}], got {cos}"
                        ),
                    ));
                }
            }
        }
        None => {
            if cos != &Shape::fixed(&[batch, seq, half]) {
                return Err(OpError::input(
                    1,
                    format!(
                        "{OP} without position_ids takes caches [{batch}, {seq}, {half}], got {cos}"
                    ),
                ));
            }
            batch * seq
        }
    };
    if sin != cos {
        return Err(OpError::input(
            2,
            format!("{OP} sin_cache must be shaped as cos_cache {cos}, got {sin}"),
        ));
    }
    Ok(([batch, heads, seq, head, rd, rows], heads_first))
}
