//! Quantized groups: a `MatMul` whose operands both come from `DequantizeLinear` and
//! whose only reader is a `QuantizeLinear` runs as one `QLinearMatMul` on the 8-bit
//! values (int32 sums, one requantization), the way ONNX Runtime executes the same QDQ
//! file. Decided first, on the graph the ONNX was written from: the ONNX keeps the QDQ
//! nodes; the forward pass never holds the float operands or the float product, and a
//! constant operand stays 8-bit in flash.
//!
//! A group is taken when the float path and the integer one are the same function up
//! to rounding: the activation and the output quantized per tensor, the weight per
//! tensor or per column (the only forms `QLinearMatMul` has), every zero point given,
//! and the intermediate float tensors read by nothing else (a `DequantizeLinear` that
//! another node also reads stays for that node).

use crate::ir::{Graph, Node, TensorId};
use crate::ops::quant::integer::QLINEAR_MATMUL;
use crate::ops::schema::Attrs;
use crate::types::DType;

/// The node that writes `t`.
fn producer(graph: &Graph, t: TensorId) -> Option<usize> {
    graph.nodes.iter().position(|n| n.outputs.contains(&t))
}

fn is(node: &Node, op_type: &str) -> bool {
    node.custom.is_none() && node.control.is_none() && node.op.op_type == op_type
}

/// A tensor of one value: a per-tensor scale or zero point.
fn single(graph: &Graph, t: TensorId) -> bool {
    let s = &graph.tensors[t].ty.shape;
    s.rank() <= 1 && s.fixed_numel() == Some(1)
}

/// `(x, scale, zero point)` of a `DequantizeLinear` or `QuantizeLinear` with all three
/// inputs, per tensor unless `column_of` names the rank-2 operand whose last axis the
/// scale may follow.
fn linear(graph: &Graph, node: &Node, column_of: Option<usize>) -> Option<[TensorId; 3]> {
    let (x, scale, zp) = match node.inputs.as_slice() {
        [Some(x), Some(s), Some(z)] => (*x, *s, *z),
        _ => return None,
    };
    let bytes = [DType::I8, DType::U8];
    let q = if is(node, "DequantizeLinear") {
        x
    } else {
        node.outputs[0]
    };
    if !bytes.contains(&graph.tensors[q].ty.dtype) || graph.tensors[scale].ty.dtype != DType::F32 {
        return None;
    }
    let per_tensor =
        single(graph, scale) && graph.tensors[zp].ty.shape == graph.tensors[scale].ty.shape;
    let per_column = column_of.is_some_and(|rank| {
        let n = graph.tensors[x].ty.shape.0.last().and_then(|d| d.fixed());
        let s = &graph.tensors[scale].ty.shape;
        rank == 2
            && node.attrs.int("axis").rem_euclid(2) == 1
            && s.rank() == 1
            && s.0[0].fixed() == n
            && graph.tensors[zp].ty.shape == *s
    });
    (per_tensor || per_column).then_some([x, scale, zp])
}

/// Rewrites every `QuantizeLinear(MatMul(DequantizeLinear(a), DequantizeLinear(b)))`
/// into `QLinearMatMul`; returns how many.
pub fn integer_groups(graph: &mut Graph) -> usize {
    let mut count = 0;
    loop {
        let readers = graph.all_consumers();
        let outputs = &graph.outputs;
        let only = |t: TensorId, k: usize| readers[t] == [k] && !outputs.contains(&t);
        let found = graph.nodes.iter().enumerate().find_map(|(qi, q)| {
            if !is(q, "QuantizeLinear") {
                return None;
            }
            let [x, sy, zy] = linear(graph, q, None)?;
            let mi = producer(graph, x)?;
            let m = &graph.nodes[mi];
            if !is(m, "MatMul") || !only(x, qi) {
                return None;
            }
            let (af, bf) = (m.inputs[0]?, m.inputs[1]?);
            let (ai, bi) = (producer(graph, af)?, producer(graph, bf)?);
            let (da, db) = (&graph.nodes[ai], &graph.nodes[bi]);
            if !is(da, "DequantizeLinear") || !is(db, "DequantizeLinear") {
                return None;
            }
            let [a, sa, za] = linear(graph, da, None)?;
            let [b, sb, zb] = linear(graph, db, Some(graph.tensors[bf].ty.shape.rank()))?;
            let (ar, br) = (
                graph.tensors[a].ty.shape.rank(),
                graph.tensors[b].ty.shape.rank(),
            );
            if ar < 2 || !(br == 2 || br == ar) {
                return None;
            }
            let dead: Vec<usize> = [(af, ai), (bf, bi)]
                .into_iter()
                .filter(|&(t, _)| only(t, mi))
                .map(|(_, n)| n)
                .collect();
            Some((qi, mi, [a, sa, za, b, sb, zb, sy, zy], dead))
        });
        let Some((qi, mi, inputs, mut dead)) = found else {
            return count;
        };
        // The group runs where the QuantizeLinear ran: after everything it reads (its
        // scale may be computed after the MatMul).
        let y = graph.nodes[qi].outputs[0];
        let mut m = graph.nodes[mi].clone();
        m.op = &QLINEAR_MATMUL;
        m.inputs = inputs.into_iter().map(Some).collect();
        m.outputs = vec![y];
        m.attrs = Attrs::default();
        graph.nodes[qi] = m;
        dead.push(mi);
        dead.sort_unstable();
        dead.dedup();
        for &i in dead.iter().rev() {
            graph.nodes.remove(i);
        }
        count += 1;
    }
}
