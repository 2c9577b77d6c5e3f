//! `model Name = import("file.onnx", dims(...))`: an ONNX file read at compile time
//! into the same checked graph a written model makes. The file is decoded (`proto`),
//! its nodes sorted, each rewritten to the target opset's form (`convert`), evaluated
//! when its inputs are known (`fold`), and otherwise built through the checker's own
//! `build`, so an imported node meets every rule a written one does. Every problem of
//! the file is reported in one compile, at the path.

use std::collections::HashMap;

use proc_macro2::Span;
use tinyonnx_layout::narrow::Narrow;
use tinyonnx_proto::{self as pb, Message};

use crate::check::{Checked, Checker};
use crate::data::Data;
use crate::ir::{TensorId, TensorKind};
use crate::ops::{self, AttrDefault, AttrValue};
use crate::syntax::ImportDef;
use crate::types::Dim;

mod convert;
mod extra;
mod fold;
mod graph;
mod inputs;
mod loops;
mod microsoft;
pub mod proto;
mod rewrite;

pub use convert::{MAX_FILE_OPSET, MIN_FILE_OPSET};
use proto::Const;

/// The IR versions read: 3 (opset 7's) to 14 (what onnx 1.23 stamps on every model it
/// makes, whatever its opset; the messages tinyonnx reads are the same).
const IR_VERSIONS: std::ops::RangeInclusive<i64> = 3..=14;

/// Operators the importer only evaluates at compile time (their output's shape depends on
/// their inputs' values, which a static plan needs known), so every input must be known:
/// the name and what it computes. Listed in SUPPORTED_OPS.md.
pub const EVALUATED: &[(&str, &str)] = &[
    (
        "ConstantOfShape",
        "a tensor of shape `input` filled with `value` (one element of any dtype; 0.0 f32 without it)",
    ),
    (
        "Range",
        "start, start + delta, ... up to limit (exclusive), in the inputs' type",
    ),
];

/// Operators the importer rewrites into registered ones, with what they become.
pub const REWRITTEN: &[(&str, &str)] = &[
    ("Sum", "a chain of Add (one to many inputs, broadcast)"),
    ("Mean", "a chain of Add, then Div by the count"),
    (
        "Upsample",
        "Resize with asymmetric coordinates (nearest: the lower neighbour), as Resize before opset 11",
    ),
];

/// How many nodes a file may have.
const MAX_NODES: usize = 1 << 20;

/// What a name of the file's graph stands for.
#[derive(Clone)]
enum Val {
    /// Known at compile time (an initializer, a Constant, a folded node).
    Const(Const),
    /// A tensor of the checked graph.
    Tensor(TensorId),
    /// Made by a node that failed (and was reported): its readers fail silently.
    Poisoned,
    /// An output the file's node names but tinyonnx's operator does not make.
    Absent,
}

struct Importer<'a> {
    cx: Checker<'static>,
    span: Span,
    def: &'a ImportDef,
    /// The default-domain opset the file declares.
    file_opset: i64,
    vals: HashMap<String, Val>,
    /// Constants already added to the graph as weights, by name.
    weights: HashMap<String, TensorId>,
    /// How many constants folding made, for the report.
    folded: usize,
    /// How many constant-condition Ifs enclose the nodes being imported.
    depth: usize,
    /// The branch being inlined, for messages ("" outside any).
    branch: String,
    /// The directory of the file, where its external data files are.
    dir: std::path::PathBuf,
    /// Values the file types as a narrow format (f16, float 8, INT4, ...), which the
    /// graph carries in a wider type: a `CastLike` to one must round to the format.
    narrow: HashMap<String, Narrow>,
}

/// How deep constant-condition Ifs may nest.
const MAX_IF_DEPTH: usize = 32;

