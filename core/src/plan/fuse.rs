//! Forward-pass fusion, decided after the arena plan from each operator's
//! `OpSchema::fusion` (what its kernel can take over) and `OpSchema::absorbed` (what a
//! node can become), and invisible in the ONNX:
//!
//! - a `BatchNormalization` whose input is a `Conv` output read by nothing else, and
//!   that the planner runs in place, is folded into the convolution's weights and bias
//!   (`w' = w * s`, `b' = (b - mean) * s + B` with `s = scale / sqrt(var + epsilon)`,
//!   computed in f64), and emits nothing;
//! - an `Add` of a constant vector along the last axis that follows a `MatMul` the same
//!   way becomes the product's bias;
//! - a `Relu` that follows such a convolution (folded or not), a `Gemm`, a `MatMul`
//!   (with or without bias) or an f32 `Add` (a residual connection) the same way becomes
//!   that node's epilogue and emits nothing;
//! - a `Relu` read only by an f32 `MaxPool` of 1-D or 2-D windows, which it runs in place
//!   for, moves after the pool as its epilogue: the max of the Relu'd window is the Relu
//!   of its max (both keep NaN; only the sign of a zero max can differ), on a quarter of
//!   the values or fewer. This comes first: the pool's output is the smaller one.

use super::arena::Plan;
use crate::ir::{Data, Graph, TensorId};
use crate::ops::{Absorbed, Epilogue};

/// What the emitter does differently from one node per kernel call.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    pub epilogue: Vec<Epilogue>,
    /// Nodes whose work another node's kernel does.
    pub skip: Vec<bool>,
    /// Replacement weight and bias values of a convolution with a folded BatchNormalization.
    pub folded: Vec<Option<(Data, Data)>>,
    /// Skipped nodes whose work a later reader does on its own output (a Relu moved after
    /// a MaxPool): their value never exists.
    pub deferred: Vec<bool>,
}

/// The one node that reads `t`, when it is an operator that `absorbed` describes, reads
/// `t` as its first input, and runs in place (so skipping it changes no buffer).
fn only_consumer(
    (graph, readers): (&Graph, &[Vec<usize>]),
    t: TensorId,
    absorbed: Absorbed,
    plan: &Plan,
) -> Option<usize> {
    match readers[t].as_slice() {
        [k] if graph.nodes[*k].op.absorbed == Some(absorbed)
            && graph.nodes[*k].inputs.first() == Some(&Some(t))
            && plan.inplace[*k] =>
        {
            Some(*k)
        }
        _ => None,
    }
}

fn f32_value(graph: &Graph, t: Option<TensorId>) -> Option<&[f32]> {
    graph.tensors[t?].value.as_ref().and_then(Data::as_f32)
}

/// Whether `bias` has the length of `out`'s last axis and broadcasts along it (its
/// other dimensions are 1), and `out` is the shape of the sum.
fn is_row_vector(graph: &Graph, bias: TensorId, out: TensorId) -> bool {
    let b = graph.device_shape(bias);
    let o = graph.device_shape(out);
    let n = o.last().copied().unwrap_or(1);
    b.len() <= o.len() && b.last() == Some(&n) && b[..b.len() - 1].iter().all(|&d| d == 1)
}

/// Finds the fusions of a planned graph.
pub fn fuse(graph: &Graph, plan: &Plan) -> Schedule {
    let n = graph.nodes.len();
    let readers = graph.all_consumers();
    let mut s = Schedule {
        epilogue: vec![Epilogue::default(); n],
        skip: vec![false; n],
        folded: vec![None; n],
        deferred: vec![false; n],
    };
    for p in 0..n {
        if let Some(r) = relu_before_pool(graph, &readers, p, plan) {
            s.epilogue[p].relu = true;
            s.skip[r] = true;
            s.deferred[r] = true;
        }
    }
    for i in 0..n {
        // What the operator's kernel can take over, from its schema: a bias, then a
        // folded BatchNormalization, then a Relu on whatever those leave.
        let node = &graph.nodes[i];
        let fusion = node.op.fusion;
        let mut out = node.outputs[0];
        if fusion.row_bias
            && let Some(k) = only_consumer((graph, &readers), out, Absorbed::RowBias, plan)
            && let Some(bias) = graph.nodes[k].inputs[1]
            && f32_value(graph, Some(bias)).is_some()
            && is_row_vector(graph, bias, out)
        {
            s.epilogue[i].bias = Some(bias);
            s.skip[k] = true;
            out = graph.nodes[k].outputs[0];
        }
        if fusion.batch_norm
            && let Some(k) = only_consumer((graph, &readers), out, Absorbed::BatchNorm, plan)
            && let Some(folded) = fold_bn(graph, i, k)
        {
            s.folded[i] = Some(folded);
            s.skip[k] = true;
            out = graph.nodes[k].outputs[0];
        }
        if fusion
            .relu
            .contains(&graph.tensors[node.outputs[0]].ty.dtype)
            && let Some(r) = only_consumer((graph, &readers), out, Absorbed::Relu, plan)
            && !s.skip[r]
        {
            s.epilogue[i].relu = true;
            s.skip[r] = true;
        }
    }
    s
}

/// The `Relu` node that node `p` reads, when `p` is an f32 `MaxPool` of 1-D or 2-D
/// windows (the kernel that takes a Relu epilogue), it is the Relu's only reader, and
/// the Relu runs in place (so skipping it leaves the pool reading the Relu's input).
fn relu_before_pool(graph: &Graph, readers: &[Vec<usize>], p: usize, plan: &Plan) -> Option<usize> {
    let pool = &graph.nodes[p];
    let x = pool.inputs.first().copied().flatten()?;
    let is_pool = pool.custom.is_none()
        && pool.control.is_none()
        && pool.op.op_type == "MaxPool"
        && graph.tensors[x].ty.dtype == crate::types::DType::F32
        && graph.device_shape(x).len() <= 4;
    if !is_pool || readers[x].as_slice() != [p] {
        return None;
    }
    let r = graph.producer(x)?;
    let relu = &graph.nodes[r];
    (relu.custom.is_none()
        && relu.control.is_none()
        && relu.op.absorbed == Some(Absorbed::Relu)
        && plan.inplace[r])
        .then_some(r)
}

fn fold_bn(graph: &Graph, conv: usize, bn: usize) -> Option<(Data, Data)> {
    let c = &graph.nodes[conv];
    let b = &graph.nodes[bn];
    let w = f32_value(graph, c.inputs[1])?;
    let m = graph.tensors[c.outputs[0]].ty.shape.0[1].fixed()?;
    let conv_bias = match c.inputs.get(2).copied().flatten() {
        Some(t) => f32_value(graph, Some(t))?.to_vec(),
        None => vec![0.0; m],
    };
    let [scale, beta, mean, var] = [1, 2, 3, 4].map(|k| f32_value(graph, b.inputs[k]));
    let (scale, beta, mean, var) = (scale?, beta?, mean?, var?);
    let (w2, b2) = crate::ops::norm::batchnorm::fold_into_conv(
        w,
        &conv_bias,
        [scale, beta, mean, var],
        b.attrs.float("epsilon"),
    );
    Some((Data::F32(w2), Data::F32(b2)))
}
