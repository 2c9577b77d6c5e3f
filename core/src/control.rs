//! Plans and lowers the control-flow nodes (`If`, `Loop`, `Scan`).
//!
//! Each body is planned on its own, as a graph with the outer graph's tensors whose
//! nodes are the body's between two marks: an entry that produces the formal inputs and
//! an exit that reads the outputs and the formal inputs (so the control-flow code can
//! write the formals before a step and copy the outputs after it, and the two never
//! share memory). The body's arena is the control node's scratch region in the outer
//! arena (the larger branch's for an `If`), so the whole model still has one arena of
//! constant size. Outer tensors the body reads are the node's extra inputs, alive until
//! it has run. Bodies run unfused (one kernel call per node).
//!
//! The forward pass: an `If` tests its condition and runs one branch, then copies that
//! branch's outputs; a `Loop` writes the iteration number and runs its body `trips`
//! times, copying the carried values back into the formals and each per-step output
//! into its row of the stacked output; a `Scan` copies row `t` of each scanned input
//! (row `trips - 1 - t` of one scanned in reverse) into its slice formal before step `t`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit_rust::{Kernels, body_steps, operand};
use crate::fuse::Schedule;
use crate::ir::{Body, Control, ControlKind, Graph, Node, TensorId};
use crate::ops::{self, Attrs, Epilogue};
use crate::plan::{self, Plan};

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
        winograd: 0,
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
        instances: Vec::new(),
        device_dims: outer.device_dims.clone(),
        tensors: outer.tensors.clone(),
        inputs: outer.inputs.clone(),
        weights: outer.weights.clone(),
        nodes,
        outputs: outer.outputs.clone(),
    }
}