/// Reads, converts, folds and checks the file of `def`.
pub fn import(def: &ImportDef) -> Result<Checked, Vec<syn::Error>> {
    let span = def.path.span();
    let mut cx = Checker::new(&def.name.to_string(), &def.doc);
    if def.optimize_size {
        cx.graph.optimize = crate::ir::Optimize::Size;
    }
    let fail = |msg: String| vec![syn::Error::new(span, msg)];
    let (shown, bytes) = cx
        .files
        .read_whole(&def.path.value())
        .map_err(|e| fail(e.replace("weight file", "ONNX file")))?;
    let model = pb::ModelProto::decode(bytes)
        .map_err(|e| fail(format!("{shown} is not a valid ONNX model: {e}")))?;
    let ir = model.ir_version.unwrap_or(0);
    if !IR_VERSIONS.contains(&ir) {
        return Err(fail(format!(
            "{shown} has IR version {ir}; tinyonnx imports IR versions {} to {}",
            IR_VERSIONS.start(),
            IR_VERSIONS.end()
        )));
    }
    let file_opset = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("" | "ai.onnx")))
        .and_then(|o| o.version)
        .unwrap_or(0);
    let file_opset = match (file_opset, model.graph.as_ref()) {
        (1..MIN_FILE_OPSET, Some(g)) => {
            let mut ops = Vec::new();
            convert::op_types(g, &mut ops, MAX_IF_DEPTH);
            if ops
                .iter()
                .all(|o| convert::SAME_SINCE_1.contains(&o.as_str()))
            {
                MIN_FILE_OPSET
            } else {
                file_opset
            }
        }
        _ => file_opset,
    };
    if !(MIN_FILE_OPSET..=MAX_FILE_OPSET).contains(&file_opset) {
        return Err(fail(format!(
            "{shown} uses opset {file_opset} of the default domain; tinyonnx imports opsets \
             {MIN_FILE_OPSET} to {MAX_FILE_OPSET}, and older ones where every operator is one \
             that did not change before {MIN_FILE_OPSET} (convert it with onnx.version_converter)"
        )));
    }
    let Some(graph) = model.graph.as_ref() else {
        return Err(fail(format!("{shown} has no graph")));
    };
    if graph.node.len() > MAX_NODES {
        return Err(fail(format!(
            "{shown} has {} nodes, more than the {MAX_NODES} tinyonnx imports",
            graph.node.len()
        )));
    }
    cx.graph.opset = file_opset.clamp(ops::MIN_OPSET, ops::MAX_OPSET);
    if let Some(v) = model.model_version {
        cx.graph.model_version = Some(v);
    }
    let mut im = Importer {
        cx,
        span,
        def,
        file_opset,
        vals: HashMap::new(),
        weights: HashMap::new(),
        folded: 0,
        depth: 0,
        branch: String::new(),
        dir: crate::weights::Files::resolve(&def.path.value())
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default(),
        narrow: HashMap::new(),
    };
    im.run(graph, &model.functions);
    im.cx.finish()
}

