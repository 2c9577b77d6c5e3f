//! Control flow: `if` (ONNX `If`), `for i in 0..n` (`Loop` with a static trip count)
//! and `for x_t in xs` (`Scan` over axis 0). Each body is checked in a scope that sees
//! the enclosing names; its nodes go to the body, not to the graph. The node lists the
//! outer tensors its bodies read after its ONNX inputs (`ir::Control::explicit`).

use std::collections::HashSet;

use proc_macro2::Span;
use syn::Ident;

use super::{Checker, Scope};
use crate::ir::{Body, Control, ControlKind, Data, Node, TensorId, TensorKind};
use crate::ops::{self, AttrValue, Attrs, OpSchema};
use crate::syntax::{Flow, FlowBody, FlowKind, Pattern};
use crate::types::{DType, Dim, MAX_DIM, Shape, TensorType};

/// How deep `if`/`for` bodies may nest. ONNX Runtime loads 31 nested subgraphs and
/// refuses 32 (its protobuf reader stops at 100 nested messages, three a level).
pub(super) const MAX_BODY_DEPTH: usize = 31;

/// `1 tensor`, `2 tensors`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// A per-step output of a `Loop` or `Scan` of `trips` steps, stacked along a new first
/// axis.
fn stacked(ty: &TensorType, trips: usize) -> TensorType {
    let mut dims = vec![Dim::Fixed(trips)];
    dims.extend(ty.shape.0.iter().cloned());
    TensorType {
        dtype: ty.dtype,
        shape: Shape(dims),
    }
}

/// A formal input of a body: the name it is bound to, and its tensor.
struct Formal {
    name: Option<Ident>,
    id: TensorId,
}

/// A checked body before it is attached to its node.
struct Checked {
    body: Body,
    /// The returned tensors and the spans of their expressions.
    returned: Vec<(TensorId, Span)>,
    /// Where errors about the returned tensors go when there are none.
    close: Span,
}

impl<'m> Checker<'m> {
    pub(super) fn flow_item(&mut self, pattern: &'m Pattern, flow: &'m Flow) {
        let (names, span): (Vec<Option<&Ident>>, Span) = match pattern {
            Pattern::One(n) => (vec![Some(n)], n.span()),
            Pattern::Tuple(v, span) => (v.iter().map(Option::as_ref).collect(), *span),
        };
        let poison_all = |cx: &mut Self| {
            for n in names.iter().flatten() {
                cx.poison(n);
            }
        };
        let hint = names.first().copied().flatten().map(Ident::to_string);
        let Some(outs) = self.flow(flow, hint) else {
            poison_all(self);
            return;
        };
        if outs.len() != names.len() {
            let what = match flow.kind {
                FlowKind::If { .. } => "this `if`",
                FlowKind::Loop { .. } | FlowKind::Scan { .. } => "this `for`",
            };
            self.error(
                span,
                format!(
                    "{what} has {}, the pattern names {}",
                    count(outs.len(), "output"),
                    names.len()
                ),
            );
            poison_all(self);
            return;
        }
        self.bind_outputs(outs, names);
    }

    /// The formal inputs of the carried values: their initial tensors' types, named in
    /// the body.
    fn carried_formals(&mut self, prefix: &str, carried: &[(&Ident, TensorId)]) -> Vec<Formal> {
        carried
            .iter()
            .map(|&(name, init)| {
                let ty = self.graph.tensors[init].ty.clone();
                let id =
                    self.new_tensor(format!("{prefix}{name}"), ty, TensorKind::Value, "", None);
                Formal {
                    name: Some(name.clone()),
                    id,
                }
            })
            .collect()
    }

