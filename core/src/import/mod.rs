//! `model Name = import("file.onnx", dims(...))`: an ONNX file read at compile time
//! into the same checked graph a written model makes. The file is decoded (`proto`),
//! its nodes sorted, each rewritten to the target opset's form (`convert`), evaluated
//! when its inputs are known (`fold`), and otherwise built through the checker's own
//! `build`, so an imported node meets every rule a written one does. Every problem of
//! the file is reported in one compile, at the path.

use std::collections::{BTreeSet, HashMap, HashSet};

use proc_macro2::Span;
use tinyonnx_proto::{self as pb, Message};

use crate::check::{Checked, Checker};
use crate::ir::{TensorId, TensorKind};
use crate::ops::{self, AttrDefault, AttrValue};
use crate::syntax::ImportDef;
use crate::types::{Dim, Shape, TensorType};

mod convert;
mod fold;
mod proto;

pub use convert::{MAX_FILE_OPSET, MIN_FILE_OPSET};
use proto::Const;

/// The IR versions read: 3 (opset 7's) to 14 (what onnx 1.23 stamps on every model it
/// makes, whatever its opset; the messages tinyonnx reads are the same).
const IR_VERSIONS: std::ops::RangeInclusive<i64> = 3..=14;

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
}

/// How deep constant-condition Ifs may nest.
const MAX_IF_DEPTH: usize = 32;

