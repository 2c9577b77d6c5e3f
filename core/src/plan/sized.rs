//! Which nodes may call their kernel's copy sized at run time
//! ([`OpSchema::sized_kernel`](crate::ops::OpSchema::sized_kernel)).
//!
//! A kernel whose sizes are constants is compiled once per distinct set of them: for
//! the recurrent operators and the convolutions each copy is 0.5-3 KB of flash on a
//! Cortex-M, and a model with an LSTM of two widths, or five convolutions of different
//! shapes, carried one copy each. When a graph holds enough nodes of a kernel family
//! that differ (the family's `copies`: two LSTMs, three direct convolutions), each of
//! them calls the kernel's `_shared` form, which on the cores without an FPU runs one
//! copy for all of them that reads sizes and options as values (elsewhere the constant
//! copies, which are much faster there; the runtime's `lstm_shared` and
//! `conv2d_shared` say by how much). Nodes alike share their constant copy anyway, so
//! they count once. The choice does not depend on the target.
//!
//! A model that asks for flash over speed (`optimize = size`) shares from two copies
//! that differ, and its convolutions' `_shared` calls take the sized copy on every
//! core (the recurrent kernels' do not: see the runtime's `lstm_shared`).

use std::collections::HashMap;

use crate::ir::{Graph, Optimize};
use crate::ops::SizedFamily;

/// One flag per node of `graph` (run with the Winograd choices `winograd`): whether it
/// calls its kernel's `_shared` form.
pub fn sized_nodes(graph: &Graph, winograd: &[u8]) -> Vec<bool> {
    let families: Vec<Option<(&str, SizedFamily)>> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if n.control.is_some() {
                return None;
            }
            let cx = super::scratch::node_ctx(graph, n, winograd.get(i).copied().unwrap_or(0));
            (n.op.sized_kernel)(&cx).map(|family| (n.op.op_type, family))
        })
        .collect();
    let mut keys: HashMap<(&str, SizedFamily), Vec<String>> = HashMap::new();
    for (node, family) in graph.nodes.iter().zip(&families) {
        let Some(family) = family else { continue };
        let key = instance_key(graph, node);
        let seen = keys.entry(*family).or_default();
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    // Flash over speed: two copies are one too many.
    let least = |f: SizedFamily| match graph.optimize {
        Optimize::Speed => f.copies,
        Optimize::Size => f.copies.min(2),
    };
    families
        .iter()
        .map(|f| f.is_some_and(|f| keys.get(&f).is_some_and(|k| k.len() >= least(f.1))))
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