/// A body's graph, its plan (offsets from the start of the body's region) and its
/// schedule (nothing fused).
fn plan_body(outer: &Graph, body: &Body) -> (Graph, Plan, Schedule) {
    let g = body_graph(outer, body);
    let scratch: Vec<usize> = (0..g.nodes.len())
        .map(|i| ops::scratch_elems(&g, i))
        .collect();
    let p = plan::plan(&g, &scratch);
    let n = g.nodes.len();
    let s = Schedule {
        epilogue: vec![Epilogue::default(); n],
        skip: vec![false; n],
        folded: vec![None; n],
    };
    (g, p, s)
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

/// Body `k` of node `i`, planned at its place in the outer arena: offsets absolute,
/// the outer tensors it reads at their outer offsets.
pub fn placed_body(
    outer: &Graph,
    outer_plan: &Plan,
    i: usize,
    k: usize,
) -> (Graph, Plan, Schedule) {
    let control = outer.nodes[i]
        .control
        .as_ref()
        .expect("a control-flow node");
    let base = outer_plan.scratch[i].unwrap_or(0);
    let (g, mut p, s) = plan_body(outer, &control.bodies[k]);
    for v in p.offsets.values_mut() {
        *v += base;
    }
    for v in p.scratch.iter_mut().flatten() {
        *v += base;
    }
    for (&t, &off) in &outer_plan.offsets {
        p.offsets.entry(t).or_insert(off);
    }
    (g, p, s)
}

/// Multiply-accumulates of one run of node `i`: a loop's body times its trips, the
/// larger branch of an `If`.
pub fn macs(outer: &Graph, outer_plan: &Plan, i: usize) -> u64 {
    let control = outer.nodes[i]
        .control
        .as_ref()
        .expect("a control-flow node");
    let per_body = (0..control.bodies.len()).map(|k| {
        let (g, p, s) = placed_body(outer, outer_plan, i, k);
        crate::emit_rust::macs(&g, &p, &s)
    });
    match control.kind {
        ControlKind::If => per_body.max().unwrap_or(0),
        ControlKind::Loop { trips } | ControlKind::Scan { trips, .. } => {
            per_body.sum::<u64>() * trips as u64
        }
    }
}

/// The weights the kernels of node `i`'s bodies read.
pub fn read_weights(outer: &Graph, outer_plan: &Plan, i: usize) -> Vec<TensorId> {
    let control = outer.nodes[i]
        .control
        .as_ref()
        .expect("a control-flow node");
    (0..control.bodies.len())
        .flat_map(|k| {
            let (g, p, s) = placed_body(outer, outer_plan, i, k);
            crate::emit_rust::read_weights(&g, &p, &s)
        })
        .collect()
}

/// `(dst).copy_from_slice(src)` for two operand expressions.
fn copy(dst: TokenStream, src: TokenStream) -> TokenStream {
    quote!((#dst).copy_from_slice(#src);)
}

/// The forward-pass code of control-flow node `i`.
pub fn lower(outer: &Graph, outer_plan: &Plan, i: usize, kernels: &Kernels) -> TokenStream {
    let node = &outer.nodes[i];
    let control = node.control.as_ref().expect("a control-flow node");
    let out = |id: TensorId| operand(outer, outer_plan, id, true).expr;
    let input = |k: usize| {
        let id = node.inputs[k].expect("control-flow inputs are given");
        operand(outer, outer_plan, id, false).expr
    };
    match control.kind {
        ControlKind::If => {
            let branch = |k: usize| {
                let (g, p, s) = placed_body(outer, outer_plan, i, k);
                let steps = body_steps(&g, &p, &s, kernels);
                let copies = control.bodies[k]
                    .outputs
                    .iter()
                    .zip(&node.outputs)
                    .map(|(&src, &dst)| copy(out(dst), operand(&g, &p, src, false).expr));
                quote!(#steps #(#copies)*)
            };
            let (then, other) = (branch(0), branch(1));
            let cond = input(0);
            quote! {
                if (#cond)[0] { #then } else { #other }
            }
        }
        ControlKind::Loop { trips } | ControlKind::Scan { trips, .. } => {
            let body = &control.bodies[0];
            let (g, p, s) = placed_body(outer, outer_plan, i, 0);
            let formal = |k: usize| operand(&g, &p, body.inputs[k], true).expr;
            let result = |k: usize| operand(&g, &p, body.outputs[k], false).expr;
            let steps = body_steps(&g, &p, &s, kernels);
            // Where the carried formals, inputs and body outputs start.
            let (formal0, input0, out0, scanned) = match control.kind {
                ControlKind::Loop { .. } => (2, 2, 1, 0),
                ControlKind::Scan { scan_inputs, .. } => (0, 0, 0, scan_inputs),
                ControlKind::If => unreachable!(),
            };
            let carried = body.inputs.len() - formal0 - scanned;
            let init = (0..carried).map(|k| copy(formal(formal0 + k), input(input0 + k)));
            let back = (0..carried).map(|k| copy(formal(formal0 + k), result(out0 + k)));
            let last = (0..carried).map(|k| copy(out(node.outputs[k]), formal(formal0 + k)));
            let rows = (out0 + carried..body.outputs.len()).map(|k| {
                let n = g.device_numel(body.outputs[k]);
                let dst = out(node.outputs[k - out0]);
                copy(quote!((#dst)[__it * #n..(__it + 1) * #n]), result(k))
            });
            let reversed = |j: usize| match node.attrs.get("scan_input_directions") {
                Some(ops::AttrValue::Ints(d)) => d.get(j) == Some(&1),
                _ => false,
            };
            let slices = (0..scanned).map(|j| {
                let n = g.device_numel(body.inputs[carried + j]);
                let src = input(carried + j);
                let row = if reversed(j) {
                    quote!((#trips - 1 - __it))
                } else {
                    quote!(__it)
                };
                copy(
                    formal(carried + j),
                    quote!(&(#src)[#row * #n..(#row + 1) * #n]),
                )
            });
            let counters = match control.kind {
                ControlKind::Loop { .. } => {
                    let (iter, cond) = (formal(0), formal(1));
                    quote! {
                        (#iter)[0] = __it as i64;
                        (#cond)[0] = true;
                    }
                }
                _ => TokenStream::new(),
            };
            quote! {
                #(#init)*
                for __it in 0..#trips {
                    #counters
                    #(#slices)*
                    #steps
                    #(#back)*
                    #(#rows)*
                }
                #(#last)*
            }
        }
    }
}