/// Reads, converts, folds and checks the file of `def`.
pub fn import(def: &ImportDef) -> Result<Checked, Vec<syn::Error>> {
    let span = def.path.span();
    let mut cx = Checker::new(&def.name.to_string(), &def.doc);
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
    if !(MIN_FILE_OPSET..=MAX_FILE_OPSET).contains(&file_opset) {
        return Err(fail(format!(
            "{shown} uses opset {file_opset} of the default domain; tinyonnx imports opsets \
             {MIN_FILE_OPSET} to {MAX_FILE_OPSET} (convert it with onnx.version_converter)"
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
        for t in &graph.initializer {
            let name = t.name.clone().unwrap_or_default();
            match self.initializer(t) {
                Ok(c) => {
                    self.vals.insert(name, Val::Const(c));
                }
                Err(e) => {
                    self.error(format!("initializer `{name}` {e}"));
                    self.vals.insert(name, Val::Poisoned);
                }
            }
        }
        self.inputs(graph);
        let nodes = self.inline(graph, functions);
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
        let order = self.sort(nodes);
        let live = live_nodes(nodes, &order, outputs);
        for i in order {
            if live[i] {
                self.node(&nodes[i], i);
                // A node that failed (reported, or reading a failed name) poisons what
                // it makes, so that its readers are not reported again.
                for o in &nodes[i].output {
                    if !o.is_empty() && !self.vals.contains_key(o) {
                        self.vals.insert(o.clone(), Val::Poisoned);
                    }
                }
            }
        }
    }

    /// The graph inputs that are not initializers, with their dims fixed by `dims(...)`
    /// and `shapes(...)`; every dim left open is reported in one message.
    fn inputs(&mut self, graph: &pb::GraphProto) {
        let def = self.def;
        let mut used_dims = HashSet::new();
        let mut used_shapes = HashSet::new();
        let mut open: Vec<String> = Vec::new();
        let mut names = Vec::new();
        for vi in &graph.input {
            let name = vi.name.clone().unwrap_or_default();
            if self.vals.contains_key(&name) {
                continue;
            }
            names.push(name.clone());
            // Until it is made below, a failed input: its readers are not reported.
            self.vals.insert(name.clone(), Val::Poisoned);
            let Some(pb::type_proto::Value::TensorType(tt)) =
                vi.r#type.as_ref().and_then(|t| t.value.as_ref())
            else {
                self.error(format!("input `{name}` is not a tensor (a sequence, map or optional), which tinyonnx does not run"));
                continue;
            };
            let code = tt.elem_type.unwrap_or(0);
            let Some(dtype) = proto::dtype(code) else {
                self.error(format!(
                    "input `{name}` has element type {}, which tinyonnx does not run",
                    proto::type_name(code)
                ));
                continue;
            };
            let file_dims: Vec<Option<&pb::tensor_shape_proto::dimension::Value>> = tt
                .shape
                .as_ref()
                .map(|s| s.dim.iter().map(|d| d.value.as_ref()).collect())
                .unwrap_or_default();
            let shown = |d: Option<&pb::tensor_shape_proto::dimension::Value>| match d {
                Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) => v.to_string(),
                Some(pb::tensor_shape_proto::dimension::Value::DimParam(p)) if !p.is_empty() => {
                    p.clone()
                }
                _ => "?".into(),
            };
            let dims: Option<Vec<usize>> =
                if let Some((_, _, given)) = def.shapes.iter().find(|(k, _, _)| *k == name) {
                    used_shapes.insert(name.clone());
                    let mut out = Vec::new();
                    for lit in given {
                        match lit.base10_parse::<usize>() {
                            Ok(v) if (1..=crate::types::MAX_DIM).contains(&v) => out.push(v),
                            _ => self
                                .cx
                                .error(lit.span(), "a dim is an integer from 1 to 2^31"),
                        }
                    }
                    if !file_dims.is_empty() && given.len() != file_dims.len() {
                        self.error(format!(
                            "shapes(...) gives input `{name}` {} dims; the file's has {}",
                            given.len(),
                            file_dims.len()
                        ));
                    }
                    Some(out)
                } else if tt.shape.is_none() {
                    open.push(format!(
                        "`{name}` has no shape in the file: give `shapes({} = [...])`",
                        rust_key(&name)
                    ));
                    None
                } else {
                    let mut out = Vec::new();
                    let mut missing = false;
                    for d in &file_dims {
                        use pb::tensor_shape_proto::dimension::Value as D;
                        match d {
                            Some(D::DimValue(v))
                                if *v > 0 && (*v as u64) <= crate::types::MAX_DIM as u64 =>
                            {
                                out.push(*v as usize)
                            }
                            Some(D::DimParam(p)) if !p.is_empty() => {
                                match def.dims.iter().find(|(k, _, _)| k == p) {
                                    Some((_, _, lit)) => {
                                        used_dims.insert(p.clone());
                                        match lit.base10_parse::<usize>() {
                                            Ok(v) if (1..=crate::types::MAX_DIM).contains(&v) => {
                                                out.push(v)
                                            }
                                            _ => {
                                                self.cx.error(
                                                    lit.span(),
                                                    "a dim is an integer from 1 to 2^31",
                                                );
                                                missing = true;
                                            }
                                        }
                                    }
                                    None => missing = true,
                                }
                            }
                            _ => missing = true,
                        }
                    }
                    if missing {
                        use pb::tensor_shape_proto::dimension::Value as D;
                        let all: Vec<String> = file_dims.iter().map(|d| shown(*d)).collect();
                        // The open dims: their names, or None for a dim without one.
                        let open_dims: Vec<Option<&str>> = file_dims
                            .iter()
                            .filter_map(|d| match d {
                                Some(D::DimValue(v)) if *v > 0 => None,
                                Some(D::DimParam(p)) if !p.is_empty() => {
                                    (!def.dims.iter().any(|(k, _, _)| k == p))
                                        .then_some(Some(p.as_str()))
                                }
                                _ => Some(None),
                            })
                            .collect();
                        let hint = if open_dims.iter().all(Option::is_some) {
                            let named: Vec<String> = open_dims
                                .iter()
                                .flatten()
                                .map(|p| format!("{} = ..", rust_key(p)))
                                .collect();
                            format!("dims({})", named.join(", "))
                        } else {
                            // The dims given or fixed by the file filled in.
                            let filled: Vec<String> = file_dims
                                .iter()
                                .map(|d| match d {
                                    Some(D::DimParam(p)) => def
                                        .dims
                                        .iter()
                                        .find(|(k, _, _)| k == p)
                                        .map_or_else(|| shown(*d), |(_, _, v)| v.to_string()),
                                    _ => shown(*d),
                                })
                                .collect();
                            format!("shapes({} = [{}])", rust_key(&name), filled.join(", "))
                        };
                        open.push(format!("`{name}` is [{}]: give `{hint}`", all.join(", ")));
                        None
                    } else {
                        Some(out)
                    }
                };
            if let Some(dims) = dims {
                let shown_name = self.renamed(&name);
                let id = self.cx.add_input(
                    shown_name,
                    TensorType {
                        dtype,
                        shape: Shape::fixed(&dims),
                    },
                );
                self.vals.insert(name, Val::Tensor(id));
            }
        }
        if !open.is_empty() {
            self.error(format!(
                "the file leaves dims open, and a static plan needs every one: {}",
                open.join("; ")
            ));
        }
        for (k, span, _) in &def.dims {
            if !used_dims.contains(k) {
                self.cx
                    .error(*span, format!("the file's inputs have no dim named `{k}`"));
            }
        }
        for (k, span, _) in &def.shapes {
            if !used_shapes.contains(k) {
                let known: Vec<&str> = names.iter().map(String::as_str).collect();
                let hint = crate::suggest::did_you_mean(k, &known)
                    .map(|s| format!(": did you mean `{s}`?"))
                    .unwrap_or_else(|| format!("; its inputs are {}", known.join(", ")));
                self.cx
                    .error(*span, format!("the file has no input `{k}`{hint}"));
            }
        }
        for (new, old) in &def.renames {
            let o = old.value();
            let exists =
                names.contains(&o) || graph.output.iter().any(|v| v.name.as_deref() == Some(&o));
            if !exists {
                self.cx.error(
                    old.span(),
                    format!("the file has no input or output `{o}` to rename to `{new}`"),
                );
            }
        }
    }

    /// The name a file's input or output has in the model: its rename, or its own.
    fn renamed(&self, name: &str) -> String {
        self.def
            .renames
            .iter()
            .find(|(_, old)| old.value() == name)
            .map_or_else(|| name.to_string(), |(new, _)| new.to_string())
    }

    /// The graph's nodes with calls of the model's local functions replaced by their
    /// bodies (names made unique per call, attribute references resolved).
    fn inline(
        &mut self,
        graph: &pb::GraphProto,
        functions: &[pb::FunctionProto],
    ) -> Vec<pb::NodeProto> {
        let mut out = Vec::new();
        let mut stack: Vec<(pb::NodeProto, usize)> =
            graph.node.iter().rev().cloned().map(|n| (n, 0)).collect();
        let mut calls = 0usize;
        while let Some((node, depth)) = stack.pop() {
            let domain = node.domain.clone().unwrap_or_default();
            let op = node.op_type.clone().unwrap_or_default();
            let Some(f) = functions.iter().find(|f| {
                f.name.as_deref() == Some(&op) && f.domain.clone().unwrap_or_default() == domain
            }) else {
                out.push(node);
                continue;
            };
            if depth >= 16 || out.len() + stack.len() > MAX_NODES {
                self.error(format!(
                    "function `{op}` calls functions more than 16 deep (or recursively)"
                ));
                continue;
            }
            calls += 1;
            let prefix = format!("{}::{calls}::", node.name.clone().unwrap_or(op.clone()));
            let mut rename: HashMap<String, String> = HashMap::new();
            for (formal, actual) in f.input.iter().zip(&node.input) {
                rename.insert(formal.clone(), actual.clone());
            }
            for (formal, actual) in f.output.iter().zip(&node.output) {
                rename.insert(formal.clone(), actual.clone());
            }
            let map = |n: &String, rename: &HashMap<String, String>| -> String {
                if n.is_empty() {
                    return String::new();
                }
                rename
                    .get(n)
                    .cloned()
                    .unwrap_or_else(|| format!("{prefix}{n}"))
            };
            let mut body = Vec::new();
            for inner in &f.node {
                let mut n = inner.clone();
                n.input = n.input.iter().map(|i| map(i, &rename)).collect();
                n.output = n.output.iter().map(|o| map(o, &rename)).collect();
                n.name = Some(format!("{prefix}{}", n.name.clone().unwrap_or_default()));
                // Attribute references take the call's value, or the function's default.
                let mut attrs = Vec::new();
                for a in n.attribute {
                    match a.ref_attr_name.as_deref() {
                        Some(r) => {
                            let given = node
                                .attribute
                                .iter()
                                .chain(&f.attribute_proto)
                                .find(|b| b.name.as_deref() == Some(r));
                            if let Some(b) = given {
                                let mut b = b.clone();
                                b.name = a.name.clone();
                                attrs.push(b);
                            }
                        }
                        None => attrs.push(a),
                    }
                }
                n.attribute = attrs;
                body.push((n, depth + 1));
            }
            stack.extend(body.into_iter().rev());
        }
        out
    }

    /// The nodes in an order where each comes after what it reads (the file's own order
    /// where it allows); nodes in a cycle or reading a name nothing makes are reported.
    fn sort(&mut self, nodes: &[pb::NodeProto]) -> Vec<usize> {
        let mut producer: HashMap<&str, usize> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            for o in n.output.iter().filter(|o| !o.is_empty()) {
                if producer.insert(o, i).is_some() || self.vals.contains_key(o.as_str()) {
                    let msg = format!(
                        "the name `{o}` is made twice (by a node and by another node, input or initializer)"
                    );
                    self.error(msg);
                }
            }
        }
        let mut waiting = vec![0usize; nodes.len()];
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut unknown = BTreeSet::new();
        for (i, n) in nodes.iter().enumerate() {
            for inp in reads(n).iter().filter(|s| !s.is_empty()) {
                match producer.get(inp.as_str()) {
                    Some(&p) => {
                        waiting[i] += 1;
                        readers[p].push(i);
                    }
                    None if self.vals.contains_key(inp) => {}
                    None => {
                        unknown.insert(format!("`{inp}` (read by {})", describe(n)));
                    }
                }
            }
        }
        if !unknown.is_empty() {
            let list: Vec<String> = unknown.into_iter().collect();
            self.error(format!(
                "nodes read names that no node, input or initializer makes: {}",
                list.join(", ")
            ));
        }
        let mut ready: BTreeSet<usize> = (0..nodes.len()).filter(|&i| waiting[i] == 0).collect();
        let mut order = Vec::with_capacity(nodes.len());
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for &r in &readers[i] {
                waiting[r] -= 1;
                if waiting[r] == 0 {
                    ready.insert(r);
                }
            }
        }
        if order.len() < nodes.len() {
            let stuck: Vec<String> = (0..nodes.len())
                .filter(|&i| waiting[i] > 0)
                .take(8)
                .map(|i| describe(&nodes[i]))
                .collect();
            self.error(format!(
                "the graph has a cycle: these nodes wait on each other: {}",
                stuck.join(", ")
            ));
        }
        order
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
        if !matches!(domain, "" | "ai.onnx") {
            self.error(format!(
                "is in domain `{domain}`, which tinyonnx does not run (only the default domain)"
            ));
            return;
        }
        if op == "If" {
            self.constant_if(node);
            return;
        }
        if ["Loop", "Scan"].contains(&op.as_str()) {
            self.error("loops in an imported file are not supported yet (If with a condition known at compile time is)");
            return;
        }
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
        if op == "Constant" {
            match constant(node) {
                Ok(c) => self.define(node, 0, Val::Const(c)),
                Err(e) => self.error(e),
            }
            return;
        }
        // Shape and Size of a tensor whose shape the plan fixes are constants.
        if (op == "Shape" || op == "Size")
            && let Some(Some(dims)) = node.input.first().map(|i| self.dims_of(i))
        {
            let c = if op == "Size" {
                Const {
                    dims: Vec::new(),
                    data: crate::data::Data::I64(vec![dims.iter().product::<usize>() as i64]),
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
                    data: crate::data::Data::I64(d),
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
        if matches!(op.as_str(), "Softmax" | "LogSoftmax" | "Hardmax") && self.file_opset < 13 {
            self.softmax_before_13(node, &name);
            return;
        }
        if matches!(op.as_str(), "Sum" | "Mean") {
            self.sum(node, &name);
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
        self.build(schema, node, name);
    }

    /// An If whose condition is known: the branch taken, inlined.
    fn constant_if(&mut self, node: &pb::NodeProto) {
        let cond = match node.input.first().and_then(|c| self.vals.get(c)) {
            Some(Val::Const(c)) => c.data.clone(),
            Some(Val::Poisoned) => return,
            _ => {
                self.error(
                    "has a condition only known when the model runs; tinyonnx imports an If \
                     whose condition the fixed dims decide (control flow on data is not supported yet)",
                );
                return;
            }
        };
        let taken = match cond {
            crate::data::Data::Typed { values, .. } if values.len() == 1 => values[0] != 0.0,
            crate::data::Data::I64(v) if v.len() == 1 => v[0] != 0,
            crate::data::Data::F32(v) if v.len() == 1 => v[0] != 0.0,
            _ => {
                self.error("has a condition of more than one value");
                return;
            }
        };
        let branch = if taken { "then_branch" } else { "else_branch" };
        let Some(g) = proto::find(node, branch).and_then(|a| a.g.as_ref()) else {
            self.error(format!("has no {branch}"));
            return;
        };
        if self.depth >= MAX_IF_DEPTH {
            self.error(format!("nests If more than {MAX_IF_DEPTH} deep"));
            return;
        }
        if g.output.len() != node.output.len() {
            self.error(format!(
                "has {} outputs but its {branch} returns {}",
                node.output.len(),
                g.output.len()
            ));
            return;
        }
        for t in &g.initializer {
            let name = t.name.clone().unwrap_or_default();
            match self.initializer(t) {
                Ok(c) => {
                    self.vals.insert(name, Val::Const(c));
                }
                Err(e) => {
                    self.error(format!("initializer `{name}` of its {branch} {e}"));
                    self.vals.insert(name, Val::Poisoned);
                }
            }
        }
        let outs: Vec<&str> = g.output.iter().filter_map(|o| o.name.as_deref()).collect();
        let context = format!("{} > {branch}", node.name.as_deref().unwrap_or("If"));
        self.depth += 1;
        let before = self.cx.error_count();
        let saved = std::mem::replace(&mut self.branch, context);
        self.run_nodes(&g.node, &outs);
        self.branch = saved;
        self.depth -= 1;
        if self.cx.error_count() > before {
            return;
        }
        for (k, o) in g.output.iter().enumerate() {
            let v = o
                .name
                .as_deref()
                .and_then(|n| self.vals.get(n))
                .cloned()
                .unwrap_or(Val::Poisoned);
            self.define(node, k, v);
        }
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

    /// Softmax, LogSoftmax and Hardmax before opset 13 work on the input flattened to
    /// 2-D at `axis` (default 1); after, on one axis. The same values come from the new
    /// operator over the last axis of that 2-D view, reshaped back.
    fn softmax_before_13(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.clone().unwrap_or_default();
        let Some(input) = node.input.first() else {
            self.error("has no input");
            return;
        };
        let Some(dims) = self.dims_of(input) else {
            if !matches!(self.vals.get(input), Some(Val::Tensor(_) | Val::Const(_))) {
                return;
            }
            self.error("needs an input of known shape");
            return;
        };
        let Some(schema) = ops::lookup(&op) else {
            self.error(format!("tinyonnx does not support {op}"));
            return;
        };
        let r = dims.len() as i64;
        let a = proto::int(node, "axis").unwrap_or(1);
        let a = if a < 0 { a + r } else { a };
        if !(0..r.max(1)).contains(&a) {
            self.error(format!("has axis {a}, out of range for rank {r}"));
            return;
        }
        let plain = |mut n: pb::NodeProto| {
            n.attribute.retain(|x| x.name.as_deref() != Some("axis"));
            n
        };
        if a == r - 1 || r <= 1 {
            // The same as the new operator over the last axis (its default).
            let mut n = plain(node.clone());
            n.attribute.push(pb::AttributeProto {
                name: Some("axis".into()),
                r#type: Some(2),
                i: Some(-1),
                ..Default::default()
            });
            self.build(schema, &n, name.to_string());
            return;
        }
        let a = a as usize;
        let outer: usize = dims[..a].iter().product();
        let inner: usize = dims[a..].iter().product();
        let out = node.output.first().cloned().unwrap_or_default();
        let flat = format!("{out}::2d");
        let soft = format!("{out}::2d_{op}");
        let shape2 = format!("{out}::shape2d");
        let shape_back = format!("{out}::shape");
        self.vals.insert(
            shape2.clone(),
            Val::Const(Const {
                dims: vec![2],
                data: crate::data::Data::I64(vec![outer as i64, inner as i64]),
            }),
        );
        self.vals.insert(
            shape_back.clone(),
            Val::Const(Const {
                dims: vec![dims.len()],
                data: crate::data::Data::I64(dims.iter().map(|&d| d as i64).collect()),
            }),
        );
        let reshape = ops::lookup("Reshape").expect("Reshape is registered");
        let mk = |op: &str, inputs: Vec<String>, output: String| pb::NodeProto {
            op_type: Some(op.into()),
            input: inputs,
            output: vec![output],
            ..Default::default()
        };
        self.build(
            reshape,
            &mk("Reshape", vec![input.clone(), shape2], flat.clone()),
            format!("{name}::flatten"),
        );
        let mut s = plain(mk(&op, vec![flat], soft.clone()));
        s.attribute.push(pb::AttributeProto {
            name: Some("axis".into()),
            r#type: Some(2),
            i: Some(-1),
            ..Default::default()
        });
        self.build(schema, &s, name.to_string());
        self.build(
            reshape,
            &mk("Reshape", vec![soft, shape_back], out),
            format!("{name}::unflatten"),
        );
    }

    /// The two `ai.onnx.ml` operators scikit-learn pipelines put around a network:
    /// `Scaler` (`(x - offset) * scale` per feature) as Sub and Mul, and
    /// `ArrayFeatureExtractor` on class labels 0..k (what the label of an argmax is) as
    /// the indices themselves, shaped `[1, n]` as ONNX Runtime gives them.
    fn ml(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.clone().unwrap_or_default();
        let out = node.output.first().cloned().unwrap_or_default();
        let mk = |op: &str, inputs: Vec<String>, output: String| pb::NodeProto {
            op_type: Some(op.into()),
            input: inputs,
            output: vec![output],
            ..Default::default()
        };
        let Some(x) = node.input.first().cloned() else {
            self.error("has no input");
            return;
        };
        if op == "Scaler" {
            let floats = |k: &str| {
                proto::find(node, k)
                    .map(|a| a.floats.clone())
                    .unwrap_or_default()
            };
            let (offset, scale) = (floats("offset"), floats("scale"));
            let (offset_name, scale_name) = (format!("{out}::offset"), format!("{out}::scale"));
            for (n, v, default) in [(&offset_name, offset, 0.0), (&scale_name, scale, 1.0)] {
                let v = if v.is_empty() { vec![default] } else { v };
                let dims = if v.len() == 1 {
                    Vec::new()
                } else {
                    vec![v.len()]
                };
                self.vals.insert(
                    n.clone(),
                    Val::Const(Const {
                        dims,
                        data: crate::data::Data::F32(v),
                    }),
                );
            }
            let centred = format!("{out}::centred");
            let sub = ops::lookup("Sub").expect("Sub is registered");
            let mul = ops::lookup("Mul").expect("Mul is registered");
            self.build(
                sub,
                &mk("Sub", vec![x, offset_name], centred.clone()),
                format!("{name}::offset"),
            );
            self.build(
                mul,
                &mk("Mul", vec![centred, scale_name], out),
                name.to_string(),
            );
            return;
        }
        // ArrayFeatureExtractor(labels, indices).
        let labels = match self.vals.get(&x) {
            Some(Val::Const(c)) => c.clone(),
            Some(Val::Poisoned) => return,
            _ => {
                self.error("extracts from a tensor only known when the model runs, which tinyonnx does not support yet (Gather on runtime indices)");
                return;
            }
        };
        let label_values: Option<Vec<i64>> = match &labels.data {
            crate::data::Data::I64(v) => Some(v.clone()),
            crate::data::Data::Typed { dtype, values } if *dtype != crate::types::DType::F64 => {
                Some(values.iter().map(|&v| v as i64).collect())
            }
            _ => None,
        };
        let identity = label_values.is_some_and(|v| {
            labels.dims.len() == 1 && v.iter().enumerate().all(|(i, &l)| l == i as i64)
        });
        if !identity {
            self.error("maps indices to labels other than 0, 1, 2, ...; tinyonnx does not support this yet (Gather on runtime indices)");
            return;
        }
        let Some(idx) = node.input.get(1).cloned() else {
            self.error("has no indices");
            return;
        };
        let Some(dims) = self.dims_of(&idx) else {
            return;
        };
        let n: usize = dims.iter().product();
        let shape = format!("{out}::shape");
        self.vals.insert(
            shape.clone(),
            Val::Const(Const {
                dims: vec![2],
                data: crate::data::Data::I64(vec![1, n as i64]),
            }),
        );
        let reshape = ops::lookup("Reshape").expect("Reshape is registered");
        let dtype = labels.data.dtype();
        if dtype == crate::types::DType::I64 {
            self.build(
                reshape,
                &mk("Reshape", vec![idx, shape], out),
                name.to_string(),
            );
            return;
        }
        // Labels of another integer type: the indices cast to it.
        let flat = format!("{out}::indices");
        self.build(
            reshape,
            &mk("Reshape", vec![idx, shape], flat.clone()),
            format!("{name}::reshape"),
        );
        let cast = ops::lookup("Cast").expect("Cast is registered");
        let mut n = mk("Cast", vec![flat], out);
        n.attribute.push(pb::AttributeProto {
            name: Some("to".into()),
            r#type: Some(2),
            i: Some(i64::from(dtype.onnx_code())),
            ..Default::default()
        });
        self.build(cast, &n, name.to_string());
    }

    /// Sum and Mean (any number of inputs, broadcasting) as a chain of Adds, divided
    /// by the count for Mean.
    fn sum(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.clone().unwrap_or_default();
        let out = node.output.first().cloned().unwrap_or_default();
        let inputs: Vec<String> = node
            .input
            .iter()
            .filter(|i| !i.is_empty())
            .cloned()
            .collect();
        let Some(first) = inputs.first() else {
            self.error("has no inputs");
            return;
        };
        let mk = |op: &str, inputs: Vec<String>, output: String| pb::NodeProto {
            op_type: Some(op.into()),
            input: inputs,
            output: vec![output],
            ..Default::default()
        };
        let add = ops::lookup("Add").expect("Add is registered");
        let last_add = if op == "Mean" {
            format!("{out}::sum")
        } else {
            out.clone()
        };
        if inputs.len() == 1 {
            let identity = ops::lookup("Identity").expect("Identity is registered");
            self.build(
                identity,
                &mk("Identity", vec![first.clone()], last_add.clone()),
                name.to_string(),
            );
        }
        let mut acc = first.clone();
        for (k, x) in inputs.iter().enumerate().skip(1) {
            let o = if k + 1 == inputs.len() {
                last_add.clone()
            } else {
                format!("{out}::sum{k}")
            };
            self.build(
                add,
                &mk("Add", vec![acc, x.clone()], o.clone()),
                format!("{name}::add{k}"),
            );
            acc = o;
        }
        if op == "Mean" {
            let count = format!("{out}::count");
            self.vals.insert(
                count.clone(),
                Val::Const(Const {
                    dims: Vec::new(),
                    data: crate::data::Data::F32(vec![inputs.len() as f32]),
                }),
            );
            let div = ops::lookup("Div").expect("Div is registered");
            self.build(
                div,
                &mk("Div", vec![last_add, count], out),
                name.to_string(),
            );
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

/// The value of a Constant node (any `value*` attribute).
fn constant(node: &pb::NodeProto) -> Result<Const, String> {
    use crate::data::Data;
    let a = node
        .attribute
        .first()
        .filter(|_| node.attribute.len() == 1)
        .ok_or("needs exactly one value attribute")?;
    let scalar = |data| Const {
        dims: Vec::new(),
        data,
    };
    Ok(match a.name.as_deref().unwrap_or("") {
        "value" => proto::tensor(a.t.as_ref().ok_or("has no tensor in `value`")?)
            .map_err(|e| format!("its value {e}"))?,
        "value_float" => scalar(Data::F32(vec![a.f.unwrap_or(0.0)])),
        "value_int" => scalar(Data::I64(vec![a.i.unwrap_or(0)])),
        "value_floats" => Const {
            dims: vec![a.floats.len()],
            data: Data::F32(a.floats.clone()),
        },
        "value_ints" => Const {
            dims: vec![a.ints.len()],
            data: Data::I64(a.ints.clone()),
        },
        other => {
            return Err(format!(
                "has `{other}`, which tinyonnx does not read (sparse or string values)"
            ));
        }
    })
}

/// Which nodes an output needs, by what they read.
fn live_nodes(nodes: &[pb::NodeProto], order: &[usize], outputs: &[&str]) -> Vec<bool> {
    let mut needed: HashSet<String> = outputs.iter().map(|s| s.to_string()).collect();
    let mut live = vec![false; nodes.len()];
    for &i in order.iter().rev() {
        if nodes[i].output.iter().any(|o| needed.contains(o)) {
            live[i] = true;
            needed.extend(reads(&nodes[i]));
        }
    }
    live
}

/// The names a node reads: its inputs, and the outer names its subgraphs capture.
fn reads(node: &pb::NodeProto) -> Vec<String> {
    let mut out = node.input.clone();
    let mut stack: Vec<&pb::GraphProto> = node
        .attribute
        .iter()
        .flat_map(|a| a.g.iter().chain(&a.graphs))
        .collect();
    // Names defined anywhere inside the subgraphs (ONNX forbids shadowing, so a name
    // read there and defined nowhere there comes from outside).
    let mut inner: HashSet<&str> = HashSet::new();
    let mut read: Vec<&str> = Vec::new();
    let mut depth = 0;
    while let Some(g) = stack.pop() {
        depth += 1;
        if depth > 4096 {
            break;
        }
        inner.extend(g.input.iter().filter_map(|v| v.name.as_deref()));
        inner.extend(g.initializer.iter().filter_map(|t| t.name.as_deref()));
        for n in &g.node {
            inner.extend(n.output.iter().map(String::as_str));
            read.extend(n.input.iter().map(String::as_str));
            stack.extend(n.attribute.iter().flat_map(|a| a.g.iter().chain(&a.graphs)));
        }
        read.extend(g.output.iter().filter_map(|v| v.name.as_deref()));
    }
    out.extend(
        read.into_iter()
            .filter(|r| !r.is_empty() && !inner.contains(r))
            .map(str::to_string),
    );
    out
}

/// A node for messages: its name and operator.
fn describe(n: &pb::NodeProto) -> String {
    format!(
        "`{}` ({})",
        n.name.as_deref().unwrap_or(""),
        n.op_type.as_deref().unwrap_or("")
    )
}

/// How a file's name is written as a key of `dims(...)`/`shapes(...)`: itself when it
/// is an identifier, else as a string.
fn rust_key(name: &str) -> String {
    let ident = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

#[cfg(test)]
mod tests;