    /// Checks a control-flow statement and adds its node; returns the node's outputs.
    fn flow(&mut self, flow: &'m Flow, hint: Option<String>) -> Option<Vec<TensorId>> {
        if self.body_depth >= MAX_BODY_DEPTH {
            self.error(
                flow.kw,
                format!(
                    "control flow nests deeper than {MAX_BODY_DEPTH} bodies here: ONNX Runtime \
                     cannot load such a model; move the inner part out of the bodies"
                ),
            );
            return None;
        }
        if self.instance.is_some() {
            self.error(
                flow.kw,
                "control flow inside a `function` is not supported: make it a `block`",
            );
            return None;
        }
        let layer = match flow.kind {
            FlowKind::If { .. } => "if",
            FlowKind::Loop { .. } => "loop",
            FlowKind::Scan { .. } => "scan",
        };
        // The carried values' initial tensors, evaluated outside the body.
        let mut ok = true;
        let mut carried: Vec<(&Ident, TensorId)> = Vec::new();
        for (name, init) in &flow.carried {
            if carried.iter().any(|(n, _)| *n == name) {
                self.error(name.span(), format!("`{name}` is carried twice"));
                ok = false;
                continue;
            }
            match self.tensor_expr(init) {
                Some(id) => carried.push((name, id)),
                None => ok = false,
            }
        }
        match &flow.kind {
            FlowKind::If { cond } => {
                let cond_id = self.tensor_expr(cond);
                if !ok {
                    return None;
                }
                let cond_id = cond_id?;
                let ty = self.graph.tensors[cond_id].ty.clone();
                if ty.dtype != DType::Bool || ty.shape.0.iter().any(|d| d.fixed() != Some(1)) {
                    self.error(
                        cond.span(),
                        format!(
                            "the condition of `if` is a bool tensor of one element (bool[] or bool[1]); this one is {ty}"
                        ),
                    );
                    return None;
                }
                let full = self.instance_name(layer, None, hint, flow.kw)?;
                let then = self.body(
                    &flow.bodies[0],
                    &format!("{full}.then."),
                    "then_branch",
                    Vec::new(),
                );
                let other = self.body(
                    &flow.bodies[1],
                    &format!("{full}.else."),
                    "else_branch",
                    Vec::new(),
                );
                let (then, other) = (then?, other?);
                if then.returned.len() != other.returned.len() {
                    let (n, m) = (then.returned.len(), other.returned.len());
                    self.error(
                        other.returned.first().map_or(other.close, |r| r.1),
                        format!(
                            "the then branch returns {} and the else branch {m}: they must agree",
                            count(n, "tensor")
                        ),
                    );
                    return None;
                }
                let mut types = Vec::new();
                for (&(a, a_span), &(b, b_span)) in then.returned.iter().zip(&other.returned) {
                    let (ta, tb) = (
                        self.graph.tensors[a].ty.clone(),
                        self.graph.tensors[b].ty.clone(),
                    );
                    if ta != tb {
                        let mut e = syn::Error::new(
                            b_span,
                            format!(
                                "the else branch returns {tb} here, the then branch {ta}: both branches give the same types and shapes"
                            ),
                        );
                        e.combine(syn::Error::new(
                            a_span,
                            format!("note: the then branch's {ta}"),
                        ));
                        self.sink.push(e);
                        ok = false;
                    }
                    types.push(ta);
                }
                if !ok {
                    return None;
                }
                let names: Vec<String> = (0..types.len())
                    .map(|k| format!("{full}.output_{k}"))
                    .collect();
                Some(self.control_node(
                    &ops::control::IF,
                    full,
                    vec![Some(cond_id)],
                    Attrs::default(),
                    ControlKind::If,
                    vec![then.body, other.body],
                    names.into_iter().zip(types).collect(),
                ))
            }
            FlowKind::Loop { iter, start, end } => {
                let trips = match (start.base10_parse::<u64>(), end.base10_parse::<u64>()) {
                    (Ok(0), Ok(n)) if n >= 1 && n <= MAX_DIM as u64 => n as usize,
                    (Ok(0), _) => {
                        self.error(
                            end.span(),
                            format!("the trip count must be an integer in 1..={MAX_DIM}"),
                        );
                        return None;
                    }
                    _ => {
                        self.error(start.span(), "an ONNX Loop counts from 0: write `0..n`");
                        return None;
                    }
                };
                if !ok {
                    return None;
                }
                let full = self.instance_name(layer, None, hint, flow.kw)?;
                let prefix = format!("{full}.body.");
                let scalar = |dtype| TensorType {
                    dtype,
                    shape: Shape(Vec::new()),
                };
                let mut formals = vec![
                    Formal {
                        name: Some(iter.clone()),
                        id: self.new_tensor(
                            format!("{prefix}{iter}"),
                            scalar(DType::I64),
                            TensorKind::Value,
                            "",
                            None,
                        ),
                    },
                    Formal {
                        name: None,
                        id: self.new_tensor(
                            format!("{prefix}__cond_in"),
                            scalar(DType::Bool),
                            TensorKind::Value,
                            "",
                            None,
                        ),
                    },
                ];
                formals.extend(self.carried_formals(&prefix, &carried));
                let cond_in = formals[1].id;
                let mut body = self.body(&flow.bodies[0], &prefix, "body", formals)?;
                let outs = self.loop_outputs(&full, &carried, &body, trips)?;
                // The condition output: the condition input, unchanged (no early exit).
                let cond_out =
                    self.body_identity(&mut body.body, cond_in, format!("{prefix}__cond_out"))?;
                body.body.outputs.insert(0, cond_out);
                let m = self.add_weight(format!("{full}.M"), &[], Data::I64(vec![trips as i64]));
                let mut inputs = vec![Some(m), None];
                inputs.extend(carried.iter().map(|&(_, id)| Some(id)));
                Some(self.control_node(
                    &ops::control::LOOP,
                    full,
                    inputs,
                    Attrs::default(),
                    ControlKind::Loop { trips, exit: false },
                    vec![body.body],
                    outs,
                ))
            }
            FlowKind::Scan { slices, seqs } => {
                if slices.len() != seqs.len() {
                    self.error(
                        seqs.first().map_or(flow.kw, |(s, _)| s.span()),
                        format!(
                            "{} slice names for {} scanned tensors: name one slice per tensor",
                            slices.len(),
                            seqs.len()
                        ),
                    );
                    return None;
                }
                if seqs.is_empty() {
                    self.error(flow.kw, "a `for` over tensors scans at least one tensor");
                    return None;
                }
                let mut trips: Option<(usize, &Ident)> = None;
                let mut seq_ids = Vec::new();
                for (seq, _) in seqs {
                    let Some(id) = self.lookup(seq) else {
                        ok = false;
                        continue;
                    };
                    let ty = self.graph.tensors[id].ty.clone();
                    match ty.shape.0.first() {
                        Some(Dim::Fixed(n)) => match trips {
                            Some((t, first)) if t != *n => {
                                self.error(seq.span(), format!("`{seq}` has {n} steps along axis 0 but `{first}` has {t}: scanned tensors have one length"));
                                ok = false;
                            }
                            _ => trips = Some((*n, seq)),
                        },
                        _ => {
                            self.error(seq.span(), format!("`{seq}` is {ty}: a scanned tensor needs a fixed first dimension (the steps)"));
                            ok = false;
                        }
                    }
                    seq_ids.push(id);
                }
                if !ok {
                    return None;
                }
                let trips = trips.expect("at least one scanned tensor").0;
                let full = self.instance_name(layer, None, hint, flow.kw)?;
                let prefix = format!("{full}.body.");
                let mut formals = Vec::new();
                formals.extend(self.carried_formals(&prefix, &carried));
                for (slice, &seq) in slices.iter().zip(&seq_ids) {
                    let ty = &self.graph.tensors[seq].ty;
                    let ty = TensorType {
                        dtype: ty.dtype,
                        shape: Shape(ty.shape.0[1..].to_vec()),
                    };
                    let id = self.new_tensor(
                        format!("{prefix}{slice}"),
                        ty,
                        TensorKind::Value,
                        "",
                        None,
                    );
                    formals.push(Formal {
                        name: Some(slice.clone()),
                        id,
                    });
                }
                let body = self.body(&flow.bodies[0], &prefix, "body", formals)?;
                let outs = self.loop_outputs(&full, &carried, &body, trips)?;
                let mut inputs: Vec<Option<TensorId>> =
                    carried.iter().map(|&(_, id)| Some(id)).collect();
                inputs.extend(seq_ids.iter().map(|&id| Some(id)));
                let mut explicit = vec![("num_scan_inputs", AttrValue::Int(seq_ids.len() as i64))];
                if seqs.iter().any(|(_, rev)| *rev) {
                    let dirs = seqs.iter().map(|(_, rev)| i64::from(*rev)).collect();
                    explicit.push(("scan_input_directions", AttrValue::Ints(dirs)));
                }
                let attrs = Attrs {
                    explicit,
                    defaults: Vec::new(),
                };
                Some(self.control_node(
                    &ops::control::SCAN,
                    full,
                    inputs,
                    attrs,
                    ControlKind::Scan {
                        trips,
                        scan_inputs: seq_ids.len(),
                    },
                    vec![body.body],
                    outs,
                ))
            }
        }
    }

