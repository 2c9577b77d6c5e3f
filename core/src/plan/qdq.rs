//! Quantized groups: a `MatMul`, `Gemm` or `Conv` whose operands come from
//! `DequantizeLinear` and whose only reader is a `QuantizeLinear` runs as one integer
//! product on the 8-bit values (int32 sums, one requantization), the way ONNX Runtime
//! executes the same QDQ file (as `QLinearMatMul`, `com.microsoft.QGemm` and
//! `QLinearConv`); an `Add` of two such operands of one shape as ONNX Runtime's
//! `com.microsoft.QLinearAdd`. Decided first, on the graph the ONNX was written from: the ONNX
//! keeps the QDQ nodes; the forward pass never holds the float operands or the float
//! product, and a constant operand stays 8-bit in flash.
//!
//! A group is taken when the integer product is the one ONNX Runtime runs: the
//! activation and the output quantized per tensor, the weight per tensor or per output
//! column (channel), every zero point given, and the intermediate float tensors read by
//! nothing else (a `DequantizeLinear` that another node also reads stays for that
//! node). A `Gemm` also needs a constant B that is not transposed on A's side (`transA =
//! 0`) and, if it has C, `beta = 1` and C the dequantized int32 sums of zero point 0
//! and scale `a_scale * b_scale`; a `Conv` a constant weight and a bias, if any, of
//! such sums.

use crate::ir::{Graph, Node, TensorId};
use crate::ops::quant::add::{self, QLINEAR_ADD};
use crate::ops::quant::conv::QLINEAR_CONV;
use crate::ops::quant::integer::{QGEMM, QLINEAR_MATMUL};
use crate::ops::schema::{AttrValue, Attrs};
use crate::types::DType;

fn is(node: &Node, op_type: &str) -> bool {
    node.custom.is_none() && node.control.is_none() && node.op.op_type == op_type
}

/// `(x, scale, zero point)` of a `DequantizeLinear` or `QuantizeLinear` on 8-bit values
/// with all three inputs; per tensor, or, when `per_axis` names the axis of a rank-2
/// operand (or axis 0, a convolution's output channels, of a weight of higher rank)
/// whose length it holds, one scale and zero point along it.
fn linear(graph: &Graph, node: &Node, per_axis: Option<usize>) -> Option<[TensorId; 3]> {
    let (x, scale, zp) = match node.inputs.as_slice() {
        [Some(x), Some(s), Some(z)] => (*x, *s, *z),
        _ => return None,
    };
    let q = if is(node, "DequantizeLinear") {
        x
    } else {
        node.outputs[0]
    };
    if ![DType::I8, DType::U8].contains(&graph.tensors[q].ty.dtype)
        || graph.tensors[scale].ty.dtype != DType::F32
    {
        return None;
    }
    let per_tensor = graph.tensors[scale].ty.shape.single() && graph.tensors[zp].ty.shape.single();
    let along = per_axis.is_some_and(|axis| {
        let shape = &graph.tensors[x].ty.shape;
        let s = &graph.tensors[scale].ty.shape;
        let rank = shape.rank();
        (rank == 2 || (axis == 0 && rank >= 3))
            && node.attrs.int("axis").rem_euclid(rank as i64) == axis as i64
            && s.rank() == 1
            && s.0[0].fixed() == shape.0[axis].fixed()
            && graph.tensors[zp].ty.shape == *s
    });
    (per_tensor || along).then_some([x, scale, zp])
}

/// Whether the f32 values of `t` are `scale_a * scale_b`, per element of `scale_b`.
fn is_product_scale(graph: &Graph, t: TensorId, a: TensorId, b: TensorId) -> bool {
    let value = |t: TensorId| graph.tensors[t].value.as_ref().map(|d| d.to_f64());
    let (Some(s), Some(sa), Some(sb)) = (value(t), value(a), value(b)) else {
        return false;
    };
    let sa = sa.first().copied().unwrap_or(0.0) as f32;
    (s.len() == 1 || s.len() == sb.len())
        && sb.iter().enumerate().all(|(j, &v)| {
            let want = sa * v as f32;
            s[if s.len() == 1 { 0 } else { j }] as f32 == want
        })
}

