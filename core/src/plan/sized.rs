//! Which nodes may call their kernel's copy sized at run time
//! ([`OpSchema::sized_kernel`](crate::ops::OpSchema::sized_kernel)).
//!
//! A kernel whose sizes are constants is compiled once per distinct set of them: for
//! the recurrent operators each copy is 1-3 KB of flash on a Cortex-M, and a model with
//! an LSTM of two widths, or a GRU and a reversed one, carried one copy each. When a
//! graph holds nodes of such an operator that differ, each of them calls the kernel's
//! `_shared` form, which on the cores without an FPU runs one copy for all of them that
//! reads sizes and options as values (elsewhere the constant copies, which are much
//! faster there; the runtime's `lstm_shared` says by how much). Nodes alike share their
//! constant copy anyway, so they keep it. The choice does not depend on the target.

use std::collections::HashMap;

use crate::ir::Graph;

/// One flag per node of `graph`: whether it calls its kernel's `_shared` form.
pub fn sized_nodes(graph: &Graph) -> Vec<bool> {
    let mut keys: HashMap<&str, Vec<String>> = HashMap::new();
    for node in graph.nodes.iter().filter(|n| n.op.sized_kernel) {
        let key = instance_key(graph, node);
        let seen = keys.entry(node.op.op_type).or_default();
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    graph
        .nodes
        .iter()
        .map(|n| n.op.sized_kernel && keys.get(n.op.op_type).is_some_and(|k| k.len() > 1))
        .collect()
}

/// What decides a node's constant copy: its inputs' device shapes, which of them are
/// known at compile time (packed weights or not) and its attributes.
fn instance_key(graph: &Graph, node: &crate::ir::Node) -> String {
    let inputs: Vec<_> = node
        .inputs
        .iter()
        .map(|t| t.map(|id| (graph.device_shape(id), graph.tensors[id].value.is_some())))
        .collect();
    format!(
        "{inputs:?} {:?} {:?}",
        node.attrs.explicit, node.attrs.defaults
    )
}
