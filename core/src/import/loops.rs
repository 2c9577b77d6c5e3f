//! `Scan`, `Loop` and `If` in an imported file, into the same control-flow nodes the
//! language's `for x_t in xs`, `for i in 0..n` and `if` make: a Scan along axis 0 of its
//! scan inputs; a Loop with per-iteration outputs when its trip count is known at compile
//! time and its condition never ends it early, and one that only carries values
//! whatever ends it (a `while`, as torch.onnx writes one); an If whose condition only
//! the data decides (one whose condition the fixed dims decide is replaced by its
//! branch in `rewrite.rs`).

use std::collections::HashSet;

use tinyonnx_proto as pb;

use super::{Importer, MAX_IF_DEPTH, Val, proto};
use crate::data::Data;
use crate::ir::{ControlKind, TensorId};
use crate::ops::{AttrValue, Attrs};
use crate::types::{DType, Dim, Shape, TensorType};

impl Importer<'_> {
    pub(super) fn scan(&mut self, node: &pb::NodeProto, name: &str) {
        if self.file_opset < 9 {
            self.error("is Scan of opset 8 (with a batch axis and sequence_lens), which tinyonnx does not import; convert the file to opset 9 or later");
            return;
        }
        let Some(g) = self.body_of(node) else { return };
        let m = proto::int(node, "num_scan_inputs").unwrap_or(0);
        let total = node.input.len();
        let Some(m) = usize::try_from(m).ok().filter(|&m| m >= 1 && m <= total) else {
            self.error(format!(
                "has num_scan_inputs = {m} for {total} inputs: it scans 1 to {total} of them"
            ));
            return;
        };
        for attr in [
            "scan_input_axes",
            "scan_output_axes",
            "scan_output_directions",
        ] {
            if proto::find(node, attr).is_some_and(|a| a.ints.iter().any(|&v| v != 0)) {
                self.error(format!(
                    "has {attr} other than 0: tinyonnx scans along axis 0 and stacks outputs forward"
                ));
                return;
            }
        }
        let states = total - m;
        if g.input.len() != total || g.output.len() < states {
            self.error(format!(
                "has {total} inputs ({states} states) but its body takes {} and returns {}",
                g.input.len(),
                g.output.len()
            ));
            return;
        }
        let mut ids = Vec::with_capacity(total);
        for (k, i) in node.input.iter().enumerate() {
            match self.tensor(i, &format!("{name}.{k}")) {
                Some(t) => ids.push(t),
                None => return,
            }
        }
        let seqs = ids.split_off(states);
        let mut trips = None;
        let mut formals = Vec::with_capacity(total);
        for (k, &id) in ids.iter().chain(&seqs).enumerate() {
            let ty = self.cx.graph.tensors[id].ty.clone();
            let ty = if k < states {
                ty
            } else {
                let Some(Dim::Fixed(steps)) = ty.shape.0.first().cloned() else {
                    self.error(format!(
                        "scans `{}` ({ty}), which has no fixed first dim",
                        node.input[k]
                    ));
                    return;
                };
                if trips.is_some_and(|t| t != steps) {
                    self.error("scans inputs of different lengths along axis 0");
                    return;
                }
                trips = Some(steps);
                TensorType {
                    dtype: ty.dtype,
                    shape: Shape(ty.shape.0[1..].to_vec()),
                }
            };
            formals.push(ty);
        }
        let trips = trips.expect("at least one scan input");
        let mut explicit = vec![("num_scan_inputs", AttrValue::Int(m as i64))];
        if let Some(d) =
            proto::find(node, "scan_input_directions").filter(|a| a.ints.iter().any(|&v| v != 0))
        {
            explicit.push(("scan_input_directions", AttrValue::Ints(d.ints.clone())));
        }
        let mut inputs: Vec<Option<TensorId>> = ids.iter().map(|&id| Some(id)).collect();
        inputs.extend(seqs.iter().map(|&id| Some(id)));
        let kind = ControlKind::Scan {
            trips,
            scan_inputs: seqs.len(),
        };
        let attrs = Attrs {
            explicit,
            defaults: Vec::new(),
        };
        self.import_body(node, name, g, formals, 0, ids, inputs, attrs, kind);
    }

    pub(super) fn onnx_loop(&mut self, node: &pb::NodeProto, name: &str) {
        let Some(g) = self.body_of(node) else { return };
        let carried_n = node.input.len().saturating_sub(2);
        if g.input.len() != carried_n + 2 || g.output.len() < carried_n + 1 {
            self.error(format!(
                "carries {carried_n} values but its body takes {} inputs and returns {}",
                g.input.len(),
                g.output.len()
            ));
            return;
        }
        let given = |k: usize| node.input.get(k).filter(|i| !i.is_empty());
        // M: a constant trip count, one known only when the model runs, or none.
        let trips = match given(0).map(|m| self.vals.get(m)) {
            Some(Some(Val::Const(c))) if c.data.len() == 1 => Some(c.data.to_f64()[0]),
            _ => None,
        };
        let always = match given(1).map(|c| self.vals.get(c)) {
            None => true,
            Some(Some(Val::Const(c))) => c.data.to_f64().iter().all(|&v| v != 0.0),
            Some(_) => false,
        };
        // The body passes its condition through, or computes it (an early exit).
        let cond_in = g.input[1].name.as_deref().unwrap_or("");
        let cond_out = g.output[0].name.as_deref().unwrap_or("");
        let passthrough = cond_out == cond_in
            || g.node.iter().any(|n| {
                n.op_type.as_deref() == Some("Identity")
                    && n.output.first().map(String::as_str) == Some(cond_out)
                    && n.input.first().map(String::as_str) == Some(cond_in)
            });
        let counted = passthrough && always && trips.is_some();
        let stacks = g.output.len() > carried_n + 1;
        if !counted && stacks {
            let why = match (trips, passthrough && always) {
                (None, _) if given(0).is_some() => "a trip count known only when the model runs",
                (None, true) => "no trip count (a loop ended by its condition only)",
                _ => "a condition that can end it early",
            };
            let stacked = g.output.len() - carried_n - 1;
            self.error(format!(
                "has {why} and stacks {stacked} per-iteration output{}, whose length only the data decides; no static plan holds {} (tinyonnx runs such a Loop when it only carries values)",
                if stacked == 1 { "" } else { "s" },
                if stacked == 1 { "it" } else { "them" },
            ));
            return;
        }
        if given(0).is_none() && passthrough && always {
            self.error("has no trip count and a condition that never changes: it never ends");
            return;
        }
        let trips = match trips {
            Some(t) if counted && !(1.0..=crate::types::MAX_DIM as f64).contains(&t) => {
                self.error(format!(
                    "has trip count {t}; tinyonnx runs 1 to {} trips",
                    crate::types::MAX_DIM
                ));
                return;
            }
            Some(t) if counted => t as usize,
            _ => 0,
        };
        let mut carried = Vec::with_capacity(carried_n);
        for (k, i) in node.input.iter().enumerate().skip(2) {
            match self.tensor(i, &format!("{name}.{k}")) {
                Some(t) => carried.push(t),
                None => return,
            }
        }
        let scalar = |dtype| TensorType {
            dtype,
            shape: Shape(Vec::new()),
        };
        let mut formals = vec![scalar(DType::I64), scalar(DType::Bool)];
        formals.extend(
            carried
                .iter()
                .map(|&id| self.cx.graph.tensors[id].ty.clone()),
        );
        let mut inputs = if counted {
            let m = self
                .cx
                .add_weight(format!("{name}.M"), &[], Data::I64(vec![trips as i64]));
            vec![Some(m), None]
        } else {
            // Both read when the model runs (a constant as a weight); each a scalar of
            // its type.
            let mut read = |k: usize, dtype: DType| -> Option<Option<TensorId>> {
                let Some(i) = given(k) else {
                    return Some(None);
                };
                let t = self.tensor(i, &format!("{name}.{k}"))?;
                let ty = &self.cx.graph.tensors[t].ty;
                if ty.dtype != dtype || ty.shape.0.iter().any(|d| d.fixed() != Some(1)) {
                    self.error(format!(
                        "has input {k} of type {ty}; a Loop's {} is one {}",
                        if k == 0 { "trip count" } else { "condition" },
                        dtype.name()
                    ));
                    return None;
                }
                Some(Some(t))
            };
            let (Some(m), Some(c)) = (read(0, DType::I64), read(1, DType::Bool)) else {
                return;
            };
            vec![m, c]
        };
        inputs.extend(carried.iter().map(|&id| Some(id)));
        let kind = ControlKind::Loop {
            trips,
            exit: !counted,
        };
        self.import_body(
            node,
            name,
            g,
            formals,
            1,
            carried,
            inputs,
            Attrs::default(),
            kind,
        );
    }

    /// An If on a condition known only when the model runs: both branches imported as
    /// the bodies of an If node (they read the enclosing graph's values).
    pub(super) fn data_if(&mut self, node: &pb::NodeProto, name: &str, cond: TensorId) {
        let branch = |b: &str| proto::find(node, b).and_then(|a| a.g.as_ref());
        let (Some(then_g), Some(else_g)) = (branch("then_branch"), branch("else_branch")) else {
            self.error("needs a then_branch and an else_branch");
            return;
        };
        if self.depth >= MAX_IF_DEPTH {
            self.error(format!("nests subgraphs more than {MAX_IF_DEPTH} deep"));
            return;
        }
        for (b, g) in [("then_branch", then_g), ("else_branch", else_g)] {
            if g.output.len() != node.output.len() {
                self.error(format!(
                    "has {} outputs but its {b} returns {}",
                    node.output.len(),
                    g.output.len()
                ));
                return;
            }
            if let Some(c) = self.clash(g) {
                self.error(format!(
                    "its {b} redefines `{c}`, a name of the enclosing graph"
                ));
                return;
            }
        }
        let (_, outer) = self
            .cx
            .begin_imported_body(&format!("{name}.then."), Vec::new());
        let then = self.import_branch(name, "then_branch", then_g, &[]);
        let then_nodes = self.cx.switch_imported_branch();
        let other = self.import_branch(name, "else_branch", else_g, &[]);
        let (Some(then), Some(other)) = (then, other) else {
            self.cx.abandon_imported_body(outer);
            return;
        };
        let span = self.span;
        let Some(made) = self.cx.end_imported_if(
            span,
            name.to_string(),
            outer,
            cond,
            (then_nodes, then),
            other,
        ) else {
            return;
        };
        self.name_outputs(node, &made);
    }

    /// Runs a body's or branch's nodes (`attr` names it) with its inputs bound to
    /// `formals`; the values it returns, or `None` after an error.
    fn import_branch(
        &mut self,
        name: &str,
        attr: &str,
        g: &pb::GraphProto,
        formals: &[TensorId],
    ) -> Option<Vec<TensorId>> {
        // The body's names (its formals first, named as its inputs) end with it.
        let known: HashSet<String> = self.vals.keys().cloned().collect();
        for (i, &id) in g.input.iter().zip(formals) {
            self.vals
                .insert(i.name.clone().unwrap_or_default(), Val::Tensor(id));
        }
        self.initializers(&g.initializer, &format!(" of its {attr}"));
        let outs: Vec<&str> = g.output.iter().filter_map(|o| o.name.as_deref()).collect();
        let before = self.cx.error_count();
        // The nodes inside set their own context; the control node's comes back after.
        let context = self.cx.context();
        let saved = std::mem::replace(&mut self.branch, format!("{name} > {attr}"));
        self.depth += 1;
        self.run_nodes(&g.node, &outs);
        self.depth -= 1;
        let mut returned = Vec::with_capacity(outs.len());
        for (k, o) in outs.iter().enumerate() {
            if let Some(t) = self.tensor(o, &format!("{name}.{attr}.return_{k}")) {
                returned.push(t);
            }
        }
        self.branch = saved;
        self.cx.set_context(context);
        self.vals.retain(|k, _| known.contains(k));
        (self.cx.error_count() == before && returned.len() == g.output.len()).then_some(returned)
    }

    /// A name the subgraph defines (an input or a node's output) that the enclosing graph
    /// already has: subgraph names may not reuse them (ONNX's single assignment), and
    /// refusing them keeps every body tensor inside its body.
    fn clash<'g>(&self, g: &'g pb::GraphProto) -> Option<&'g str> {
        g.input
            .iter()
            .filter_map(|i| i.name.as_deref())
            .chain(
                g.node
                    .iter()
                    .flat_map(|n| n.output.iter().map(String::as_str)),
            )
            .find(|n| !n.is_empty() && self.vals.contains_key(*n))
    }

    /// The control node's outputs under the names the file gives them.
    fn name_outputs(&mut self, node: &pb::NodeProto, made: &[TensorId]) {
        for (k, o) in node.output.iter().enumerate() {
            if let (false, Some(&id)) = (o.is_empty(), made.get(k)) {
                self.cx.graph.tensors[id].name = o.clone();
                self.vals.insert(o.clone(), Val::Tensor(id));
            }
        }
    }

    fn body_of<'g>(&mut self, node: &'g pb::NodeProto) -> Option<&'g pb::GraphProto> {
        let g = proto::find(node, "body").and_then(|a| a.g.as_ref());
        if g.is_none() {
            self.error("has no body");
        }
        if self.depth >= MAX_IF_DEPTH {
            self.error(format!("nests subgraphs more than {MAX_IF_DEPTH} deep"));
            return None;
        }
        g
    }

    /// Imports the body `g` with formal inputs of types `formals` into the control node.
    #[allow(clippy::too_many_arguments)]
    fn import_body(
        &mut self,
        node: &pb::NodeProto,
        name: &str,
        g: &pb::GraphProto,
        formals: Vec<TensorType>,
        lead: usize,
        carried: Vec<TensorId>,
        inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        kind: ControlKind,
    ) {
        if let Some(c) = self.clash(g) {
            self.error(format!(
                "its body redefines `{c}`, a name of the enclosing graph"
            ));
            return;
        }
        let named: Vec<(String, TensorType)> = g
            .input
            .iter()
            .map(|i| i.name.clone().unwrap_or_default())
            .zip(formals)
            .collect();
        let (formal_ids, outer) = self.cx.begin_imported_body(&format!("{name}.body."), named);
        let returned = self.import_branch(name, "body", g, &formal_ids);
        let Some(returned) = returned else {
            self.cx.abandon_imported_body(outer);
            return;
        };
        let span = self.span;
        let Some(made) = self.cx.end_imported_body(
            span,
            name.to_string(),
            outer,
            formal_ids,
            returned,
            lead,
            carried,
            inputs,
            attrs,
            kind,
        ) else {
            return;
        };
        self.name_outputs(node, &made);
    }
}