/// The int32 values and the `DequantizeLinear` (its index) that make a bias `cf` of `n`
/// values: zero point 0 and scale `a_scale * b_scale` per element of `b_scale`, so that
/// it adds to the integer sums before requantization.
fn int32_sums(
    graph: &Graph,
    cf: TensorId,
    sa: TensorId,
    sb: TensorId,
    n: Option<usize>,
) -> Option<(TensorId, usize)> {
    let ci = graph.producer(cf)?;
    let dc = &graph.nodes[ci];
    let (ct, cs, cz) = match dc.inputs.as_slice() {
        [Some(t), Some(s), z] if is(dc, "DequantizeLinear") => (*t, *s, *z),
        // The zero point omitted: 0.
        [Some(t), Some(s)] if is(dc, "DequantizeLinear") => (*t, *s, None),
        _ => return None,
    };
    let zero = cz.is_none_or(|z| {
        graph.tensors[z]
            .value
            .as_ref()
            .is_some_and(|v| v.to_f64().iter().all(|&v| v == 0.0))
    });
    let ct_shape = &graph.tensors[ct].ty.shape;
    let row = ct_shape.rank() == 1 && ct_shape.0[0].fixed() == n;
    (graph.tensors[ct].ty.dtype == DType::I32
        && graph.tensors[ct].value.is_some()
        && zero
        && row
        && is_product_scale(graph, cs, sa, sb))
    .then_some((ct, ci))
}

