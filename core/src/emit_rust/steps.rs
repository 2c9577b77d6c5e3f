//! The forward pass's statements: one kernel call per planned step (the operator's
//! lowering, a custom kernel, or a control-flow node's bodies), with the operands'
//! places in the arena as the plan gave them.
//!
//! Control flow: an `If` tests its condition and runs one branch, then copies that
//! branch's outputs; a `Loop` writes the iteration number and runs its body `trips`
//! times, copying the carried values back into the formals and each per-step output
//! into its row of the stacked output; a `Scan` copies row `t` of each scanned input
//! (row `trips - 1 - t` of one scanned in reverse) into its slice formal before step `t`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, format_ident, quote};

use crate::ir::{ControlKind, Data, Graph, Node, TensorId, TensorKind};
use crate::ops::{self, LowerCtx, Operand, variant};
use crate::plan::{Planned, Step, in_arena};

/// Where a tensor lives in the generated code.
pub(crate) fn operand(p: &Planned, id: TensorId, mutable: bool) -> Operand {
    let graph = &p.graph;
    let shape = graph.device_shape(id);
    let len: usize = shape.iter().product();
    let elem = format_ident!("{}", graph.tensors[id].ty.dtype.name());
    let expr = match &graph.tensors[id].kind {
        TensorKind::Input => {
            let name = input_port(p, id);
            quote!(&#name[..])
        }
        // A view of an input reads the input's array (its shape is the view's).
        TensorKind::Value if let Some(&input) = p.input_views.get(&id) => {
            let name = input_port(p, input);
            quote!(&#name[..])
        }
        TensorKind::Weight => {
            let name = format_ident!("__w{}", id);
            quote!(&#name[..])
        }
        TensorKind::Value if !in_arena(graph, id) => {
            let name = output_port(p, id);
            if mutable {
                quote!(&mut #name[..])
            } else {
                quote!(&#name[..])
            }
        }
        TensorKind::Value => {
            let offset = p.offsets[&id];
            // Safety (of the generated call): the planner gives tensors that are alive
            // at the same step disjoint, aligned byte ranges inside the arena, and each
            // reference lives only for the one kernel call of its node.
            if mutable {
                quote!(unsafe { ::tinyonnx::__export::region_mut::<#elem>(__base, #offset, #len) })
            } else {
                quote!(unsafe { ::tinyonnx::__export::region::<#elem>(__base, #offset, #len) })
            }
        }
    };
    Operand {
        expr,
        shape,
        dtype: graph.tensors[id].ty.dtype,
    }
}

/// The forward pass's array of input `id`: its parameter, or its field of the bundled
/// ports.
fn input_port(p: &Planned, id: TensorId) -> TokenStream {
    let graph = &p.graph;
    match graph.inputs.iter().position(|&i| i == id) {
        Some(k) if p.ports_bundled => {
            let k = syn::Index::from(k);
            quote!(__ports.#k)
        }
        _ => input_ident(graph, id).into_token_stream(),
    }
}

/// The forward pass's array of output `id` (after the inputs among the bundled ports).
fn output_port(p: &Planned, id: TensorId) -> TokenStream {
    let graph = &p.graph;
    match graph.outputs.iter().position(|&o| o == id) {
        Some(k) if p.ports_bundled => {
            let k = syn::Index::from(graph.inputs.len() + k);
            quote!(__ports.#k)
        }
        _ => format_ident!("__out{}", id).into_token_stream(),
    }
}

/// The parameter of `forward` for input `id`: its name, with characters an identifier
/// cannot hold (a composition's `pre/x`) as `_`, and its position appended when that
/// makes two inputs alike.
pub(super) fn input_ident(graph: &Graph, id: TensorId) -> Ident {
    let clean = |name: &str| -> String {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut mine = clean(&graph.tensors[id].name);
    if mine.starts_with(|c: char| c.is_ascii_digit()) {
        mine.insert(0, '_');
    }
    let clash = graph
        .inputs
        .iter()
        .any(|&o| o != id && clean(&graph.tensors[o].name) == mine);
    let k = graph.inputs.iter().position(|&i| i == id).unwrap_or(0);
    let name = if clash { format!("{mine}_{k}") } else { mine };
    Ident::new(&name, Span::call_site())
}

/// The lowering context of node `i`.
pub(super) fn lower_ctx(p: &Planned, i: usize) -> LowerCtx<'_> {
    let (graph, step) = (&p.graph, &p.steps[i]);
    let node = &graph.nodes[i];
    let mut inputs: Vec<Option<Operand>> = node
        .inputs
        .iter()
        .map(|t| t.map(|id| operand(p, id, false)))
        .collect();
    if step.folded.is_some() {
        // The convolution reads the folded weight and bias instead of its own.
        let w = format_ident!("__wf{}", i);
        let b = format_ident!("__bf{}", i);
        let w_shape = inputs[1].as_ref().expect("Conv has W").shape.clone();
        let m = w_shape[0];
        inputs[1] = Some(Operand {
            expr: quote!(&#w[..]),
            shape: w_shape,
            dtype: crate::types::DType::F32,
        });
        inputs.resize(3, None);
        inputs[2] = Some(Operand {
            expr: quote!(&#b[..]),
            shape: vec![m],
            dtype: crate::types::DType::F32,
        });
    }
    let scratch = step.scratch.map(|offset| {
        let len = step.scratch_elems;
        Operand {
            expr: quote!(unsafe { ::tinyonnx::__export::region_mut::<f32>(__base, #offset, #len) }),
            shape: vec![len],
            dtype: crate::types::DType::F32,
        }
    });
    LowerCtx {
        inputs,
        outputs: node
            .outputs
            .iter()
            .map(|&id| operand(p, id, true))
            .collect(),
        inplace: step.inplace,
        attrs: &node.attrs,
        scratch,
        scratch_bytes: step.scratch.map(|offset| (offset, step.scratch_elems * 4)),
        input_consts: {
            let mut consts: Vec<Option<&Data>> = node
                .inputs
                .iter()
                .map(|t| t.and_then(|id| graph.tensors[id].value.as_ref()))
                .collect();
            if let Some((w, b)) = &step.folded {
                consts.resize(3, None);
                consts[1] = Some(w);
                consts[2] = Some(b);
            }
            consts
        },
        output_consts: node
            .outputs
            .iter()
            .map(|&id| graph.tensors[id].value.as_ref())
            .collect(),
        epilogue: &step.epilogue,
        epilogue_bias: step
            .epilogue
            .bias
            .and_then(|t| graph.tensors[t].value.as_ref())
            .and_then(Data::as_f32),
        winograd: step.winograd,
        sized: step.sized,
        optimize_size: graph.optimize == crate::ir::Optimize::Size,
        opset: graph.opset,
    }
}

/// Total multiply-accumulates of one inference (skipped nodes included, as in the ONNX).
pub fn macs(p: &Planned) -> u64 {
    (0..p.graph.nodes.len())
        .map(|i| match p.graph.nodes[i].control {
            Some(_) => control_macs(p, i),
            None => (p.graph.nodes[i].op.macs)(&lower_ctx(p, i)),
        })
        .sum()
}

/// The custom operators' kernel paths by operator name.
pub(crate) type Kernels<'a> = [(String, &'a syn::Path)];

/// The kernel calls of a planned graph's nodes in order, each followed by `trace` calls
/// for its outputs when `trace` is set.
pub(super) fn steps(p: &Planned, kernels: &Kernels, trace: bool) -> Vec<TokenStream> {
    let graph = &p.graph;
    (0..graph.nodes.len())
        .map(|i| {
            let step = &p.steps[i];
            // A node whose kernel also does a later node's work (a fused Relu or bias, a
            // folded BatchNormalization) leaves that node's value, reported at the later
            // (skipped) node; its own value is never materialized.
            // A MaxPool that took the Relu before it: its output is the ONNX MaxPool's.
            let took_relu = graph.nodes[i]
                .inputs
                .first()
                .copied()
                .flatten()
                .and_then(|x| graph.producer(x))
                .is_some_and(|r| p.steps[r].deferred);
            let fused = (step.epilogue != ops::Epilogue::default() && !took_relu)
                || step.folded.is_some()
                || step.deferred
                // A skipped node followed by another skipped one (Conv, folded
                // BatchNormalization, fused Relu): only the last value exists.
                || (step.skip
                    && graph.nodes[i]
                        .outputs
                        .iter()
                        .any(|&o| graph.consumers(o).iter().any(|&k| p.steps[k].skip)));
            let traces = graph.nodes[i]
                .outputs
                .iter()
                .filter(|_| trace && !fused)
                .map(|&o| trace_call(p, o));
            if step.skip {
                return quote!(#(#traces)*);
            }
            let call = match (&graph.nodes[i].custom, &graph.nodes[i].control) {
                // The user's kernel path keeps its spans, so a type that is not a kernel
                // is an error at the path.
                (Some(info), _) => custom_call(
                    p,
                    i,
                    &lower_ctx(p, i),
                    kernels
                        .iter()
                        .find(|(n, _)| *n == info.op_type)
                        .map(|(_, path)| *path)
                        .expect("bug: a custom node without its declaration"),
                ),
                (None, Some(_)) => control_lower(p, i, kernels),
                (None, None) => (graph.nodes[i].op.lower)(&lower_ctx(p, i)),
            };
            quote!({ #call } #(#traces)*)
        })
        .collect()
}

/// The kernel calls of a control-flow body (planned by `plan::control`), without traces.
pub(crate) fn body_steps(p: &Planned, kernels: &Kernels) -> TokenStream {
    let steps = steps(p, kernels, false);
    quote!(#(#steps)*)
}

/// A custom operator's node: `<kernel as CustomKernel>::run(inputs, outputs)`. The
/// outputs in the arena are zeroed first: the trait is safe, so a kernel that leaves
/// values unwritten must not make later code read stale bytes as an invalid `bool`.
fn custom_call(p: &Planned, i: usize, cx: &LowerCtx, kernel: &syn::Path) -> TokenStream {
    let ins = cx.inputs.iter().flatten().map(|o| {
        let (v, e) = (variant(o.dtype), &o.expr);
        quote!(::tinyonnx::TensorRef::#v(#e))
    });
    let graph = &p.graph;
    let outs = cx.outputs.iter().zip(&graph.nodes[i].outputs).map(|(o, &id)| {
        let v = variant(o.dtype);
        let e = if in_arena(graph, id) {
            let (offset, len) = (p.offsets[&id], graph.device_numel(id));
            let elem = format_ident!("{}", o.dtype.name());
            // Safety (of the generated call): as for `region_mut`; zero bytes are a
            // valid value of every element type.
            quote!(unsafe { ::tinyonnx::__export::region_zeroed_mut::<#elem>(__base, #offset, #len) })
        } else {
            o.expr.clone()
        };
        quote!(::tinyonnx::TensorMut::#v(#e))
    });
    quote! {
        <#kernel as ::tinyonnx::CustomKernel>::run(&[#(#ins),*], &mut [#(#outs),*]);
    }
}

/// `trace("name", TensorRef::<T>(values))` for tensor `id` as it is after its node ran.
fn trace_call(p: &Planned, id: TensorId) -> TokenStream {
    let graph = &p.graph;
    let name = &graph.tensors[id].name;
    let v = variant(graph.tensors[id].ty.dtype);
    let expr = operand(p, id, false).expr;
    quote!(trace(#name, ::tinyonnx::TensorRef::#v(#expr));)
}

/// The weights some emitted kernel call reads.
pub(crate) fn read_weights(p: &Planned) -> Vec<TensorId> {
    let graph = &p.graph;
    let mut read = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let step = &p.steps[i];
        if step.skip {
            continue;
        }
        if node.control.is_some() {
            read.extend(step.bodies.iter().flat_map(read_weights));
            // The node's own inputs: an initial carried value or a scanned tensor may be
            // a weight (an imported constant), which the loop code copies or slices.
            read.extend(
                node.inputs
                    .iter()
                    .flatten()
                    .filter(|&&t| graph.tensors[t].kind == TensorKind::Weight),
            );
            continue;
        }
        let packed = (node.op.packs)(&lower_ctx(p, i));
        for (k, t) in node.inputs.iter().enumerate() {
            let Some(t) = *t else { continue };
            if kernel_weight(graph, node, step, k, t) && !packed.contains(&k) {
                read.push(t);
            }
        }
    }
    read
}

/// Whether input `k` (tensor `t`) of a node is a weight its kernel reads as stored: not
/// one a folded BatchNormalization replaced (a convolution's weight and bias) nor one
/// only compile-time code reads (a shape, axes).
fn kernel_weight(graph: &Graph, node: &Node, step: &Step, k: usize, t: TensorId) -> bool {
    let replaced = step.folded.is_some() && (k == 1 || k == 2);
    let compile_time = node.control.is_none()
        && node
            .op
            .input_spec(k)
            .is_some_and(|s| matches!(s.ty, ops::InTy::I64Const | ops::InTy::Const));
    graph.tensors[t].kind == TensorKind::Weight && !replaced && !compile_time
}

/// Bytes of weights the firmware stores: those the kernels read as declared, the
/// packed ones (their values, not the padding of their last panel) and a folded
/// convolution's replacement weight and bias, each weight once. Parameters only
/// compile-time code reads (shapes, axes, a folded BatchNormalization's) are not stored.
pub fn stored_weight_bytes(p: &Planned) -> usize {
    let graph = &p.graph;
    let mut seen = std::collections::HashSet::new();
    let mut bytes = 0;
    for (i, node) in graph.nodes.iter().enumerate() {
        let step = &p.steps[i];
        if step.skip {
            continue;
        }
        if node.control.is_some() {
            bytes += step.bodies.iter().map(stored_weight_bytes).sum::<usize>();
        }
        if let Some((w, b)) = &step.folded {
            bytes += (w.len() + b.len()) * 4;
        }
        // A fused Add's constant vector, emitted with this node's kernel.
        if let Some(t) = step.epilogue.bias
            && seen.insert(t)
        {
            bytes += graph.device_numel(t) * graph.tensors[t].ty.dtype.size();
        }
        for (k, t) in node.inputs.iter().enumerate() {
            let Some(t) = *t else { continue };
            if kernel_weight(graph, node, step, k, t) && seen.insert(t) {
                bytes += graph.device_numel(t) * graph.tensors[t].ty.dtype.size();
            }
        }
    }
    bytes
}

/// Bytes the firmware stores beyond [`stored_weight_bytes`] for weights kept transformed
/// where the model asked for it (a Winograd convolution's `[16][M][C]` kernel holds 16
/// values for every 9 of its declared weight, which that count takes as declared): the
/// plan's [`Step::transformed_bytes`].
pub fn transformed_weight_bytes(p: &Planned) -> usize {
    p.steps
        .iter()
        .filter(|s| !s.skip)
        .map(|s| s.transformed_bytes + s.bodies.iter().map(transformed_weight_bytes).sum::<usize>())
        .sum()
}

/// Multiply-accumulates of one run of node `i`: a loop's body times its trips, the
/// larger branch of an `If`.
fn control_macs(outer: &Planned, i: usize) -> u64 {
    let control = outer.graph.nodes[i]
        .control
        .as_ref()
        .expect("a control-flow node");
    let per_body = outer.steps[i].bodies.iter().map(macs);
    match control.kind {
        ControlKind::If => per_body.max().unwrap_or(0),
        // The data decides the trips: one counted.
        ControlKind::Loop { exit: true, .. } => per_body.sum::<u64>(),
        ControlKind::Loop { trips, .. } | ControlKind::Scan { trips, .. } => {
            per_body.sum::<u64>() * trips as u64
        }
    }
}

/// `(dst).copy_from_slice(src)` for two operand expressions.
fn copy(dst: TokenStream, src: TokenStream) -> TokenStream {
    quote!((#dst).copy_from_slice(#src);)
}

/// The forward-pass code of control-flow node `i`.
fn control_lower(outer: &Planned, i: usize, kernels: &Kernels) -> TokenStream {
    let node = &outer.graph.nodes[i];
    let control = node.control.as_ref().expect("a control-flow node");
    let bodies = &outer.steps[i].bodies;
    let out = |id: TensorId| operand(outer, id, true).expr;
    let input = |k: usize| {
        let id = node.inputs[k].expect("control-flow inputs are given");
        operand(outer, id, false).expr
    };
    match control.kind {
        ControlKind::If => {
            let branch = |k: usize| {
                let body = &bodies[k];
                let steps = body_steps(body, kernels);
                let copies = control.bodies[k]
                    .outputs
                    .iter()
                    .zip(&node.outputs)
                    .map(|(&src, &dst)| copy(out(dst), operand(body, src, false).expr));
                quote!(#steps #(#copies)*)
            };
            let (then, other) = (branch(0), branch(1));
            let cond = input(0);
            quote! {
                if (#cond)[0] { #then } else { #other }
            }
        }
        ControlKind::Loop { exit: true, .. } => {
            let body = &control.bodies[0];
            let planned = &bodies[0];
            let formal = |k: usize| operand(planned, body.inputs[k], true).expr;
            let result = |k: usize| operand(planned, body.outputs[k], false).expr;
            let steps = body_steps(planned, kernels);
            let carried = body.inputs.len() - 2;
            let init = (0..carried).map(|k| copy(formal(2 + k), input(2 + k)));
            let back = (0..carried).map(|k| copy(formal(2 + k), result(1 + k)));
            let last = (0..carried).map(|k| copy(out(node.outputs[k]), formal(2 + k)));
            // ONNX's reading: trips below M (no M, no bound) while the condition holds;
            // the condition from the node's input first (none: true), then the body's.
            let bound = match node.inputs.first().copied().flatten() {
                Some(m) => {
                    let m = operand(outer, m, false).expr;
                    quote!((#m)[0])
                }
                None => quote!(i64::MAX),
            };
            let go = match node.inputs.get(1).copied().flatten() {
                Some(c) => {
                    let c = operand(outer, c, false).expr;
                    quote!((#c)[0])
                }
                None => quote!(true),
            };
            let (iter, cond) = (formal(0), formal(1));
            let cond_out = result(0);
            // In a block of its own: a loop nested in an enclosing body's steps must not
            // shadow that body's counter and condition.
            quote! {
                {
                    #(#init)*
                    let __bound: i64 = #bound;
                    let mut __go: bool = #go;
                    let mut __it: i64 = 0;
                    while __go && __it < __bound {
                        (#iter)[0] = __it;
                        (#cond)[0] = true;
                        #steps
                        #(#back)*
                        __go = (#cond_out)[0];
                        __it += 1;
                    }
                    #(#last)*
                }
            }
        }
        ControlKind::Loop { trips, .. } | ControlKind::Scan { trips, .. } => {
            let body = &control.bodies[0];
            let planned = &bodies[0];
            let g = &planned.graph;
            let formal = |k: usize| operand(planned, body.inputs[k], true).expr;
            let result = |k: usize| operand(planned, body.outputs[k], false).expr;
            let steps = body_steps(planned, kernels);
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
