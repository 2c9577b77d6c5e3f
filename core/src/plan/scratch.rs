//! Scratch: the f32 values each node needs in the arena during its call, from its
//! operator's rule, or for a control-flow node, the region its bodies are planned in
//! (the largest body's arena). Each body is planned on its own, as a graph with the
//! outer graph's tensors whose nodes are the body's between two marks: an entry that
//! produces the formal inputs and an exit that reads the outputs and the formal inputs
//! (so the control-flow code can write the formals before a step and copy the outputs
//! after it, and the two never share memory). Outer tensors the body reads are the
//! node's extra inputs, alive until it has run. Bodies run unfused and without Winograd.

use crate::ir::{Body, Control, Graph, Node, TensorId};
use crate::ops::{self, Attrs, ScratchCtx};

use super::arena::{self, Plan};

/// The f32 scratch values node `i` of `graph` needs (0: none) when it runs with the
/// Winograd choice `winograd`; a control-flow node's is the region of its bodies.
pub fn scratch_elems(graph: &Graph, i: usize, winograd: u8) -> usize {
    let node = &graph.nodes[i];
    if let Some(c) = &node.control {
        return scratch_bytes(graph, c).div_ceil(4);
    }
    (node.op.scratch)(&node_ctx(graph, node, winograd))
}

/// What an operator's rules see of `node`: device shapes, attributes, which inputs
/// are known, the Winograd choice.
pub(super) fn node_ctx<'a>(graph: &Graph, node: &'a Node, winograd: u8) -> ScratchCtx<'a> {
    ScratchCtx {
        inputs: node
            .inputs
            .iter()
            .map(|t| t.map(|id| graph.device_shape(id)))
            .collect(),
        outputs: node
            .outputs
            .iter()
            .map(|&id| graph.device_shape(id))
            .collect(),
        attrs: &node.attrs,
        consts: node
            .inputs
            .iter()
            .map(|t| t.is_some_and(|id| graph.tensors[id].value.is_some()))
            .collect(),
        winograd,
    }
}

/// A body as a graph to plan and emit: the outer graph's tensors and ports, the body's
/// nodes between the entry and exit marks.
pub fn body_graph(outer: &Graph, body: &Body) -> Graph {
    let mark = |name: String, op, inputs: Vec<TensorId>, outputs: Vec<TensorId>| Node {
        name,
        doc: String::new(),
        instance: None,
        custom: None,
        op,
        inputs: inputs.into_iter().map(Some).collect(),
        outputs,
        attrs: Attrs::default(),
        control: None,
    };
    let mut nodes = vec![mark(
        format!("{}.entry", body.name),
        &ops::control::BODY_ENTRY,
        Vec::new(),
        body.inputs.clone(),
    )];
    nodes.extend(body.nodes.iter().cloned());
    nodes.push(mark(
        format!("{}.exit", body.name),
        &ops::control::BODY_EXIT,
        body.outputs.iter().chain(&body.inputs).copied().collect(),
        Vec::new(),
    ));
    Graph {
        name: outer.name.clone(),
        doc: String::new(),
        opset: outer.opset,
        model_version: None,
        domain: None,
        metadata: Vec::new(),
        winograd: outer.winograd,
        optimize: outer.optimize,
        instances: Vec::new(),
        device_dims: outer.device_dims.clone(),
        tensors: outer.tensors.clone(),
        inputs: outer.inputs.clone(),
        weights: outer.weights.clone(),
        nodes,
        outputs: outer.outputs.clone(),
    }
}

/// A body's graph and its arena plan (offsets from the start of the body's region).
/// Bodies run unfused and without Winograd.
pub(super) fn plan_body(outer: &Graph, body: &Body) -> (Graph, Plan) {
    let g = body_graph(outer, body);
    let scratch: Vec<usize> = (0..g.nodes.len())
        .map(|i| scratch_elems(&g, i, 0))
        .collect();
    let p = arena::plan(&g, &scratch);
    (g, p)
}

/// Bytes of the region a control-flow node needs for its bodies (a multiple of 8).
pub fn scratch_bytes(outer: &Graph, control: &Control) -> usize {
    control
        .bodies
        .iter()
        .map(|b| plan_body(outer, b).1.arena_bytes)
        .max()
        .unwrap_or(0)
        .next_multiple_of(8)
}