/// The integer node a group becomes: its schema, inputs and attributes.
type Group = (&'static crate::ops::OpSchema, Vec<Option<TensorId>>, Attrs);

/// The group a `QuantizeLinear` at `qi` closes, with the nodes it makes dead.
fn group(graph: &Graph, readers: &[Vec<usize>], qi: usize) -> Option<(usize, Group, Vec<usize>)> {
    let only = |t: TensorId, k: usize| readers[t] == [k] && !graph.outputs.contains(&t);
    let q = &graph.nodes[qi];
    if !is(q, "QuantizeLinear") {
        return None;
    }
    let [x, sy, zy] = linear(graph, q, None)?;
    let mi = graph.producer(x)?;
    let m = &graph.nodes[mi];
    if is(m, "Add") {
        if !only(x, qi) {
            return None;
        }
        return add_group(graph, &only, mi, [x, sy, zy, q.outputs[0]]);
    }
    let gemm = is(m, "Gemm");
    let conv = is(m, "Conv");
    if !(gemm || conv || is(m, "MatMul")) || !only(x, qi) {
        return None;
    }
    let (af, bf) = (m.inputs[0]?, m.inputs[1]?);
    let (ai, bi) = (graph.producer(af)?, graph.producer(bf)?);
    let (da, db) = (&graph.nodes[ai], &graph.nodes[bi]);
    if !is(da, "DequantizeLinear") || !is(db, "DequantizeLinear") {
        return None;
    }
    let trans_b = gemm && m.attrs.int("transB") != 0;
    let [a, sa, za] = linear(graph, da, None)?;
    let [b, sb, zb] = linear(graph, db, Some(if trans_b || conv { 0 } else { 1 }))?;
    let (ar, br) = (
        graph.tensors[a].ty.shape.rank(),
        graph.tensors[b].ty.shape.rank(),
    );
    let mut dead: Vec<usize> = [(af, ai), (bf, bi)]
        .into_iter()
        .filter(|&(t, _)| only(t, mi))
        .map(|(_, n)| n)
        .collect();
    if conv {
        // A constant weight of the input's rank; an int32 bias of one sum per channel.
        if graph.tensors[b].value.is_none() || br != ar || ar < 3 {
            return None;
        }
        let channels = graph.tensors[b].ty.shape.0.first().and_then(|d| d.fixed());
        let bias = match m.inputs.get(2).copied().flatten() {
            None => None,
            Some(cf) => {
                let (ct, ci) = int32_sums(graph, cf, sa, sb, channels)?;
                if only(cf, mi) {
                    dead.push(ci);
                }
                Some(ct)
            }
        };
        let inputs = vec![
            Some(a),
            Some(sa),
            Some(za),
            Some(b),
            Some(sb),
            Some(zb),
            Some(sy),
            Some(zy),
            bias,
        ];
        return Some((mi, (&QLINEAR_CONV, inputs, m.attrs.clone()), dead));
    }
    if !gemm {
        if ar < 2 || !(br == 2 || br == ar) {
            return None;
        }
        let inputs = [a, sa, za, b, sb, zb, sy, zy].map(Some).to_vec();
        return Some((mi, (&QLINEAR_MATMUL, inputs, Attrs::default()), dead));
    }
    // Gemm: A [M, K], a constant B, C absent or int32 sums.
    if m.attrs.int("transA") != 0 || ar != 2 || br != 2 || graph.tensors[b].value.is_none() {
        return None;
    }
    let n = graph.tensors[x].ty.shape.0.last().and_then(|d| d.fixed());
    let c = match m.inputs.get(2).copied().flatten() {
        None => None,
        Some(cf) => {
            let (ct, ci) = int32_sums(graph, cf, sa, sb, n)?;
            if m.attrs.float("beta") != 1.0 {
                return None;
            }
            if only(cf, mi) {
                dead.push(ci);
            }
            Some(ct)
        }
    };
    let attrs = Attrs {
        explicit: vec![
            ("alpha", AttrValue::Float(m.attrs.float("alpha"))),
            ("transB", AttrValue::Int(i64::from(trans_b))),
        ],
        defaults: Vec::new(),
    };
    let inputs = vec![
        Some(a),
        Some(sa),
        Some(za),
        Some(b),
        Some(sb),
        Some(zb),
        c,
        Some(sy),
        Some(zy),
    ];
    Some((mi, (&QGEMM, inputs, attrs), dead))
}

/// A QDQ `Add` (its sum `x` quantized by `sy`, `zy` into `y`) of two 8-bit tensors of
/// its type that [`repeats`] allows, every scale and zero point a constant per tensor:
/// ONNX Runtime's `QLinearAdd`, when [`add::params`] holds for them.
fn add_group(
    graph: &Graph,
    only: &dyn Fn(TensorId, usize) -> bool,
    mi: usize,
    [x, sy, zy, y]: [TensorId; 4],
) -> Option<(usize, Group, Vec<usize>)> {
    let m = &graph.nodes[mi];
    let (af, bf) = (m.inputs.first().copied()??, m.inputs.get(1).copied()??);
    let (ai, bi) = (graph.producer(af)?, graph.producer(bf)?);
    let (da, db) = (&graph.nodes[ai], &graph.nodes[bi]);
    if !is(da, "DequantizeLinear") || !is(db, "DequantizeLinear") {
        return None;
    }
    let [a, sa, za] = linear(graph, da, None)?;
    let [b, sb, zb] = linear(graph, db, None)?;
    let dtype = |t: TensorId| graph.tensors[t].ty.dtype;
    if dtype(a) != dtype(b) || dtype(a) != dtype(y) || !repeats(graph, [a, b], x) {
        return None;
    }
    let value = |t: TensorId| {
        let v = graph.tensors[t].value.as_ref()?.to_f64();
        (v.len() == 1).then(|| v[0])
    };
    let scales = [value(sa)?, value(sb)?, value(sy)?];
    let zero_points = [value(za)?, value(zb)?, value(zy)?];
    add::params(scales, zero_points)?;
    let dead = [(af, ai), (bf, bi)]
        .into_iter()
        .filter(|&(t, _)| only(t, mi))
        .map(|(_, n)| n)
        .collect();
    let inputs = [a, sa, za, b, sb, zb, sy, zy].map(Some).to_vec();
    Some((mi, (&QLINEAR_ADD, inputs, Attrs::default()), dead))
}

/// Whether the operands `a` and `b` of an Add into `x` are both `x`'s shape, or one is
/// and the other repeats along its leading axes (its shape, leading 1s aside, is the end
/// of `x`'s, and it has more than one value on the last axis): ONNX Runtime then adds
/// runs of whole rows, its arithmetic the same as for one shape (a single value, or a
/// value per channel, it adds another way, which the plan leaves to the float Add).
fn repeats(graph: &Graph, [a, b]: [TensorId; 2], x: TensorId) -> bool {
    let out = graph.device_shape(x);
    let fits = |t: TensorId| {
        let shape = graph.device_shape(t);
        let lead = shape.iter().take_while(|&&d| d == 1).count();
        let tail = &shape[lead..];
        out.ends_with(tail) && tail.last().is_some_and(|&d| d > 1)
    };
    let whole = |t: TensorId| graph.device_numel(t) == graph.device_numel(x);
    fits(a) && fits(b) && (whole(a) || whole(b))
}

/// Rewrites every quantized group into its integer node; returns how many.
pub fn integer_groups(graph: &mut Graph) -> usize {
    let mut count = 0;
    loop {
        let readers = graph.all_consumers();
        let found = (0..graph.nodes.len())
            .find_map(|qi| group(graph, &readers, qi).map(|(mi, g, dead)| (qi, mi, g, dead)));
        let Some((qi, mi, (op, inputs, attrs), mut dead)) = found else {
            return count;
        };
        // The group runs where the QuantizeLinear ran: after everything it reads (its
        // scale may be computed after the product).
        let y = graph.nodes[qi].outputs[0];
        let mut node = graph.nodes[mi].clone();
        node.op = op;
        node.inputs = inputs;
        node.outputs = vec![y];
        node.attrs = attrs;
        graph.nodes[qi] = node;
        dead.push(mi);
        remove_nodes(graph, dead);
        count += 1;
    }
}

/// Removes the nodes at the indices `dead` (in any order, repeats allowed).
fn remove_nodes(graph: &mut Graph, mut dead: Vec<usize>) {
    dead.sort_unstable();
    dead.dedup();
    for &i in dead.iter().rev() {
        graph.nodes.remove(i);
    }
}

/// Operators that move or select values without computing new ones: between a
/// `DequantizeLinear` and a `QuantizeLinear` of the same scale and zero point they give
/// the 8-bit values ONNX Runtime gives (the quantizer shares one scale across them).
const PASS_THROUGH: &[&str] = &[
    "MaxPool",
    "Flatten",
    "Reshape",
    "Transpose",
    "Squeeze",
    "Unsqueeze",
    "Identity",
];

/// Whether tensors `a` and `b` are one scale or zero point: the same tensor, or
/// constants of equal values.
fn same_value(graph: &Graph, a: TensorId, b: TensorId) -> bool {
    let value = |t: TensorId| graph.tensors[t].value.as_ref().map(|d| d.to_f64());
    a == b || value(a).is_some_and(|v| Some(&v) == value(b).as_ref())
}

/// A `DequantizeLinear -> op -> QuantizeLinear` of one positive per-tensor scale and
/// zero point around a [`PASS_THROUGH`] op whose `QuantizeLinear` is at `qi`: the op,
/// the 8-bit tensor the `DequantizeLinear` read, and the `DequantizeLinear` if the op
/// was its only reader.
fn pass_through(
    graph: &Graph,
    readers: &[Vec<usize>],
    qi: usize,
) -> Option<(usize, TensorId, Option<usize>)> {
    let only = |t: TensorId, k: usize| readers[t] == [k] && !graph.outputs.contains(&t);
    let q = &graph.nodes[qi];
    if !is(q, "QuantizeLinear") {
        return None;
    }
    let [t, sy, zy] = linear(graph, q, None)?;
    let oi = graph.producer(t)?;
    let op = &graph.nodes[oi];
    if !PASS_THROUGH.iter().any(|name| is(op, name)) || op.outputs.len() != 1 || !only(t, qi) {
        return None;
    }
    // The integer MaxPool has 1-D and 2-D windows.
    if is(op, "MaxPool") && graph.tensors[t].ty.shape.rank() > 4 {
        return None;
    }
    let d = op.inputs.first().copied().flatten()?;
    let di = graph.producer(d)?;
    if !is(&graph.nodes[di], "DequantizeLinear") {
        return None;
    }
    let [x, sx, zx] = linear(graph, &graph.nodes[di], None)?;
    let positive = graph.tensors[sy]
        .value
        .as_ref()
        .is_some_and(|v| v.to_f64().first().is_some_and(|&s| s > 0.0));
    (positive && same_value(graph, sx, sy) && same_value(graph, zx, zy))
        .then(|| (oi, x, only(d, oi).then_some(di)))
}

/// Rewrites every [`pass_through`] group to run its op on the 8-bit values; returns
/// how many.
pub fn pass_through_groups(graph: &mut Graph) -> usize {
    let mut count = 0;
    loop {
        let readers = graph.all_consumers();
        let found = (0..graph.nodes.len())
            .find_map(|qi| pass_through(graph, &readers, qi).map(|(oi, x, di)| (qi, oi, x, di)));
        let Some((qi, oi, x, di)) = found else {
            return count;
        };
        graph.nodes[oi].inputs[0] = Some(x);
        graph.nodes[oi].outputs[0] = graph.nodes[qi].outputs[0];
        remove_nodes(graph, [qi].into_iter().chain(di).collect());
        count += 1;
    }
}

/// Every `DequantizeLinear` no group took whose inputs are all known at compile time (a
/// bias a float Add reads) becomes a weight of its f32 values, computed as the kernel
/// computes them, `(x - zero point) as f32 * scale` (per axis when the scale has several
/// values): otherwise every call would dequantize the same constant into the arena. The
/// 8-bit weight and the constants it read go when nothing else reads them. Returns how
/// many.
pub fn fold_constants(graph: &mut Graph) -> usize {
    let mut count = 0;
    loop {
        let known = |t: Option<TensorId>| t.is_none_or(|t| graph.tensors[t].value.is_some());
        let found = graph.nodes.iter().position(|n| {
            is(n, "DequantizeLinear")
                && n.inputs.len() >= 2
                && n.inputs.iter().all(|&t| known(t))
                && !graph.outputs.contains(&n.outputs[0])
        });
        let Some(i) = found else {
            return count;
        };
        let node = graph.nodes.remove(i);
        let value = |k: usize| {
            node.inputs
                .get(k)
                .copied()
                .flatten()
                .and_then(|t| graph.tensors[t].value.as_ref())
                .map(|d| d.to_f64())
                .unwrap_or_default()
        };
        let (x, scale, zp) = (value(0), value(1), value(2));
        let shape = graph.device_shape(node.inputs[0].unwrap_or(node.outputs[0]));
        let channels = scale.len().max(1);
        let inner = if channels > 1 {
            let rank = shape.len() as i64;
            let axis = node.attrs.int("axis").rem_euclid(rank.max(1)) as usize;
            shape
                .get(axis + 1..)
                .map_or(1, |d| d.iter().product::<usize>())
        } else {
            1
        };
        let values = x
            .iter()
            .enumerate()
            .map(|(e, &v)| {
                let c = (e / inner.max(1)) % channels;
                let z = zp
                    .get(if zp.len() == 1 { 0 } else { c })
                    .copied()
                    .unwrap_or(0.0);
                let s = scale
                    .get(c.min(scale.len().saturating_sub(1)))
                    .copied()
                    .unwrap_or(0.0);
                // The kernel's arithmetic: an exact integer difference, one rounding to
                // f32, one f32 product.
                (v - z) as f32 * s as f32
            })
            .collect();
        let y = node.outputs[0];
        graph.tensors[y].value = Some(crate::data::Data::F32(values));
        graph.tensors[y].kind = crate::ir::TensorKind::Weight;
        graph.weights.push(y);
        // What only this node read goes with it.
        let readers = graph.all_consumers();
        for t in node.inputs.iter().flatten() {
            if !readers[*t].is_empty() || graph.outputs.contains(t) {
                continue;
            }
            graph.weights.retain(|w| w != t);
            if let Some(p) = graph.producer(*t)
                && graph.nodes[p].op.fold.is_some()
                && graph.nodes[p]
                    .outputs
                    .iter()
                    .all(|o| readers[*o].is_empty())
            {
                graph.nodes.remove(p);
            }
        }
        count += 1;
    }
}
