//! The plan: every decision about how the forward pass runs, made once, in one place.
//!
//! From a checked [`Graph`] it decides which quantized groups run as integer kernels
//! and which dequantized constants are computed at compile time ([`qdq`]), the node
//! order ([`schedule`]), each node's kernel
//! variant (a convolution's Winograd passes, a recurrent or convolution kernel's copy
//! sized at run time when several nodes would each compile their own: [`sized`]), the arena offsets, views, in-place writes
//! and scratch regions ([`arena`], [`scratch`]), the fused epilogues ([`fuse`]), the
//! weights the assembler takes from their files ([`stream`]) and the
//! plans of the control-flow bodies, each placed in its node's scratch region (a tree
//! of plans). The result is one value, [`Planned`] ([`record`]): the graph in execution
//! order and one [`Step`] per node. Emission only reads it.
//!
//! This stage reads `ir`, `ops`, `data` and `types`; nothing below it imports it, and
//! its own files import one way (`qdq` imports none of them): `record` -> `fuse`, `sized`, `scratch` -> `arena`;
//! `sized` -> `scratch` (what a node's rules see);
//! `schedule` -> `scratch`, `arena`.

pub mod arena;
pub mod fuse;
pub mod qdq;
pub mod record;
pub mod schedule;
pub mod scratch;
pub mod sized;
pub mod stream;

use crate::ir::Graph;

pub use arena::in_arena;
pub use record::{Planned, Step};
pub use scratch::scratch_elems;
pub use stream::streamed_weights;

/// Plans a checked model: order, kernel variants, arena, fusions and bodies.
pub fn plan(mut graph: Graph) -> Planned {
    qdq::integer_groups(&mut graph);
    qdq::pass_through_groups(&mut graph);
    qdq::fold_constants(&mut graph);
    let (arena, winograd) = schedule::schedule(&mut graph);
    let fused = fuse::fuse(&graph, &arena);
    record::assemble(graph, arena, &winograd, fused)
}