impl Importer<'_> {
    fn error(&mut self, msg: impl std::fmt::Display) {
        self.cx.error(self.span, msg);
    }

    fn run(&mut self, graph: &pb::GraphProto, functions: &[pb::FunctionProto]) {
        // Initializers first: a graph input with an initializer of the same name is a
        // constant with a default (IR 3), and the default is what runs.
        self.initializers(&graph.initializer, "");
        self.inputs(graph);
        let nodes = self.inline(graph, functions);
        self.narrow = narrow_values(graph, &nodes);
        let outputs: Vec<&str> = graph
            .output
            .iter()
            .filter_map(|o| o.name.as_deref())
            .collect();
        self.run_nodes(&nodes, &outputs);
        self.cx.set_context(None);
        self.outputs(graph);
        self.prune();
    }

    /// A graph's initializers as constants (`of` names a subgraph in messages); one that
    /// cannot be read is reported and poisoned.
    pub(super) fn initializers(&mut self, inits: &[pb::TensorProto], of: &str) {
        for t in inits {
            let name = t.name.clone().unwrap_or_default();
            match self.initializer(t) {
                Ok(c) => {
                    self.vals.insert(name, Val::Const(c));
                }
                Err(e) => {
                    self.error(format!("initializer `{name}`{of} {e}"));
                    self.vals.insert(name, Val::Poisoned);
                }
            }
        }
    }

    /// The values of an initializer, from the file or from its external data file
    /// (`location` relative to the model's directory, `offset`, `length`).
    fn initializer(&mut self, t: &pb::TensorProto) -> Result<Const, String> {
        if t.data_location != Some(1) && t.external_data.is_empty() {
            return proto::tensor(t);
        }
        let entry = |k: &str| {
            t.external_data
                .iter()
                .find(|e| e.key.as_deref() == Some(k))
                .and_then(|e| e.value.clone())
        };
        let location = entry("location").ok_or("is external data without a `location`")?;
        let rel = std::path::Path::new(&location);
        // Only files beside the model or below its directory, as ONNX Runtime allows.
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(format!(
                "is external data at `{location}`: the location must be a relative path below the model's directory"
            ));
        }
        let number = |k: &str| -> Result<Option<usize>, String> {
            entry(k)
                .map(|v| {
                    v.parse::<usize>()
                        .map_err(|_| format!("has external data {k} `{v}`"))
                })
                .transpose()
        };
        let offset = number("offset")?.unwrap_or(0);
        let path = self.dir.join(rel).display().to_string();
        let (_, bytes) = self.cx.files.read_whole(&path).map_err(|e| {
            format!(
                "is external data: {}",
                e.replace("weight file", "data file")
            )
        })?;
        let length = number("length")?.unwrap_or(bytes.len().saturating_sub(offset));
        let raw = offset
            .checked_add(length)
            .and_then(|end| bytes.get(offset..end))
            .ok_or_else(|| {
                format!(
                    "is external data at bytes {offset}..{} of {location}, which has {} bytes",
                    offset.saturating_add(length),
                    bytes.len()
                )
            })?;
        let mut inline = t.clone();
        inline.external_data.clear();
        inline.data_location = None;
        inline.raw_data = Some(raw.to_vec());
        proto::tensor(&inline)
    }

    /// Sorts `nodes` and converts, folds or builds those that `outputs` need.
    fn run_nodes(&mut self, nodes: &[pb::NodeProto], outputs: &[&str]) {
        for i in self.schedule(nodes, outputs) {
            self.node(&nodes[i], i);
            // A node that failed (reported, or reading a failed name) poisons what it
            // makes, so that its readers are not reported again.
            for o in &nodes[i].output {
                if !o.is_empty() && !self.vals.contains_key(o) {
                    self.vals.insert(o.clone(), Val::Poisoned);
                }
            }
        }
    }

    /// Converts, folds or builds one node.
    fn node(&mut self, node: &pb::NodeProto, index: usize) {
        let op = node.op_type.clone().unwrap_or_default();
        let name = match node.name.as_deref() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("{op}_{index}"),
        };
        let inside = if self.branch.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.branch)
        };
        self.cx
            .set_context(Some(format!("node `{name}` ({op}){inside}")));
        let domain = node.domain.as_deref().unwrap_or("");
        if domain == "ai.onnx.ml" && matches!(op.as_str(), "Scaler" | "ArrayFeatureExtractor") {
            self.ml(node, &name);
            return;
        }
        if domain == "com.microsoft" && Self::microsoft_op(&op) {
            self.microsoft(node, &name);
            return;
        }
        if !matches!(domain, "" | "ai.onnx") {
            self.error(format!(
                "is in domain `{domain}`, which tinyonnx does not run (only the default domain)"
            ));
            return;
        }
        if op == "If" {
            self.constant_if(node, &name);
            return;
        }
        if op == "Scan" {
            self.scan(node, &name);
            return;
        }
        if op == "Loop" {
            self.onnx_loop(node, &name);
            return;
        }
        // CastLike to a value the file types as a narrow format: Cast to that format.
        let cast_like;
        let node = match node.input.get(1).and_then(|l| self.narrow.get(l)) {
            Some(&n) if op == "CastLike" => {
                let mut cast = node.clone();
                cast.op_type = Some("Cast".into());
                cast.input.truncate(1);
                cast.attribute
                    .push(proto::int_attr("to", i64::from(n.onnx_code())));
                cast_like = cast;
                &cast_like
            }
            _ => node,
        };
        let canon = match convert::canonical(node, self.file_opset) {
            Ok(c) => c,
            Err(e) => {
                self.error(e);
                return;
            }
        };
        for (n, c) in canon.consts {
            self.vals.insert(n, Val::Const(c));
        }
        let node = &canon.node;
        // Conversion may rename the operator (Upsample becomes Resize).
        let op = node.op_type.clone().unwrap_or_default();
        if op == "Constant" {
            self.constant(node);
            return;
        }
        // Shape and Size of a tensor whose shape the plan fixes are constants.
        if (op == "Shape" || op == "Size")
            && let Some(Some(dims)) = node.input.first().map(|i| self.dims_of(i))
        {
            let c = if op == "Size" {
                Const {
                    dims: Vec::new(),
                    data: Data::I64(vec![dims.iter().product::<usize>() as i64]),
                }
            } else {
                let r = dims.len() as i64;
                let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
                let start = clampi(proto::int(node, "start").unwrap_or(0));
                let end = clampi(proto::int(node, "end").unwrap_or(r));
                let d: Vec<i64> = dims[start..end.max(start)]
                    .iter()
                    .map(|&d| d as i64)
                    .collect();
                Const {
                    dims: vec![d.len()],
                    data: Data::I64(d),
                }
            };
            self.folded += 1;
            self.define(node, 0, Val::Const(c));
            return;
        }
        let known: Option<Vec<Option<&Const>>> = node
            .input
            .iter()
            .map(|i| match i.as_str() {
                "" => Some(None),
                i => match self.vals.get(i) {
                    Some(Val::Const(c)) => Some(Some(c)),
                    _ => None,
                },
            })
            .collect();
        if let Some(inputs) = known
            && fold::folds(&op)
        {
            match fold::fold(&op, node, &inputs) {
                Ok(outs) => {
                    self.folded += 1;
                    for (k, c) in outs.into_iter().enumerate() {
                        self.define(node, k, Val::Const(c));
                    }
                }
                Err(e) => self.error(e),
            }
            return;
        }
        if EVALUATED.iter().any(|(o, _)| *o == op) {
            let unknown: Vec<&str> = node
                .input
                .iter()
                .filter(|i| !i.is_empty())
                .filter(|i| !matches!(self.vals.get(i.as_str()), Some(Val::Const(_))))
                .map(String::as_str)
                .collect();
            self.error(format!(
                "{op} is evaluated at compile time, and its input{} {} {} known only when the model runs; fix the dims it is computed from with dims(...) or shapes(...)",
                if unknown.len() == 1 { "" } else { "s" },
                unknown.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", "),
                if unknown.len() == 1 { "is" } else { "are" },
            ));
            return;
        }
        if matches!(op.as_str(), "Softmax" | "LogSoftmax" | "Hardmax") && self.file_opset < 13 {
            self.softmax_before_13(node, &name);
            return;
        }
        let full_lens;
        let node = match self.full_sequence_lens(node) {
            Some(n) if matches!(op.as_str(), "LSTM" | "GRU" | "RNN") => {
                full_lens = n;
                &full_lens
            }
            _ => node,
        };
        if matches!(op.as_str(), "LSTM" | "GRU" | "RNN") && proto::int(node, "layout") == Some(1) {
            self.recurrent_batch_first(node, &name);
            return;
        }
        if op == "Dropout"
            && (node.output.get(1).is_some_and(|m| !m.is_empty())
                || node.input.get(2).is_some_and(|t| !t.is_empty()))
        {
            self.dropout_inference(node, &name);
            return;
        }
        if op == "LayerNormalization" && node.output.iter().skip(1).any(|o| !o.is_empty()) {
            self.layer_norm_stats(node, &name);
            return;
        }
        if matches!(op.as_str(), "Sum" | "Mean") {
            self.sum(node, &name);
            return;
        }
        if (op == "BitShift" && self.bit_shift_wide(node, &name))
            || (op == "Mod" && self.file_opset >= 28 && self.float_mod(node, &name))
            || self.widened(node, &name)
            || (op == "SpaceToDepth" && self.space_to_depth_mode(node, &name))
            || (op == "Attention" && self.attention_late(node, &name))
            || (op == "TopK" && self.top_k_u64(node, &name))
        {
            return;
        }
        let Some(schema) = ops::lookup(&op) else {
            let known: Vec<&str> = ops::REGISTRY.iter().map(|o| o.op_type).collect();
            let hint = crate::suggest::did_you_mean(&op, &known)
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            self.error(format!(
                "tinyonnx does not support {op} (opset {}){hint}; SUPPORTED_OPS.md lists what it runs",
                self.file_opset
            ));
            return;
        };
        if matches!(op.as_str(), "QuantizeLinear" | "DequantizeLinear")
            && self.blocked_quant(node, &name, op == "DequantizeLinear")
        {
            return;
        }
        if op == "QuantizeLinear" {
            let zp = node.input.get(2).and_then(|z| self.narrow.get(z)).copied();
            let to = proto::int(node, "output_dtype").and_then(Narrow::from_onnx);
            match zp.or(to) {
                Some(n) if n.is_int() => {
                    self.quantize_narrow_int(node, &name, n);
                    return;
                }
                Some(n) if n.bits() < 16 && self.quantize_float(node, &name, n, false) => return,
                _ => {}
            }
        }
        if op == "DequantizeLinear"
            && let Some(&n) = node.input.first().and_then(|x| self.narrow.get(x))
            && !n.is_int()
            && n.bits() < 16
            && self.quantize_float(node, &name, n, true)
        {
            return;
        }
        if op == "Pow" {
            if let Some(node) = self.pow_mixed(node, &name) {
                self.build(schema, &node, name);
            }
            return;
        }
        // Equal parts: no sizes, and no num_outputs (which opset 18 added).
        if op == "Split"
            && node.input.get(1).is_none_or(String::is_empty)
            && proto::find(node, "num_outputs").is_none()
        {
            if let Some(node) = self.split_equal_parts(node) {
                self.build(schema, &node, name);
            }
            return;
        }
        self.build(schema, node, name);
    }

    /// Builds a node of a registered operator through the checker.
    fn build(&mut self, schema: &'static ops::OpSchema, node: &pb::NodeProto, name: String) {
        let mut explicit: Vec<(usize, &'static str, AttrValue)> = Vec::new();
        let mut ok = true;
        for a in &node.attribute {
            let an = a.name.clone().unwrap_or_default();
            let Some((pos, spec)) = schema.attrs.iter().enumerate().find(|(_, s)| s.name == an)
            else {
                ok = false;
                let known: Vec<&str> = schema.attrs.iter().map(|s| s.name).collect();
                self.error(format!(
                    "has attribute `{an}`, which tinyonnx's {} does not take (it takes {})",
                    schema.op_type,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
                continue;
            };
            if spec.since > self.cx.graph.opset || spec.until < self.cx.graph.opset {
                ok = false;
                self.error(format!(
                    "has attribute `{an}`, which {} has only in opsets {} to {}",
                    schema.op_type, spec.since, spec.until
                ));
                continue;
            }
            match proto::attr_value(a, spec.kind) {
                Ok(v) => explicit.push((pos, spec.name, v)),
                Err(e) => {
                    ok = false;
                    self.error(format!("attribute `{an}` {e}"));
                }
            }
        }
        for s in schema.attrs {
            if matches!(s.default, AttrDefault::Required)
                && !explicit.iter().any(|(_, n, _)| *n == s.name)
            {
                ok = false;
                self.error(format!(
                    "lacks the attribute `{}` {} needs",
                    s.name, schema.op_type
                ));
            }
        }
        // Arity: at most the operator's inputs (unless it repeats the last), and each
        // required one given.
        if !schema.variadic && node.input.len() > schema.inputs.len() {
            ok = false;
            self.error(format!(
                "has {} inputs; tinyonnx's {} takes at most {} ({})",
                node.input.len(),
                schema.op_type,
                schema.inputs.len(),
                schema.input_names()
            ));
        }
        for (k, spec) in schema.inputs.iter().enumerate() {
            if !spec.optional && node.input.get(k).is_none_or(String::is_empty) {
                ok = false;
                self.error(format!(
                    "lacks its required input {} (input {k})",
                    spec.name
                ));
            }
        }
        explicit.sort_by_key(|(p, _, _)| *p);
        let explicit = explicit.into_iter().map(|(_, n, v)| (n, v)).collect();
        let mut inputs = Vec::with_capacity(node.input.len());
        for (k, i) in node.input.iter().enumerate() {
            if i.is_empty() {
                inputs.push(None);
                continue;
            }
            // ONNX lets some compile-time integer inputs (CumSum's axis, OneHot's depth)
            // be int32, and OneHot's depth any number (cast to int64 before use);
            // tinyonnx takes them as int64, which ONNX allows there too.
            let widened = format!("{i}::i64");
            let i = match self.vals.get(i) {
                Some(Val::Const(c))
                    if schema
                        .input_spec(k)
                        .is_some_and(|s| s.ty == ops::InTy::I64Const)
                        && (c.data.dtype() == crate::types::DType::I32
                            || (schema.op_type == "OneHot" && !matches!(c.data, Data::I64(_)))) =>
                {
                    let c = Const {
                        dims: c.dims.clone(),
                        data: Data::I64(c.data.to_f64().into_iter().map(|v| v as i64).collect()),
                    };
                    self.vals.insert(widened.clone(), Val::Const(c));
                    &widened
                }
                _ => i,
            };
            match self.tensor(i, &format!("{name}.{k}")) {
                Some(t) => inputs.push(Some(t)),
                None => ok = false,
            }
        }
        if !ok {
            return;
        }
        let span = self.span;
        let attrs = ops::attrs_with_defaults(schema, explicit);
        let Some(outs) = self.cx.build(schema, name, inputs, attrs, &|_| span) else {
            return;
        };
        for (k, o) in node.output.iter().enumerate() {
            if o.is_empty() {
                continue;
            }
            match outs.get(k) {
                Some(&id) => {
                    self.cx.graph.tensors[id].name = o.clone();
                    self.vals.insert(o.clone(), Val::Tensor(id));
                }
                // Reported where it is read, if it is.
                None => {
                    self.vals.insert(o.clone(), Val::Absent);
                }
            }
        }
    }

    /// The dims of a name, when its shape is fixed.
    fn dims_of(&self, name: &str) -> Option<Vec<usize>> {
        match self.vals.get(name)? {
            Val::Const(c) => Some(c.dims.clone()),
            Val::Tensor(id) => self.cx.graph.tensors[*id]
                .ty
                .shape
                .0
                .iter()
                .map(Dim::fixed)
                .collect(),
            Val::Poisoned | Val::Absent => None,
        }
    }

    /// Output `k` of `node` stands for `v`.
    fn define(&mut self, node: &pb::NodeProto, k: usize, v: Val) {
        if let Some(o) = node.output.get(k).filter(|o| !o.is_empty()) {
            self.vals.insert(o.clone(), v);
        }
    }

    /// The graph tensor for a name: a constant becomes a weight (once); `fallback`
    /// names a constant that has no name of its own.
    fn tensor(&mut self, name: &str, fallback: &str) -> Option<TensorId> {
        match self.vals.get(name) {
            Some(Val::Tensor(id)) => Some(*id),
            Some(Val::Const(c)) => {
                if let Some(&id) = self.weights.get(name) {
                    return Some(id);
                }
                let c = c.clone();
                let wname = if name.is_empty() { fallback } else { name };
                let id = self.cx.add_weight(wname.to_string(), &c.dims, c.data);
                self.weights.insert(name.to_string(), id);
                Some(id)
            }
            // Its producer failed and was reported.
            Some(Val::Poisoned) | None => None,
            Some(Val::Absent) => {
                self.error(format!(
                    "reads `{name}`, an output tinyonnx's operator does not make"
                ));
                None
            }
        }
    }

    /// The graph outputs, named as in the file (or renamed).
    fn outputs(&mut self, graph: &pb::GraphProto) {
        for vi in &graph.output {
            let name = vi.name.clone().unwrap_or_default();
            let shown = self.renamed(&name);
            let id = match self.vals.get(&name) {
                Some(Val::Tensor(id)) if self.cx.graph.tensors[*id].kind == TensorKind::Value => {
                    *id
                }
                Some(_) => {
                    // An input, a weight or a folded constant: a copy makes it an output.
                    let Some(t) = self.tensor(&name, &name) else {
                        continue;
                    };
                    // The copy takes the output's name; a weight keeps its value under
                    // another, as a file names each value once.
                    let w = &mut self.cx.graph.tensors[t];
                    if w.kind == TensorKind::Weight && w.name == shown {
                        w.name = format!("{shown}::value");
                    }
                    let identity = ops::lookup("Identity").expect("Identity is registered");
                    let span = self.span;
                    let attrs = ops::attrs_with_defaults(identity, Vec::new());
                    match self.cx.build(
                        identity,
                        format!("{shown}::copy"),
                        vec![Some(t)],
                        attrs,
                        &|_| span,
                    ) {
                        Some(o) => o[0],
                        None => continue,
                    }
                }
                None => {
                    if self.cx.error_count() == 0 {
                        self.error(format!("output `{name}` is made by no node"));
                    }
                    continue;
                }
            };
            if self.cx.graph.outputs.contains(&id) {
                self.error(format!("`{name}` is listed twice as an output"));
                continue;
            }
            self.cx.graph.tensors[id].name = shown;
            self.cx.graph.outputs.push(id);
        }
        if self.cx.graph.outputs.is_empty() && self.cx.error_count() == 0 {
            self.error("the file's graph has no output");
        }
    }

    /// Removes the nodes no output needs (those only folding read) and the weights
    /// no remaining node reads.
    fn prune(&mut self) {
        let g = &mut self.cx.graph;
        let mut needed = vec![false; g.tensors.len()];
        for &o in &g.outputs {
            needed[o] = true;
        }
        let mut keep = vec![false; g.nodes.len()];
        for (i, n) in g.nodes.iter().enumerate().rev() {
            if n.outputs.iter().any(|&o| needed[o]) {
                keep[i] = true;
                for &t in n.inputs.iter().flatten() {
                    needed[t] = true;
                }
            }
        }
        let mut k = keep.iter();
        g.nodes.retain(|_| *k.next().expect("one flag per node"));
        g.weights.retain(|&w| needed[w]);
    }
}

#[cfg(test)]
mod tests;

/// The values a file types as a narrow format: graph inputs, initializers and value
/// infos of such a type, and the outputs of `Cast` nodes to one.
fn narrow_values(graph: &pb::GraphProto, nodes: &[pb::NodeProto]) -> HashMap<String, Narrow> {
    let elem = |vi: &pb::ValueInfoProto| match vi.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(pb::type_proto::Value::TensorType(tt)) => tt.elem_type,
        _ => None,
    };
    let typed = graph
        .input
        .iter()
        .chain(&graph.value_info)
        .filter_map(|vi| Some((vi.name.clone()?, elem(vi)?)))
        .chain(
            graph
                .initializer
                .iter()
                .filter_map(|t| Some((t.name.clone()?, t.data_type?))),
        );
    let cast = nodes
        .iter()
        .filter(|n| n.op_type.as_deref() == Some("Cast"))
        .filter_map(|n| Some((n.output.first()?.clone(), proto::int(n, "to")? as i32)));
    typed
        .chain(cast)
        .filter_map(|(name, code)| Some((name, Narrow::from_onnx(i64::from(code))?)))
        .collect()
}