    /// The outputs of a `Loop` or `Scan`: the final carried values (the body returns
    /// them first, with their initial types), then the per-step outputs stacked along
    /// a new first axis of `trips`.
    fn loop_outputs(
        &mut self,
        full: &str,
        carried: &[(&Ident, TensorId)],
        body: &Checked,
        trips: usize,
    ) -> Option<Vec<(String, TensorType)>> {
        if body.returned.len() < carried.len() || body.returned.is_empty() {
            self.error(
                body.returned.first().map_or(body.close, |r| r.1),
                format!(
                    "the body returns {}; it returns the {} first ({}), then any per-step outputs",
                    count(body.returned.len(), "tensor"),
                    count(carried.len(), "carried value"),
                    carried
                        .iter()
                        .map(|(n, _)| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            return None;
        }
        let mut outs = Vec::new();
        let mut ok = true;
        for (&(name, init), &(ret, span)) in carried.iter().zip(&body.returned) {
            let (ti, tr) = (
                self.graph.tensors[init].ty.clone(),
                self.graph.tensors[ret].ty.clone(),
            );
            if ti != tr {
                self.error(
                    span,
                    format!("this is {tr}, but the carried `{name}` is {ti}: a carried value keeps its type and shape"),
                );
                ok = false;
            }
            outs.push((format!("{full}.{name}"), ti));
        }
        for (k, &(ret, span)) in body.returned[carried.len()..].iter().enumerate() {
            let stacked = stacked(&self.graph.tensors[ret].ty, trips);
            if self.device_numel(&stacked.shape).is_none() {
                self.error(span, format!("stacked over {trips} steps this would be {stacked}, more than {MAX_DIM} elements"));
                ok = false;
            }
            outs.push((format!("{full}.scan_{k}"), stacked));
        }
        ok.then_some(outs)
    }

    /// Checks one body: its formal inputs bound in a scope that sees the enclosing
    /// names, its items, and its `return`. Every output is a tensor the body computes,
    /// once (an Identity node copies a formal, an outer tensor or a repeated one).
    fn body(
        &mut self,
        def: &'m FlowBody,
        prefix: &str,
        attr: &'static str,
        formals: Vec<Formal>,
    ) -> Option<Checked> {
        let mut scope = Scope {
            prefix: prefix.to_string(),
            transparent: true,
            ..Scope::default()
        };
        for f in &formals {
            if let Some(name) = &f.name {
                if let Some((_, first)) = self.visible(&name.to_string()) {
                    let mut e = syn::Error::new(
                        name.span(),
                        format!("`{name}` is already defined: name the body's value otherwise"),
                    );
                    e.combine(syn::Error::new(
                        first,
                        format!("`{name}` is first defined here"),
                    ));
                    self.sink.push(e);
                    return None;
                }
                scope
                    .names
                    .insert(name.to_string(), (Some(f.id), name.span()));
            }
        }
        let outer_nodes = std::mem::take(&mut self.graph.nodes);
        self.scopes.push(scope);
        self.body_depth += 1;
        let errors_before = self.sink.len();
        for item in &def.items {
            self.item(item);
        }
        self.body_depth -= 1;
        let scope = self.scopes.pop().expect("pushed above");
        let mut nodes = std::mem::replace(&mut self.graph.nodes, outer_nodes);
        let returned = match scope.returned {
            Some((r, _))
                if r.iter().all(|(id, _)| id.is_some()) && self.sink.len() == errors_before =>
            {
                r.into_iter()
                    .map(|(id, s)| (id.expect("checked"), s))
                    .collect::<Vec<_>>()
            }
            Some(_) => return None,
            None => {
                self.error(
                    def.close,
                    "this body does not end with `return`: it returns its outputs, as in `return (h, y);`",
                );
                return None;
            }
        };
        if returned.is_empty() {
            self.error(def.close, "a body returns at least one tensor");
            return None;
        }
        let mut body = Body {
            attr,
            name: prefix.trim_end_matches('.').replace('.', "_"),
            inputs: formals.iter().map(|f| f.id).collect(),
            nodes: Vec::new(),
            outputs: Vec::new(),
        };
        std::mem::swap(&mut body.nodes, &mut nodes);
        let mut fresh = Vec::new();
        for (k, &(id, span)) in returned.iter().enumerate() {
            let produced = body.nodes.iter().any(|n| n.outputs.contains(&id));
            let id = if produced && !body.outputs.contains(&id) {
                id
            } else {
                self.body_identity(&mut body, id, format!("{prefix}return_{k}"))?
            };
            body.outputs.push(id);
            fresh.push((id, span));
        }
        Some(Checked {
            body,
            returned: fresh,
            close: def.close,
        })
    }

    /// For the importer: tensors for a body's formal inputs (named `prefix` + `name`),
    /// and the graph's nodes so far, set aside while the body's nodes are built.
    pub(crate) fn begin_imported_body(
        &mut self,
        prefix: &str,
        formals: Vec<(String, TensorType)>,
    ) -> (Vec<TensorId>, Vec<Node>) {
        let ids = formals
            .into_iter()
            .map(|(n, ty)| self.new_tensor(format!("{prefix}{n}"), ty, TensorKind::Value, "", None))
            .collect();
        self.body_depth += 1;
        (ids, std::mem::take(&mut self.graph.nodes))
    }

    /// For the importer: puts back the graph's nodes after a body that failed.
    pub(crate) fn abandon_imported_body(&mut self, outer: Vec<Node>) {
        self.body_depth -= 1;
        self.graph.nodes = outer;
    }

    /// For the importer: the `Loop` or `Scan` whose body nodes were built since
    /// [`Checker::begin_imported_body`]. The body returns `returned`: for a `Loop` its
    /// condition first (`lead` = 1), then the carried values (starting as `carried`),
    /// then the per-step outputs. `inputs` are the node's ONNX inputs. Its outputs, or
    /// `None` after an error.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn end_imported_body(
        &mut self,
        span: Span,
        name: String,
        outer: Vec<Node>,
        formals: Vec<TensorId>,
        returned: Vec<TensorId>,
        lead: usize,
        carried: Vec<TensorId>,
        inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        kind: ControlKind,
    ) -> Option<Vec<TensorId>> {
        self.body_depth -= 1;
        let nodes = std::mem::replace(&mut self.graph.nodes, outer);
        let prefix = format!("{name}.body.");
        let mut body = Body {
            attr: "body",
            name: format!("{name}_body").replace('.', "_"),
            inputs: formals,
            nodes,
            outputs: Vec::new(),
        };
        self.set_returned(&mut body, &returned, &prefix)?;
        let trips = match kind {
            ControlKind::Loop { trips, .. } | ControlKind::Scan { trips, .. } => trips,
            ControlKind::If => 0,
        };
        let mut outs = Vec::new();
        for (k, &ret) in body.outputs.iter().enumerate().skip(lead) {
            let ty = self.graph.tensors[ret].ty.clone();
            if let Some(&init) = carried.get(k - lead) {
                let ti = self.graph.tensors[init].ty.clone();
                if ti != ty {
                    self.error(
                        span,
                        format!("its body returns {ty} for the value it carries as {ti}: a carried value keeps its type and shape"),
                    );
                    return None;
                }
                outs.push((format!("{name}.state_{k}"), ti));
                continue;
            }
            let stacked = stacked(&ty, trips);
            if self.device_numel(&stacked.shape).is_none() {
                self.error(
                    span,
                    format!("its stacked output would be {stacked}, more than {MAX_DIM} elements"),
                );
                return None;
            }
            outs.push((format!("{name}.scan_{k}"), stacked));
        }
        let op = match kind {
            ControlKind::Loop { .. } => &ops::control::LOOP,
            _ => &ops::control::SCAN,
        };
        Some(self.control_node(op, name, inputs, attrs, kind, vec![body], outs))
    }

    /// For the importer: an `If` on a condition known only when the model runs, whose
    /// branches' nodes were built since [`Checker::begin_imported_body`] (the then
    /// branch's set aside with [`Checker::switch_imported_branch`]). Both branches must
    /// return the same types and shapes. Its outputs, or `None` after an error.
    pub(crate) fn end_imported_if(
        &mut self,
        span: Span,
        name: String,
        outer: Vec<Node>,
        cond: TensorId,
        then: (Vec<Node>, Vec<TensorId>),
        other: Vec<TensorId>,
    ) -> Option<Vec<TensorId>> {
        self.body_depth -= 1;
        let else_nodes = std::mem::replace(&mut self.graph.nodes, outer);
        let ty = self.graph.tensors[cond].ty.clone();
        if ty.dtype != DType::Bool || ty.shape.0.iter().any(|d| d.fixed() != Some(1)) {
            self.error(
                span,
                format!(
                    "has a condition of {ty}; an If's condition is one bool (bool[] or bool[1])"
                ),
            );
            return None;
        }
        if then.1.len() != other.len() {
            self.error(
                span,
                format!(
                    "has a then branch of {} and an else branch of {}: they must agree",
                    count(then.1.len(), "output"),
                    other.len()
                ),
            );
            return None;
        }
        let mut bodies = Vec::with_capacity(2);
        for (attr, nodes, returned) in [
            ("then_branch", then.0, then.1),
            ("else_branch", else_nodes, other),
        ] {
            let mut body = Body {
                attr,
                name: format!("{name}_{attr}").replace('.', "_"),
                inputs: Vec::new(),
                nodes,
                outputs: Vec::new(),
            };
            self.set_returned(&mut body, &returned, &format!("{name}.{attr}."))?;
            bodies.push(body);
        }
        let mut outs = Vec::new();
        for (k, (&a, &b)) in bodies[0].outputs.iter().zip(&bodies[1].outputs).enumerate() {
            let (ta, tb) = (
                self.graph.tensors[a].ty.clone(),
                self.graph.tensors[b].ty.clone(),
            );
            if ta != tb {
                self.error(
                    span,
                    format!(
                        "returns {ta} from its then branch and {tb} from its else branch as output {k}; tinyonnx's If gives one type and shape"
                    ),
                );
                return None;
            }
            outs.push((format!("{name}.output_{k}"), ta));
        }
        Some(self.control_node(
            &ops::control::IF,
            name,
            vec![Some(cond)],
            Attrs::default(),
            ControlKind::If,
            bodies,
            outs,
        ))
    }

    /// For the importer: sets the then branch's nodes aside and starts the else branch's.
    pub(crate) fn switch_imported_branch(&mut self) -> Vec<Node> {
        std::mem::take(&mut self.graph.nodes)
    }

    /// A body's outputs: each returned value a node of the body makes, once; an outer
    /// value, a formal or a repeat through an Identity named `{prefix}return_{k}`.
    fn set_returned(&mut self, body: &mut Body, returned: &[TensorId], prefix: &str) -> Option<()> {
        for (k, &id) in returned.iter().enumerate() {
            let produced = body.nodes.iter().any(|n| n.outputs.contains(&id));
            let id = if produced && !body.outputs.contains(&id) {
                id
            } else {
                self.body_identity(body, id, format!("{prefix}return_{k}"))?
            };
            body.outputs.push(id);
        }
        Some(())
    }

    /// Adds `Identity(src)` named `name` to `body`; returns its output.
    fn body_identity(&mut self, body: &mut Body, src: TensorId, name: String) -> Option<TensorId> {
        let outer_nodes = std::mem::replace(&mut self.graph.nodes, std::mem::take(&mut body.nodes));
        let op: &'static OpSchema = ops::lookup("Identity").expect("Identity is registered");
        let node_name = format!("{name}.Identity");
        let out = self.build(op, node_name, vec![Some(src)], Attrs::default(), &|_| {
            Span::call_site()
        });
        body.nodes = std::mem::replace(&mut self.graph.nodes, outer_nodes);
        let out = out?[0];
        self.anonymous.remove(&out);
        self.graph.tensors[out].name = name;
        Some(out)
    }

    /// Adds the control-flow node: its ONNX inputs, then the outer tensors its bodies
    /// read; outputs named and typed as given (anonymous until a pattern names them).
    #[allow(clippy::too_many_arguments)]
    fn control_node(
        &mut self,
        op: &'static OpSchema,
        name: String,
        mut inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        kind: ControlKind,
        bodies: Vec<Body>,
        outputs: Vec<(String, TensorType)>,
    ) -> Vec<TensorId> {
        let explicit = inputs.len();
        let mut seen: HashSet<TensorId> = HashSet::new();
        for body in &bodies {
            let local: HashSet<TensorId> = body
                .inputs
                .iter()
                .copied()
                .chain(body.nodes.iter().flat_map(|n| n.outputs.iter().copied()))
                .collect();
            for n in &body.nodes {
                for &t in n.inputs.iter().flatten() {
                    if !local.contains(&t) && seen.insert(t) {
                        inputs.push(Some(t));
                    }
                }
            }
        }
        let outs: Vec<TensorId> = outputs
            .into_iter()
            .map(|(n, ty)| {
                let id = self.new_tensor(n, ty, TensorKind::Value, "", None);
                self.anonymous.insert(id);
                id
            })
            .collect();
        self.graph.nodes.push(Node {
            name,
            doc: String::new(),
            instance: None,
            custom: None,
            op,
            inputs,
            outputs: outs.clone(),
            attrs,
            control: Some(Box::new(Control {
                kind,
                explicit,
                bodies,
            })),
        });
        outs
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::errors;
    use super::MAX_BODY_DEPTH;

    /// `depth` nested `if`s around a Relu.
    fn nested_ifs(depth: usize) -> proc_macro2::TokenStream {
        let mut body = String::from("return Relu(x);");
        for _ in 0..depth {
            body = format!("let y = if c {{ {body} }} else {{ return Relu(x); }}; return y;");
        }
        format!("model M {{ input x: f32[1, 4]; input c: bool[]; let o = {{ {body} }}; }}")
            .replace("let o = { ", "")
            .replacen("; return y; }; }", "; output o = Identity(y); }", 1)
            .parse()
            .expect("tokens")
    }

    #[test]
    fn bodies_nest_as_deep_as_onnx_runtime_loads_and_no_deeper() {
        assert_eq!(errors(nested_ifs(MAX_BODY_DEPTH)), Vec::<String>::new());
        let e = errors(nested_ifs(MAX_BODY_DEPTH + 1));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("control flow nests deeper than 31 bodies"),
            "{e:?}"
        );
    }
}
