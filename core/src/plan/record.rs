//! The plan's record: how each node runs, and the tree of plans of control-flow bodies.

use std::collections::HashMap;

use crate::data::{Data, TensorId};
use crate::ir::{Control, Graph};
use crate::ops::Epilogue;

use super::arena::Plan;
use super::fuse::Schedule;
use super::scratch::plan_body;

/// How one node runs in the forward pass.
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// Another node's kernel does this node's work (a fused Relu or bias, a folded
    /// BatchNormalization): the node emits no kernel call.
    pub skip: bool,
    /// Output 0 is written over the node's in-place input.
    pub inplace: bool,
    /// Byte offset of the node's scratch region in the arena, if it has one.
    pub scratch: Option<usize>,
    /// f32 values of the scratch region (0: none).
    pub scratch_elems: usize,
    /// A convolution runs as Winograd F(2x2, 3x3) in passes of this many rows of its 4x4
    /// elements (4: all sixteen at once; 1: a quarter of the scratch), or not (0).
    pub winograd: u8,
    /// The node calls its kernel's `_shared` form ([`super::sized`]).
    pub sized: bool,
    /// Bytes its weights take in flash beyond their declared size, stored transformed
    /// for the kernel chosen (`OpSchema::transformed`).
    pub transformed_bytes: usize,
    /// Work of later nodes this node's kernel does on its output.
    pub epilogue: Epilogue,
    /// A convolution with a folded BatchNormalization: its replacement weight and bias.
    pub folded: Option<(Data, Data)>,
    /// A skipped node whose work a later reader does on its own output (a Relu moved
    /// after a MaxPool): its value never exists.
    pub deferred: bool,
    /// A control-flow node's bodies, each planned inside this node's scratch region
    /// (offsets absolute, the outer tensors it reads at their outer offsets).
    pub bodies: Vec<Planned>,
}

/// A planned graph: the execution record emission reads.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The graph, its nodes in execution order.
    pub graph: Graph,
    /// Byte offset of every tensor the arena holds (for a body, also of the outer
    /// tensors it reads).
    pub offsets: HashMap<TensorId, usize>,
    /// The tensors read straight from a model input's array (views of it, no buffer):
    /// tensor -> input.
    pub input_views: HashMap<TensorId, TensorId>,
    /// Size of the arena in bytes (for a body, of its region).
    pub arena_bytes: usize,
    /// The largest total size of tensors alive at the same step.
    pub lower_bound_bytes: usize,
    /// One step per node of `graph`, in order.
    pub steps: Vec<Step>,
    /// The stack budget of the forward pass (`tinyonnx_layout::stack`), bodies
    /// included.
    pub stack_bytes: usize,
    /// Whether `Model::run` is `#[inline]`: for a model of at most [`INLINE_RUN_NODES`]
    /// nodes and [`INLINE_RUN_VALUES`] values, whose call and port checks are
    /// a large part of its cost (inlined, the checks see the caller's constant port
    /// counts). Other models leave it to LLVM: a hint there made it compile their
    /// kernels differently in the caller (the Transformer block's code grew by 14 KB).
    pub inline_run: bool,
    /// Whether the forward pass takes its ports (inputs, then outputs) through one
    /// reference to a tuple of them, for a model of more than [`PORTS_AS_ARGUMENTS`]
    /// ports: as arguments, each beyond the registers took a stack slot in
    /// `Model::run`'s frame beside its checked value (DtypeZoo's 59 ports made that frame
    /// 448 bytes on the Cortex-M4F, 248 with the tuple).
    pub ports_bundled: bool,
}

/// The most ports (inputs and outputs) the forward pass takes as separate arguments:
/// up to 8, the tuple took more stack than it saved on the Cortex-M4F (ControlFlow's 7
/// ports: 904 -> 928 bytes), and the riscv32 passes them in registers.
pub const PORTS_AS_ARGUMENTS: usize = 8;

/// The most nodes of a model whose `Model::run` is inlined into its caller.
pub const INLINE_RUN_NODES: usize = 2;
/// The most values (the elements of all its tensors together) of a model whose
/// `Model::run` is inlined into its caller.
pub const INLINE_RUN_VALUES: usize = 1024;

/// The record of a graph whose order, arena and fusions are decided.
pub(super) fn assemble(graph: Graph, arena: Plan, winograd: &[u8], fused: Schedule) -> Planned {
    let Schedule {
        epilogue,
        skip,
        folded,
        deferred,
    } = fused;
    let sized = super::sized::sized_nodes(&graph, winograd);
    let steps = epilogue
        .into_iter()
        .zip(skip)
        .zip(folded)
        .zip(deferred)
        .enumerate()
        .map(|(i, (((epilogue, skip), folded), deferred))| Step {
            skip,
            inplace: arena.inplace[i],
            scratch: arena.scratch[i],
            // As planned: a control-flow body is not planned again to learn its size.
            scratch_elems: arena.scratch_elems[i],
            winograd: winograd[i],
            sized: sized[i],
            transformed_bytes: if graph.nodes[i].control.is_some() {
                0
            } else {
                let node = &graph.nodes[i];
                (node.op.transformed)(&super::scratch::node_ctx(&graph, node, winograd[i]))
            },
            epilogue,
            folded,
            deferred,
            bodies: match &graph.nodes[i].control {
                Some(c) => placed_bodies(&graph, &arena, arena.scratch[i], c),
                None => Vec::new(),
            },
        })
        .collect::<Vec<_>>();
    let ports = graph.inputs.len() + graph.outputs.len();
    let stack_bytes = tinyonnx_layout::stack::bound(ports);
    Planned {
        ports_bundled: ports > PORTS_AS_ARGUMENTS,
        inline_run: graph.nodes.len() <= INLINE_RUN_NODES
            && (0..graph.tensors.len())
                .map(|id| graph.device_numel(id))
                .sum::<usize>()
                <= INLINE_RUN_VALUES,
        graph,
        offsets: arena.offsets,
        input_views: arena.input_views,
        arena_bytes: arena.arena_bytes,
        lower_bound_bytes: arena.lower_bound_bytes,
        steps,
        stack_bytes,
    }
}

/// The bodies of a control-flow node whose region starts at byte `base` of the outer
/// arena (`outer_plan`), each planned there: offsets absolute, the outer tensors it
/// reads at their outer offsets, nested bodies placed in turn.
pub fn placed_bodies(
    outer: &Graph,
    outer_plan: &Plan,
    base: Option<usize>,
    control: &Control,
) -> Vec<Planned> {
    let base = base.unwrap_or(0);
    control
        .bodies
        .iter()
        .map(|body| {
            let (g, mut p) = plan_body(outer, body);
            for v in p.offsets.values_mut() {
                *v += base;
            }
            for v in p.scratch.iter_mut().flatten() {
                *v += base;
            }
            for (&t, &off) in &outer_plan.offsets {
                p.offsets.entry(t).or_insert(off);
            }
            let n = g.nodes.len();
            let unfused = Schedule {
                epilogue: vec![Epilogue::default(); n],
                skip: vec![false; n],
                folded: vec![None; n],
                deferred: vec![false; n],
            };
            assemble(g, p, &vec![0; n], unfused)
        })
        .collect()
}
