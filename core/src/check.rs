//! Names, arity, attributes, dtypes and shapes. Every error is collected with the span
//! of the token it is about; a failed sub-expression yields `None` and a failed
//! definition is poisoned, so the errors that follow from one mistake are not reported
//! again.

use std::collections::{BTreeMap, HashMap, HashSet};

use proc_macro2::Span;
use syn::Ident;

use crate::init;
use crate::ir::{Data, Graph, Node, Tensor, TensorId, TensorKind, Winograd};
use crate::layers;
use crate::ops::{
    self, At, AttrDefault, AttrKind, AttrSpec, AttrValue, Attrs, InTy, InferCtx, OpSchema,
};
use crate::suggest;
use crate::syntax::{
    Arg, Block, Call, CustomDef, DimExpr, Expr, Item, ModelDef, OutputRule, Pattern, TypeExpr,
};
use crate::types::{DType, Dim, MAX_DIM, Shape, TensorType, checked_numel};

mod flow;

/// Lower-case layer sugar that is exactly one ONNX operator.
pub const ALIASES: &[(&str, &str)] = &[
    ("relu", "Relu"),
    ("sigmoid", "Sigmoid"),
    ("tanh", "Tanh"),
    ("softmax", "Softmax"),
    ("matmul", "MatMul"),
    ("identity", "Identity"),
    ("gelu", "Gelu"),
    ("transpose", "Transpose"),
    ("reshape", "Reshape"),
    ("concat", "Concat"),
];

/// How deep block instances may nest (a block calling itself is an error long before).
const MAX_BLOCK_DEPTH: usize = 16;

/// A warning: where, and what.
pub type Warning = (Span, String);

/// What a successful check returns: the graph, warnings, and the weight files it read.
pub type Checked = (Graph, Vec<Warning>, Vec<std::path::PathBuf>);

/// Checks a parsed model and builds its graph and warnings, or returns every error found.
pub fn check(model: &ModelDef) -> Result<Checked, Vec<syn::Error>> {
    let mut cx = Checker {
        errors: Vec::new(),
        graph: Graph {
            name: model.name.to_string(),
            doc: model.doc.clone(),
            opset: ops::DEFAULT_OPSET,
            model_version: None,
            domain: None,
            metadata: Vec::new(),
            winograd: Winograd::Auto,
            instances: Vec::new(),
            device_dims: BTreeMap::new(),
            tensors: Vec::new(),
            inputs: Vec::new(),
            weights: Vec::new(),
            nodes: Vec::new(),
            outputs: Vec::new(),
        },
        scopes: vec![Scope::default()],
        output_declared: false,
        anonymous: HashSet::new(),
        instance: None,
        layer_counts: HashMap::new(),
        blocks: HashMap::new(),
        customs: HashMap::new(),
        hint: None,
        declared: Vec::new(),
        files: crate::weights::Files::default(),
        body_depth: 0,
    };
    cx.settings(model);
    cx.collect_blocks(&model.items);
    for item in &model.items {
        cx.item(item);
    }
    if !cx.output_declared {
        cx.error(
            model.name.span(),
            format!(
                "model `{}` has no output: add one such as `output y = Relu(x);`",
                model.name
            ),
        );
    }
    if !cx.errors.is_empty() {
        return Err(cx.errors);
    }
    let warnings = cx
        .declared
        .iter()
        .filter(|(id, _, _)| cx.graph.consumers(*id).is_empty())
        .map(|(id, span, what)| {
            let name = &cx.graph.tensors[*id].name;
            (
                *span,
                format!("{what} `{name}` is declared but never used: remove it or use it"),
            )
        })
        .collect();
    let files = cx.files.paths();
    Ok((cx.graph, warnings, files))
}

/// What a `return` gave: each tensor with its expression's span, and the parentheses
/// of a tuple.
type Returned = (Vec<(Option<TensorId>, Span)>, Option<Span>);

/// The names visible in the model body or in one block instance.
#[derive(Default)]
struct Scope {
    /// Prepended to every name defined here (`layer1.` inside the instance `layer1`).
    prefix: String,
    /// `None` marks a name whose definition failed: uses of it are not reported again.
    names: HashMap<String, (Option<TensorId>, Span)>,
    /// Value parameters of a block instance, substituted where they are used.
    values: HashMap<String, Expr>,
    /// The tensors of the `return` (one for a block, any number for a control-flow
    /// body), each with its expression's span, and the span of the statement.
    returned: Option<Returned>,
    /// A control-flow body: names not defined here are looked up in the enclosing
    /// scope (the body captures them).
    transparent: bool,
}

pub(crate) struct Checker<'m> {
    errors: Vec<syn::Error>,
    pub(crate) graph: Graph,
    scopes: Vec<Scope>,
    /// Whether any output item was seen, even one that failed.
    output_declared: bool,
    /// Tensors that still carry a generated name.
    anonymous: HashSet<TensorId>,
    /// The `function` block instance whose body is being checked.
    instance: Option<usize>,
    /// How many of each layer sugar or block were used, for generated names and seeds.
    layer_counts: HashMap<String, usize>,
    blocks: HashMap<String, &'m Block>,
    /// Custom operators declared with `custom`.
    customs: HashMap<String, &'m CustomDef>,
    /// The name of the `let` whose right side is being evaluated, for the layer or block
    /// called directly there (`let conv1 = conv2d(...)` names the layer `conv1`).
    hint: Option<String>,
    /// Inputs and weights declared by the user, for the unused-declaration warning.
    declared: Vec<(TensorId, Span, &'static str)>,
    /// Weight files read so far.
    pub(crate) files: crate::weights::Files,
    /// How many control-flow bodies enclose the items being checked (`function` blocks
    /// called there are inlined: an ONNX subgraph calls no local functions here).
    body_depth: usize,
}

impl layers::LayerCx for Checker<'_> {
    fn graph(&self) -> &Graph {
        &self.graph
    }
    fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        Checker::error(self, span, msg);
    }
    fn add_weight(&mut self, name: String, shape: &[usize], data: Data) -> TensorId {
        Checker::add_weight(self, name, shape, data)
    }
    fn build(
        &mut self,
        op: &'static OpSchema,
        node_name: String,
        inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        span_of: &dyn Fn(At) -> Span,
    ) -> Option<Vec<TensorId>> {
        Checker::build(self, op, node_name, inputs, attrs, span_of)
    }
    fn instance_name(
        &mut self,
        layer: &str,
        explicit: Option<(String, Span)>,
        hint: Option<String>,
        span: Span,
    ) -> Option<String> {
        Checker::instance_name(self, layer, explicit, hint, span)
    }
    fn layer_index(&self, layer: &str) -> usize {
        Checker::layer_index(self, layer)
    }
    fn load_checked(
        &mut self,
        path: &syn::LitStr,
        name: Option<&str>,
        shape: &[usize],
        what: &str,
    ) -> Result<Vec<f32>, (Span, String)> {
        Checker::load_checked(self, path, name, shape, what)
    }
    fn tensor_expr(&mut self, expr: &Expr) -> Option<TensorId> {
        Checker::tensor_expr(self, expr)
    }
}

impl<'m> Checker<'m> {
    pub(crate) fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    fn scope(&mut self) -> &mut Scope {
        self.scopes
            .last_mut()
            .expect("the model scope is never popped")
    }

    /// The current name prefix (`""` in the model body).
    pub(crate) fn prefix(&self) -> &str {
        &self.scopes.last().expect("the model scope").prefix
    }

    /// `opset` and `dim` items, read before the rest so their order does not matter.
    fn settings(&mut self, model: &ModelDef) {
        let mut opset_seen = false;
        let mut winograd_seen = false;
        for item in &model.items {
            match item {
                Item::Opset { kw, value } => {
                    if opset_seen {
                        self.error(kw.span(), "the opset is set twice");
                        continue;
                    }
                    opset_seen = true;
                    match value.base10_parse::<i64>() {
                        Ok(v) if (ops::MIN_OPSET..=ops::MAX_OPSET).contains(&v) => {
                            self.graph.opset = v;
                        }
                        Ok(v) => self.error(
                            value.span(),
                            format!(
                                "opset {v} is not supported: tinyonnx accepts opsets {}..={}",
                                ops::MIN_OPSET,
                                ops::MAX_OPSET
                            ),
                        ),
                        Err(e) => self.errors.push(e),
                    }
                }
                Item::ModelVersion { kw, value } => {
                    if self.graph.model_version.is_some() {
                        self.error(kw.span(), "model_version is set twice");
                        continue;
                    }
                    match value.base10_parse::<i64>() {
                        Ok(v) if v >= 0 => self.graph.model_version = Some(v),
                        _ => self.error(
                            value.span(),
                            "model_version must be a non-negative integer (ONNX int64)",
                        ),
                    }
                }
                Item::Winograd { kw, value } => {
                    if winograd_seen {
                        self.error(kw.span(), "winograd is set twice");
                        continue;
                    }
                    winograd_seen = true;
                    self.graph.winograd = match value.to_string().as_str() {
                        "auto" => Winograd::Auto,
                        "always" => Winograd::Always,
                        "never" => Winograd::Never,
                        other => {
                            self.error(
                                value.span(),
                                format!("unknown winograd setting `{other}`: expected `auto` (where the arena does not grow), `always` or `never`"),
                            );
                            continue;
                        }
                    };
                }
                Item::Domain { kw, value } => {
                    if self.graph.domain.is_some() {
                        self.error(kw.span(), "domain is set twice");
                        continue;
                    }
                    let d = value.value();
                    if d.is_empty() || d.chars().any(char::is_whitespace) {
                        self.error(
                            value.span(),
                            "the model domain is a reverse-DNS name without spaces, as in \"com.example.vision\"",
                        );
                        continue;
                    }
                    self.graph.domain = Some(d);
                }
                Item::Meta {
                    key,
                    key_span,
                    value,
                } => {
                    if key.is_empty() {
                        self.error(*key_span, "a metadata key cannot be empty");
                    } else if self.graph.metadata.iter().any(|(k, _)| k == key) {
                        self.error(*key_span, format!("metadata `{key}` is set twice"));
                    } else {
                        self.graph.metadata.push((key.clone(), value.value()));
                    }
                }
                Item::Dim { name, value } => {
                    let key = name.to_string();
                    if self.graph.device_dims.contains_key(&key) {
                        self.error(name.span(), format!("dimension `{key}` is set twice"));
                        continue;
                    }
                    match value.base10_parse::<usize>() {
                        Ok(v) if v > 0 && v <= MAX_DIM => {
                            self.graph.device_dims.insert(key, v);
                        }
                        _ => self.error(
                            value.span(),
                            format!(
                                "the device value of `{key}` must be an integer in 1..={MAX_DIM}"
                            ),
                        ),
                    }
                }
                _ => {}
            }
        }
    }

    fn collect_blocks(&mut self, items: &'m [Item]) {
        for item in items {
            if let Item::Custom(c) = item {
                self.custom_def(c);
            }
            if let Item::Block(b) = item {
                let key = b.name.to_string();
                if ops::lookup(&key).is_some() || layers::is_layer(&key) {
                    self.error(
                        b.name.span(),
                        format!("block `{key}` has the name of an operator or layer: rename it"),
                    );
                    continue;
                }
                match self.blocks.entry(key) {
                    std::collections::hash_map::Entry::Occupied(e) => {
                        let msg = format!("block `{}` is defined twice", e.key());
                        self.error(b.name.span(), msg);
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(b);
                    }
                }
            }
        }
    }

    fn item(&mut self, item: &'m Item) {
        let in_block = self.scopes.len() > 1;
        match item {
            Item::Opset { kw, .. } if in_block => {
                self.error(kw.span(), "`opset` is set in the model, not in a block")
            }
            Item::ModelVersion { kw, .. } | Item::Domain { kw, .. } | Item::Winograd { kw, .. }
                if in_block =>
            {
                self.error(
                    kw.span(),
                    format!("`{kw}` is set in the model, not in a block"),
                )
            }
            Item::Meta { key_span, .. } if in_block => {
                self.error(*key_span, "`meta` is set in the model, not in a block")
            }
            Item::ModelVersion { .. }
            | Item::Domain { .. }
            | Item::Winograd { .. }
            | Item::Meta { .. } => {}
            Item::Dim { name, .. } if in_block => {
                self.error(name.span(), "`dim` is set in the model, not in a block")
            }
            Item::Opset { .. } | Item::Dim { .. } => {}
            Item::Block(b) if in_block => self.error(
                b.name.span(),
                if b.function {
                    "functions are defined in the model body, not nested"
                } else {
                    "blocks are defined in the model body, not nested"
                },
            ),
            Item::Block(_) => {}
            Item::Custom(c) if in_block => self.error(
                c.name.span(),
                "custom operators are declared in the model body, not in a block",
            ),
            Item::Custom(_) => {}
            Item::Input { name, .. } if in_block => {
                self.error(
                    name.span(),
                    "inputs are declared in the model body; pass tensors to a block as parameters",
                );
                self.poison(name);
            }
            Item::Output { name, .. } if in_block => self.error(
                name.span(),
                "outputs are declared in the model body; a block ends with `return expr;`",
            ),
            Item::Return { kw, .. } if !in_block => {
                self.error(*kw, "`return` ends a block; a model declares `output`s")
            }
            Item::Return { kw, exprs, tuple } => {
                if self.scope().returned.is_some() {
                    self.error(*kw, "a block returns once");
                    return;
                }
                let ids = exprs
                    .iter()
                    .map(|e| (self.tensor_expr(e), e.span()))
                    .collect();
                self.scope().returned = Some((ids, *tuple));
            }
            Item::Flow { doc, pattern, flow } => {
                self.with_doc(doc, |cx| cx.flow_item(pattern, flow))
            }
            Item::Input { doc, name, ty } => {
                let Some(ty) = self.tensor_type(ty, false) else {
                    self.poison(name);
                    return;
                };
                let id = self.new_tensor(name.to_string(), ty, TensorKind::Input, doc, None);
                self.graph.inputs.push(id);
                self.declared.push((id, name.span(), "input"));
                self.bind(name, id);
            }
            Item::Weight {
                doc,
                name,
                ty,
                init,
            } => self.weight_item(doc, name, ty, init),
            Item::Let { doc, pattern, expr } => self.with_doc(doc, |cx| cx.let_item(pattern, expr)),
            Item::Output { doc, name, expr } => self.output(doc, name, expr.as_ref()),
        }
    }

    fn weight_item(&mut self, doc: &str, name: &Ident, ty: &TypeExpr, init: &Expr) {
        let Some(ty) = self.tensor_type(ty, true) else {
            self.poison(name);
            return;
        };
        let shape: Vec<usize> = ty.shape.0.iter().map(|d| d.fixed().unwrap_or(1)).collect();
        let init = self.subst(init);
        let data = match (&init, ty.dtype) {
            (Expr::Call(c), dtype) if c.func == "load" => self
                .load_call(c, &shape, &name.to_string())
                .and_then(|v| match dtype {
                    DType::I64 if v.iter().all(|x| x.fract() == 0.0) => {
                        Ok(Data::I64(v.into_iter().map(|x| x as i64).collect()))
                    }
                    DType::I64 => Err((
                        c.func.span(),
                        format!("`{name}` is i64 but the file holds non-integer values"),
                    )),
                    DType::F32 => Ok(Data::F32(v)),
                    other => Err((
                        c.func.span(),
                        format!("`load` reads f32 and i64 weights; declare `{name}` f32 and Cast it to {other}"),
                    )),
                }),
            (_, DType::I64) => init::evaluate_i64(&init, &shape).map(Data::I64),
            (_, DType::F32) => init::evaluate(&init, &shape).map(Data::F32),
            (_, dtype) => init::evaluate_typed(&init, &shape, dtype)
                .map(|values| Data::Typed { dtype, values }),
        };
        match data {
            Ok(data) => {
                let full = format!("{}{name}", self.prefix());
                let id = self.new_tensor(full, ty, TensorKind::Weight, doc, Some(data));
                self.graph.weights.push(id);
                self.declared.push((id, name.span(), "weight"));
                self.bind(name, id);
            }
            Err((span, msg)) => {
                self.error(span, msg);
                self.poison(name);
            }
        }
    }

    fn let_item(&mut self, pattern: &Pattern, expr: &Expr) {
        match pattern {
            Pattern::One(name) => {
                self.hint = Some(name.to_string());
                let id = self.tensor_expr(expr);
                self.hint = None;
                match id {
                    Some(id) => {
                        self.name_tensor(id, name);
                        self.bind(name, id);
                    }
                    None => self.poison(name),
                }
            }
            Pattern::Tuple(names, span) => {
                let poison_all = |cx: &mut Self| {
                    for n in names.iter().flatten() {
                        cx.poison(n);
                    }
                };
                let Expr::Call(call) = expr else {
                    self.error(
                        expr.span(),
                        "a tuple `let` needs an operator call with several outputs",
                    );
                    poison_all(self);
                    return;
                };
                let Some(outs) = self.call(call) else {
                    poison_all(self);
                    return;
                };
                if outs.len() != names.len() {
                    self.error(
                        *span,
                        format!(
                            "`{}` has {} outputs, the pattern names {}",
                            call.func,
                            outs.len(),
                            names.len()
                        ),
                    );
                    poison_all(self);
                    return;
                }
                self.bind_outputs(outs, names.iter().map(Option::as_ref).collect());
            }
        }
    }

    /// Names and binds each output that has a name in a tuple pattern.
    fn bind_outputs(&mut self, outs: Vec<TensorId>, names: Vec<Option<&Ident>>) {
        for (id, name) in outs.into_iter().zip(names) {
            if let Some(name) = name {
                self.name_tensor(id, name);
                self.bind(name, id);
            }
        }
    }

    /// Runs `f`, then gives the nodes it added that have no doc string `doc`.
    fn with_doc(&mut self, doc: &str, f: impl FnOnce(&mut Self)) {
        let first = self.graph.nodes.len();
        f(self);
        for node in &mut self.graph.nodes[first..] {
            if node.doc.is_empty() {
                node.doc = doc.to_string();
            }
        }
    }

    fn output(&mut self, doc: &str, name: &Ident, expr: Option<&Expr>) {
        self.output_declared = true;
        let id = match expr {
            Some(expr) => {
                self.hint = Some(name.to_string());
                let id = self.tensor_expr(expr);
                self.hint = None;
                let Some(id) = id else {
                    self.poison(name);
                    return;
                };
                if !self.anonymous.contains(&id) {
                    let existing = self.graph.tensors[id].name.clone();
                    self.error(
                        expr.span(),
                        format!(
                            "`{existing}` already names this tensor: write `output {existing};` to make it an output, or `output {name} = Identity({existing});` for a copy"
                        ),
                    );
                    return;
                }
                self.name_tensor(id, name);
                self.bind(name, id);
                id
            }
            None => match self.lookup(name) {
                Some(id) => id,
                None => return,
            },
        };
        if self.graph.tensors[id].kind != TensorKind::Value {
            self.error(
                name.span(),
                format!(
                    "`{name}` is a model input or weight, not a computed tensor: write `output y = Identity({name});`"
                ),
            );
            return;
        }
        if self.graph.outputs.contains(&id) {
            self.error(name.span(), format!("`{name}` is already an output"));
            return;
        }
        if !doc.is_empty() {
            self.graph.tensors[id].doc = doc.to_string();
        }
        self.graph.outputs.push(id);
    }

    fn new_tensor(
        &mut self,
        name: String,
        ty: TensorType,
        kind: TensorKind,
        doc: &str,
        value: Option<Data>,
    ) -> TensorId {
        self.graph.tensors.push(Tensor {
            name,
            ty,
            kind,
            doc: doc.to_string(),
            value,
        });
        self.graph.tensors.len() - 1
    }

    /// Adds a weight (an initializer) with a full name.
    pub(crate) fn add_weight(&mut self, name: String, shape: &[usize], data: Data) -> TensorId {
        let dtype = data.dtype();
        let ty = TensorType {
            dtype,
            shape: Shape::fixed(shape),
        };
        let id = self.new_tensor(name, ty, TensorKind::Weight, "", Some(data));
        self.graph.weights.push(id);
        id
    }

    fn name_tensor(&mut self, id: TensorId, name: &Ident) {
        if self.anonymous.remove(&id) {
            self.graph.tensors[id].name = format!("{}{name}", self.prefix());
        }
    }

    fn bind(&mut self, name: &Ident, id: TensorId) {
        let key = name.to_string();
        if key == "arena" || key.starts_with("__") {
            self.error(
                name.span(),
                format!("`{key}` is reserved for the generated forward pass: choose another name"),
            );
            self.poison(name);
            return;
        }
        if let Some((_, first)) = self.visible(&key) {
            let mut e = syn::Error::new(
                name.span(),
                format!("`{key}` is defined twice: every name in a model is defined once"),
            );
            e.combine(syn::Error::new(
                first,
                format!("`{key}` is first defined here"),
            ));
            self.errors.push(e);
            return;
        }
        self.scope().names.insert(key, (Some(id), name.span()));
    }

    /// Records a name whose definition failed, so its uses stay quiet.
    fn poison(&mut self, name: &Ident) {
        self.scope()
            .names
            .entry(name.to_string())
            .or_insert((None, name.span()));
    }

    /// A name as seen from the current scope: its own names, then, through
    /// control-flow bodies, those of the enclosing scopes.
    fn visible(&self, key: &str) -> Option<(Option<TensorId>, Span)> {
        for scope in self.scopes.iter().rev() {
            if let Some(&found) = scope.names.get(key) {
                return Some(found);
            }
            if !scope.transparent {
                break;
            }
        }
        None
    }

    fn lookup(&mut self, name: &Ident) -> Option<TensorId> {
        let key = name.to_string();
        if let Some((id, _)) = self.visible(&key) {
            return id;
        }
        let scope = self.scopes.last().expect("the model scope");
        let known: Vec<&str> = scope.names.keys().map(String::as_str).collect();
        let hint = suggest::did_you_mean(&key, &known)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        let where_ = if scope.transparent {
            "this body or the scopes around it"
        } else if self.scopes.len() > 1 {
            "this block (blocks see their parameters and their own names)"
        } else {
            "this model"
        };
        self.error(
            name.span(),
            format!("cannot find `{key}` in {where_}{hint}"),
        );
        None
    }

    /// Replaces the block's value parameters inside an expression by their values.
    pub(crate) fn subst(&self, expr: &Expr) -> Expr {
        let values = &self.scopes.last().expect("the model scope").values;
        if values.is_empty() {
            return expr.clone();
        }
        subst_in(expr, values)
    }

    fn tensor_type(&mut self, ty: &TypeExpr, weight: bool) -> Option<TensorType> {
        let name = ty.dtype.to_string();
        let dtype = DType::from_name(&name);
        if dtype.is_none() {
            let all: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
            let hint = suggest::did_you_mean(&name, &all)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            self.error(
                ty.dtype.span(),
                format!(
                    "unknown dtype `{name}`: {hint}expected one of {}",
                    all.join(", ")
                ),
            );
        }
        let mut dims = Vec::new();
        let mut ok = dtype.is_some();
        for d in &ty.dims {
            match d {
                DimExpr::Fixed(lit) => match lit.base10_parse::<usize>() {
                    Ok(n) if n > 0 && n <= MAX_DIM => dims.push(Dim::Fixed(n)),
                    _ => {
                        ok = false;
                        self.error(
                            lit.span(),
                            format!("a dimension must be an integer in 1..={MAX_DIM}"),
                        );
                    }
                },
                DimExpr::Sym(id) => match self.subst(&Expr::Name(id.clone())) {
                    Expr::Int(n, _) if n > 0 && n as u64 <= MAX_DIM as u64 => {
                        dims.push(Dim::Fixed(n as usize))
                    }
                    Expr::Name(_) if weight => {
                        ok = false;
                        self.error(
                            id.span(),
                            format!("a weight needs fixed dimensions; `{id}` is symbolic"),
                        );
                    }
                    Expr::Name(_) => dims.push(Dim::Sym(id.to_string())),
                    other => {
                        ok = false;
                        self.error(
                            id.span(),
                            format!(
                                "the dimension `{id}` is {}, not a positive integer",
                                other.describe()
                            ),
                        );
                    }
                },
            }
        }
        let shape = Shape(dims);
        if ok && self.device_numel(&shape).is_none() {
            ok = false;
            self.error(
                ty.bracket,
                format!("{shape} has more than {MAX_DIM} elements on the device"),
            );
        }
        ok.then(|| TensorType {
            dtype: dtype.expect("checked above"),
            shape,
        })
    }

    /// Elements of a shape on the device, if at most [`MAX_DIM`].
    fn device_numel(&self, shape: &Shape) -> Option<usize> {
        checked_numel(shape.0.iter().map(|d| match d {
            Dim::Fixed(n) => *n,
            Dim::Sym(s) => self.graph.device_dims.get(s).copied().unwrap_or(1),
        }))
    }

    /// An expression that must denote one tensor.
    pub(crate) fn tensor_expr(&mut self, expr: &Expr) -> Option<TensorId> {
        match expr {
            Expr::Name(name) => {
                if let Expr::Name(_) = self.subst(expr) {
                    self.lookup(name)
                } else {
                    self.error(
                        name.span(),
                        format!("`{name}` is a value parameter of this block, not a tensor"),
                    );
                    None
                }
            }
            Expr::Call(call) => {
                let outs = self.call(call)?;
                Some(outs[0])
            }
            other => {
                self.error(
                    other.span(),
                    format!(
                        "expected a tensor (a name or an operator call), found {}",
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    /// A call: an operator, layer sugar or block. Returns every output.
    fn call(&mut self, call: &Call) -> Option<Vec<TensorId>> {
        let hint = self.hint.take();
        let name = call.func.to_string();
        if let Some(op) = ops::lookup(&name) {
            return self.op_call(call, op);
        }
        if let Some((_, op_type)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
            return self.op_call(call, ops::lookup(op_type).expect("aliases name real ops"));
        }
        if layers::is_layer(&name) {
            let call = self.subst_call(call);
            return layers::expand(self, &call, hint);
        }
        if let Some(&block) = self.blocks.get(&name) {
            return self.instantiate(block, call, hint).map(|id| vec![id]);
        }
        if let Some(&def) = self.customs.get(&name) {
            return self.custom_call(def, call);
        }
        if let Some(how) = match name.as_str() {
            "If" => Some("if cond { ... } else { ... }"),
            "Loop" => Some("for i in 0..n with (h = h0) { ... }"),
            "Scan" => Some("for x_t in xs with (h = h0) { ... }"),
            _ => None,
        } {
            self.error(
                call.func.span(),
                format!("{name} is written as a statement: `let y = {how};`, the body ending with `return ...;`"),
            );
            return None;
        }
        let mut known: Vec<&str> = ops::REGISTRY.iter().map(|op| op.op_type).collect();
        known.extend(ALIASES.iter().map(|(a, _)| *a));
        known.extend(layers::LAYERS);
        let blocks: Vec<String> = self.blocks.keys().cloned().collect();
        known.extend(blocks.iter().map(String::as_str));
        let hint = suggest::did_you_mean(&name, &known)
            .or_else(|| layers::framework_alias(&name))
            .map(|s| format!(": did you mean `{s}`?"))
            .unwrap_or_else(|| {
                format!(
                    "; tinyonnx knows the ONNX operators {} and the layers {}",
                    ops::REGISTRY
                        .iter()
                        .map(|op| op.op_type)
                        .collect::<Vec<_>>()
                        .join(", "),
                    layers::LAYERS
                        .iter()
                        .chain(ALIASES.iter().map(|(a, _)| a))
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        self.error(call.func.span(), format!("unknown operator `{name}`{hint}"));
        // Still check the arguments, so mistakes inside are reported too.
        for arg in call.positional() {
            if matches!(arg, Expr::Call(_)) {
                self.tensor_expr(arg);
            }
        }
        None
    }

    fn subst_call(&self, call: &Call) -> Call {
        match self.subst(&Expr::Call(call.clone())) {
            Expr::Call(c) => c,
            _ => unreachable!("substitution keeps calls"),
        }
    }

    fn op_call(&mut self, call: &Call, op: &'static OpSchema) -> Option<Vec<TensorId>> {
        let call = &self.subst_call(call);
        let positional: Vec<&Expr> = call.positional().collect();
        let (min, max) = if op.variadic {
            (op.inputs.len(), usize::MAX)
        } else {
            (op.min_inputs(), op.inputs.len())
        };
        let mut ok = true;
        if op.since_opset > self.graph.opset {
            ok = false;
            self.error(
                call.func.span(),
                format!(
                    "{} needs opset {} or later; this model uses opset {}",
                    op.op_type, op.since_opset, self.graph.opset
                ),
            );
        }
        if positional.len() > max {
            ok = false;
            let plural = if max == 1 { "input" } else { "inputs" };
            self.error(
                positional[max].span(),
                format!(
                    "{} takes at most {max} {plural} ({}), got {}",
                    op.op_type,
                    op.input_names(),
                    positional.len()
                ),
            );
        } else if positional.len() < min {
            ok = false;
            let plural = if min == 1 { "input" } else { "inputs" };
            self.error(
                call.close,
                format!(
                    "{} needs {}{min} {plural} ({}), got {}",
                    op.op_type,
                    if min == max { "" } else { "at least " },
                    op.input_names(),
                    positional.len()
                ),
            );
        }
        // Tensor arguments first (they may add nodes), then literals, named after the node.
        let mut inputs: Vec<Option<TensorId>> = Vec::with_capacity(positional.len());
        for (i, e) in positional.iter().enumerate() {
            inputs.push(match e {
                Expr::Int(..) | Expr::Float(..) | Expr::List(..) => None,
                Expr::Omit(span) => {
                    if !op.inputs.get(i).is_some_and(|s| s.optional) {
                        ok = false;
                        let name = op.inputs.get(i).map_or("this input", |s| s.name);
                        self.error(
                            *span,
                            format!(
                                "{} input {name} is required and cannot be omitted with `_`",
                                op.op_type
                            ),
                        );
                    }
                    None
                }
                e => self.tensor_expr(e),
            });
        }
        let node_name = format!("{}{}_{}", self.prefix(), op.op_type, self.graph.nodes.len());
        // A literal in an input of the operator's element type takes the dtype of the
        // tensors given for those inputs (`Mul(x_i32, 3)`, `Add(x_f32, 1)`).
        let t_dtype = inputs.iter().enumerate().find_map(|(i, t)| {
            let t = (*t)?;
            (op.input_spec(i)?.ty == InTy::T).then(|| self.graph.tensors[t].ty.dtype)
        });
        for (i, e) in positional.iter().enumerate() {
            if let Expr::Int(..) | Expr::Float(..) | Expr::List(..) = e
                && let Some(spec) = op.input_spec(i)
            {
                let dtype = t_dtype.filter(|_| spec.ty == InTy::T);
                inputs[i] = self.literal(e, format!("{node_name}.{}", spec.name), dtype);
            }
        }
        ok &= inputs
            .iter()
            .zip(&positional)
            .all(|(t, e)| t.is_some() || matches!(e, Expr::Omit(_)));
        let attrs = self.attributes(call, op);
        let attrs = match attrs {
            Some(a) if ok => a,
            _ => return None,
        };
        let spans: Vec<Span> = positional.iter().map(|e| e.span()).collect();
        let attr_span = |name: &str| {
            call.named()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.span())
        };
        let spans_of = |at: At| match at {
            At::Input(i) => spans.get(i).copied().unwrap_or(call.func.span()),
            At::Attr(name) => attr_span(name).unwrap_or(call.func.span()),
            At::Op => call.func.span(),
        };
        self.build(op, node_name, inputs, attrs, &spans_of)
    }

    /// A literal positional argument as a constant initializer of `dtype`, or without
    /// one: integers are i64, anything with a float is f32.
    fn literal(&mut self, e: &Expr, name: String, dtype: Option<DType>) -> Option<TensorId> {
        let mut shape = Vec::new();
        let mut probe = e;
        while let Expr::List(items, _) = probe {
            shape.push(items.len());
            match items.first() {
                Some(first) => probe = first,
                None => break,
            }
        }
        let data = match dtype {
            Some(DType::F32) => init::evaluate(e, &shape).map(Data::F32),
            Some(DType::I64) => init::evaluate_i64(e, &shape).map(Data::I64),
            Some(dtype) => {
                init::evaluate_typed(e, &shape, dtype).map(|values| Data::Typed { dtype, values })
            }
            None if contains_float(e) => init::evaluate(e, &shape).map(Data::F32),
            None => init::evaluate_i64(e, &shape).map(Data::I64),
        };
        match data {
            Ok(d) => Some(self.add_weight(name, &shape, d)),
            Err((span, msg)) => {
                self.error(span, msg);
                None
            }
        }
    }

    /// Checks dtypes, infers, folds, and adds a node; errors go where `span_of` says.
    pub(crate) fn build(
        &mut self,
        op: &'static OpSchema,
        node_name: String,
        mut inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        span_of: &dyn Fn(At) -> Span,
    ) -> Option<Vec<TensorId>> {
        if !self.check_dtypes(op, &inputs, span_of) {
            return None;
        }
        let n_in = if op.variadic {
            inputs.len()
        } else {
            op.inputs.len()
        };
        inputs.resize(n_in.max(inputs.len()), None);
        let types: Vec<Option<TensorType>> = inputs
            .iter()
            .map(|i| i.map(|id| self.graph.tensors[id].ty.clone()))
            .collect();
        let consts: Vec<Option<&Data>> = inputs
            .iter()
            .map(|i| i.and_then(|id| self.graph.tensors[id].value.as_ref()))
            .collect();
        let infer_cx = InferCtx {
            op,
            inputs: types.iter().map(Option::as_ref).collect(),
            consts,
            attrs: &attrs,
            opset: self.graph.opset,
        };
        let inferred = (op.infer)(&infer_cx).and_then(|t| {
            let values = match op.fold {
                Some(fold) => Some(fold(&infer_cx)?),
                None => None,
            };
            Ok((t, values))
        });
        let (out_types, values) = match inferred {
            Ok(v) => v,
            Err(e) => {
                let mut err = syn::Error::new(span_of(e.at), e.msg);
                if let Some((at, note)) = e.note {
                    err.combine(syn::Error::new(span_of(at), format!("note: {note}")));
                }
                self.errors.push(err);
                return None;
            }
        };
        if let Some(t) = out_types
            .iter()
            .find(|t| self.device_numel(&t.shape).is_none())
        {
            self.error(
                span_of(At::Op),
                format!(
                    "the output of {} would be {}, more than {MAX_DIM} elements on the device",
                    op.op_type, t.shape
                ),
            );
            return None;
        }
        while inputs.last().is_some_and(Option::is_none) {
            inputs.pop();
        }
        let mut values = values.map(|v| v.into_iter());
        let outputs: Vec<TensorId> = out_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                let value = values.as_mut().and_then(Iterator::next);
                // Operators with a variable number of outputs (Split) name them by index.
                let out_name = if op.output_names.is_empty() {
                    format!("output_{i}")
                } else {
                    op.output_name(i).to_string()
                };
                let id = self.new_tensor(
                    format!("{node_name}.{out_name}"),
                    ty,
                    TensorKind::Value,
                    "",
                    value,
                );
                self.anonymous.insert(id);
                id
            })
            .collect();
        self.graph.nodes.push(Node {
            name: node_name,
            doc: String::new(),
            instance: self.instance,
            custom: None,
            op,
            inputs,
            outputs: outputs.clone(),
            attrs,
            control: None,
        });
        Some(outputs)
    }

    fn check_dtypes(
        &mut self,
        op: &OpSchema,
        inputs: &[Option<TensorId>],
        span_of: &dyn Fn(At) -> Span,
    ) -> bool {
        let mut first: Option<(usize, DType)> = None;
        for (i, id) in inputs.iter().enumerate() {
            let Some(id) = id else { continue };
            let Some(spec) = op.input_spec(i) else {
                continue;
            };
            let t = &self.graph.tensors[*id];
            let dtype = t.ty.dtype;
            let span = span_of(At::Input(i));
            match spec.ty {
                InTy::I64Const => {
                    if dtype != DType::I64 {
                        self.error(
                            span,
                            format!("{} expects {} as i64, got {dtype}", op.op_type, spec.name),
                        );
                        return false;
                    }
                    if t.value.is_none() {
                        self.error(
                            span,
                            format!(
                                "{} needs {} known at compile time: write a literal list such as [1, -1] or use an i64 weight",
                                op.op_type, spec.name
                            ),
                        );
                        return false;
                    }
                }
                InTy::Any => {}
                InTy::Bool => {
                    if dtype != DType::Bool {
                        self.error(
                            span,
                            format!(
                                "{} expects {} as bool, got {dtype} (compare it first, e.g. Greater(x, zero), or Cast(x, to = bool))",
                                op.op_type, spec.name
                            ),
                        );
                        return false;
                    }
                }
                InTy::T => {
                    if !op.dtypes.contains(&dtype) {
                        let allowed: Vec<&str> = op.dtypes.iter().map(|d| d.name()).collect();
                        self.error(
                            span,
                            format!(
                                "{} does not accept {dtype} (input {}); it accepts {}",
                                op.op_type,
                                spec.name,
                                allowed.join(", ")
                            ),
                        );
                        return false;
                    }
                    if let Some(&(_, since)) = op.dtype_since.iter().find(|(d, _)| *d == dtype)
                        && since > self.graph.opset
                    {
                        self.error(
                            span,
                            format!(
                                "{} accepts {dtype} from opset {since}; this model is opset {}",
                                op.op_type, self.graph.opset
                            ),
                        );
                        return false;
                    }
                    match first {
                        None => first = Some((i, dtype)),
                        Some((j, d)) if d != dtype => {
                            let other = op.input_spec(j).map_or("input", |s| s.name);
                            self.error(
                                span,
                                format!(
                                    "{} needs inputs of one dtype: {other} is {d} but {} is {dtype}",
                                    op.op_type, spec.name
                                ),
                            );
                            return false;
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        true
    }

    fn attributes(&mut self, call: &Call, op: &'static OpSchema) -> Option<Attrs> {
        let mut explicit = Vec::new();
        let mut ok = true;
        let mut seen: HashMap<String, Span> = HashMap::new();
        for (name, value) in call.named() {
            let key = name.to_string();
            let Some(spec) = op.attr(&key) else {
                ok = false;
                let known: Vec<&str> = op.attrs.iter().map(|a| a.name).collect();
                let msg = if known.is_empty() {
                    format!("{} has no attributes, found `{key}`", op.op_type)
                } else {
                    let hint = suggest::did_you_mean(&key, &known)
                        .map(|s| format!("did you mean `{s}`? "))
                        .unwrap_or_default();
                    format!(
                        "{} has no attribute `{key}`: {hint}its attributes are {}",
                        op.op_type,
                        known.join(", ")
                    )
                };
                self.error(name.span(), msg);
                continue;
            };
            if seen.insert(key.clone(), name.span()).is_some() {
                ok = false;
                self.error(name.span(), format!("attribute `{key}` is given twice"));
                continue;
            }
            if spec.since > self.graph.opset {
                ok = false;
                self.error(
                    name.span(),
                    format!(
                        "{} has `{key}` from opset {} (this model uses opset {})",
                        op.op_type, spec.since, self.graph.opset
                    ),
                );
                continue;
            }
            match attr_value(spec, value) {
                Ok(v) => explicit.push((spec.name, v)),
                Err((span, msg)) => {
                    ok = false;
                    self.error(span, format!("attribute `{key}` of {}: {msg}", op.op_type));
                }
            }
        }
        let missing: Vec<&str> = op
            .attrs
            .iter()
            .filter(|s| matches!(s.default, AttrDefault::Required))
            .filter(|s| !explicit.iter().any(|(n, _)| n == &s.name))
            .map(|s| s.name)
            .collect();
        for m in missing {
            ok = false;
            self.error(
                call.func.span(),
                format!("{} needs the attribute `{m}`", op.op_type),
            );
        }
        ok.then(|| ops::attrs_with_defaults(op, explicit))
    }

    /// `load("file", name = "tensor")`: the values of a tensor of `shape` from a file.
    fn load_call(
        &mut self,
        call: &Call,
        shape: &[usize],
        what: &str,
    ) -> Result<Vec<f32>, (Span, String)> {
        let mut path = None;
        let mut name = None;
        for arg in &call.args {
            match arg {
                Arg::Pos(Expr::Str(s)) if path.is_none() => path = Some(s.clone()),
                Arg::Named(n, Expr::Str(s)) if n == "name" => name = Some(s.value()),
                Arg::Pos(e) | Arg::Named(_, e) => {
                    return Err((
                        e.span(),
                        "`load` takes a file path and an optional `name = \"tensor\"`, as in load(\"weights.safetensors\", name = \"fc1.weight\")".to_string(),
                    ));
                }
            }
        }
        let Some(path) = path else {
            return Err((
                call.close,
                "`load` needs a file path, as in load(\"fc1_weight.npy\")".to_string(),
            ));
        };
        self.load_checked(&path, name.as_deref(), shape, what)
    }

    /// Loads a tensor and checks its shape; errors point at the path literal.
    pub(crate) fn load_checked(
        &mut self,
        path: &syn::LitStr,
        name: Option<&str>,
        shape: &[usize],
        what: &str,
    ) -> Result<Vec<f32>, (Span, String)> {
        let loaded = self
            .files
            .load_expecting(&path.value(), name, shape.iter().product())
            .map_err(|e| (path.span(), e))?;
        if loaded.shape != shape {
            let tensor = name.unwrap_or("the array");
            let hint = if shape.len() == 2
                && loaded.shape.len() == 2
                && loaded.shape[0] == shape[1]
                && loaded.shape[1] == shape[0]
            {
                " (a PyTorch Linear weight is [out, in]: declare it so and use transB = 1, or linear(..., layout = \"pytorch\"))"
            } else {
                ""
            };
            return Err((
                path.span(),
                format!(
                    "`{tensor}` in {} is {:?}, but `{what}` needs {shape:?}{hint}",
                    path.value(),
                    loaded.shape
                ),
            ));
        }
        Ok(loaded.values)
    }

    /// A name for a layer or block instance: `name = "..."`, else the `let` it is bound
    /// to, else `<layer>_<index>`; with the scope's prefix, and unique.
    pub(crate) fn instance_name(
        &mut self,
        layer: &str,
        explicit: Option<(String, Span)>,
        hint: Option<String>,
        span: Span,
    ) -> Option<String> {
        let counter = self.layer_counts.entry(layer.to_string()).or_default();
        let index = *counter;
        *counter += 1;
        let local = match explicit {
            Some((n, _)) => n,
            None => hint.unwrap_or_else(|| format!("{layer}_{index}")),
        };
        let full = format!("{}{local}", self.prefix());
        let taken = self
            .graph
            .tensors
            .iter()
            .any(|t| t.name.starts_with(&format!("{full}.")))
            || self.graph.nodes.iter().any(|n| n.name == full);
        if taken {
            self.error(
                span,
                format!("a layer named `{full}` already exists: give this one another `name`"),
            );
            return None;
        }
        Some(full)
    }

    /// The index of the next instance of a layer, for default seeds.
    pub(crate) fn layer_index(&self, layer: &str) -> usize {
        self.layer_counts.get(layer).copied().unwrap_or(0)
    }

    fn instantiate(
        &mut self,
        block: &'m Block,
        call: &Call,
        hint: Option<String>,
    ) -> Option<TensorId> {
        if self.scopes.len() > MAX_BLOCK_DEPTH {
            self.error(
                call.func.span(),
                format!(
                    "block `{}` nests deeper than {MAX_BLOCK_DEPTH} levels: does it call itself?",
                    block.name
                ),
            );
            return None;
        }
        let call = self.subst_call(call);
        let explicit = call.named().find_map(|(n, e)| match e {
            Expr::Str(s) if n == "name" => Some((s.value(), s.span())),
            _ => None,
        });
        let mut scope = Scope::default();
        let mut ok = true;
        let positional: Vec<&Expr> = call.positional().collect();
        if positional.len() > block.params.len() {
            self.error(
                positional[block.params.len()].span(),
                format!(
                    "block `{}` takes {} parameters, got {}",
                    block.name,
                    block.params.len(),
                    positional.len()
                ),
            );
            return None;
        }
        for (name, _) in call.named() {
            if name != "name" && !block.params.iter().any(|(p, _)| p == name) {
                ok = false;
                let known: Vec<String> = block.params.iter().map(|(p, _)| p.to_string()).collect();
                self.error(
                    name.span(),
                    format!(
                        "block `{}` has no parameter `{name}`; its parameters are {}",
                        block.name,
                        known.join(", ")
                    ),
                );
            }
        }
        for (k, (param, default)) in block.params.iter().enumerate() {
            let arg = positional
                .get(k)
                .copied()
                .or_else(|| call.named().find(|(n, _)| *n == param).map(|(_, e)| e))
                .or(default.as_ref());
            let Some(arg) = arg else {
                ok = false;
                self.error(
                    call.close,
                    format!("block `{}` needs the parameter `{param}`", block.name),
                );
                continue;
            };
            match arg {
                Expr::Name(_) | Expr::Call(_) => match self.tensor_expr(arg) {
                    Some(id) => {
                        scope
                            .names
                            .insert(param.to_string(), (Some(id), param.span()));
                    }
                    None => ok = false,
                },
                value => {
                    scope.values.insert(param.to_string(), value.clone());
                }
            }
        }
        if !ok {
            return None;
        }
        let full = self.instance_name(&block.name.to_string(), explicit, hint, call.func.span())?;
        scope.prefix = format!("{full}.");
        // A function's nodes are tagged with its instance (blocks used inside it inline
        // into its body).
        let outer = self.instance;
        if block.function && outer.is_none() && self.body_depth == 0 {
            self.graph.instances.push(crate::ir::Instance {
                block: block.name.to_string(),
                prefix: scope.prefix.clone(),
                doc: block.doc.clone(),
            });
            self.instance = Some(self.graph.instances.len() - 1);
        }
        self.scopes.push(scope);
        for item in &block.items {
            self.item(item);
        }
        self.instance = outer;
        let scope = self.scopes.pop().expect("pushed above");
        match scope.returned {
            Some((ids, None)) if ids.len() == 1 => ids[0].0,
            Some((_, tuple)) => {
                self.error(
                    tuple.unwrap_or(block.close),
                    format!("block `{}` returns one tensor: `return expr;`", block.name),
                );
                None
            }
            None => {
                self.error(
                    block.close,
                    format!("block `{}` does not end with `return expr;`", block.name),
                );
                None
            }
        }
    }

    /// Checks a `custom` declaration and records it.
    fn custom_def(&mut self, c: &'m CustomDef) {
        let key = c.name.to_string();
        if ops::lookup(&key).is_some() || layers::is_layer(&key) || self.customs.contains_key(&key)
        {
            self.error(
                c.name.span(),
                format!("custom operator `{key}` has the name of an operator, layer or another custom operator"),
            );
            return;
        }
        let mut ok = true;
        match &c.domain {
            None => {
                ok = false;
                self.error(c.close, format!("custom operator `{key}` needs `domain = \"com.example\";` (a domain other than the default)"));
            }
            Some(d) if d.value().is_empty() || d.value() == "ai.onnx" => {
                ok = false;
                self.error(
                    d.span(),
                    "a custom operator's domain cannot be the default ONNX domain",
                );
            }
            Some(_) => {}
        }
        if c.kernel.is_none() {
            ok = false;
            self.error(c.close, format!("custom operator `{key}` needs `kernel = path::Type;`, a type implementing tinyonnx::CustomKernel"));
        }
        if let Some(v) = &c.version
            && !v.base10_parse::<i64>().is_ok_and(|v| v >= 1)
        {
            ok = false;
            self.error(v.span(), "a custom domain's version is a positive integer");
        }
        for out in &c.outputs {
            if !c.rules.iter().any(|(o, _)| o == out) {
                ok = false;
                self.error(
                    out.span(),
                    format!(
                        "output `{out}` needs a type: `{out} = <input>;` or `{out}: f32[...];`"
                    ),
                );
            }
        }
        for (o, rule) in &c.rules {
            if !c.outputs.contains(o) {
                ok = false;
                self.error(o.span(), format!("`{o}` is not an output of `{key}`"));
            }
            if let OutputRule::SameAs(i) = rule
                && !c.inputs.contains(i)
            {
                ok = false;
                self.error(i.span(), format!("`{i}` is not an input of `{key}`"));
            }
        }
        let version = |d: &CustomDef| {
            d.version
                .as_ref()
                .and_then(|v| v.base10_parse::<i64>().ok())
                .unwrap_or(1)
        };
        if let Some(domain) = &c.domain
            && let Some(other) = self.customs.values().find(|o| {
                o.domain
                    .as_ref()
                    .is_some_and(|d| d.value() == domain.value())
                    && version(o) != version(c)
            })
        {
            ok = false;
            self.error(
                domain.span(),
                format!(
                    "domain \"{}\" is imported once: `{}` uses version {}, `{key}` version {}",
                    domain.value(),
                    other.name,
                    version(other),
                    version(c)
                ),
            );
        }
        if ok {
            self.customs.insert(key, c);
        }
    }

    /// A call of a custom operator: tensor arguments, outputs typed by its rules.
    fn custom_call(&mut self, def: &CustomDef, call: &Call) -> Option<Vec<TensorId>> {
        let key = def.name.to_string();
        if let Some((name, _)) = call.named().next() {
            self.error(
                name.span(),
                format!("custom operator `{key}` takes no attributes"),
            );
            return None;
        }
        let positional: Vec<&Expr> = call.positional().collect();
        if positional.len() != def.inputs.len() {
            self.error(
                call.func.span(),
                format!(
                    "`{key}` takes {} inputs, got {}",
                    def.inputs.len(),
                    positional.len()
                ),
            );
            return None;
        }
        let mut inputs = Vec::new();
        for e in &positional {
            inputs.push(Some(self.tensor_expr(e)?));
        }
        let mut rules = Vec::new();
        for out in &def.outputs {
            let (_, rule) = def
                .rules
                .iter()
                .find(|(o, _)| o == out)
                .expect("checked in custom_def");
            let ty = match rule {
                OutputRule::SameAs(i) => {
                    let k = def
                        .inputs
                        .iter()
                        .position(|x| x == i)
                        .expect("checked in custom_def");
                    self.graph.tensors[inputs[k].expect("given")].ty.clone()
                }
                OutputRule::Type(t) => self.tensor_type(t, false)?,
            };
            rules.push(ty);
        }
        let node_name = format!("{}{}_{}", self.prefix(), key, self.graph.nodes.len());
        let attrs = Attrs {
            explicit: Vec::new(),
            defaults: vec![(
                "__types",
                AttrValue::Strs(rules.iter().map(ops::encode_type).collect()),
            )],
        };
        let span = call.func.span();
        let outputs = self.build(&ops::custom::CUSTOM, node_name, inputs, attrs, &|_| span)?;
        let node = self.graph.nodes.last_mut().expect("just built");
        node.custom = Some(crate::ir::CustomInfo {
            op_type: key,
            domain: def.domain.as_ref().expect("checked").value(),
            version: def
                .version
                .as_ref()
                .and_then(|v| v.base10_parse().ok())
                .unwrap_or(1),
        });
        Some(outputs)
    }
}

fn contains_float(e: &Expr) -> bool {
    match e {
        Expr::Float(..) => true,
        Expr::List(items, _) => items.iter().any(contains_float),
        _ => false,
    }
}

fn subst_in(expr: &Expr, values: &HashMap<String, Expr>) -> Expr {
    match expr {
        Expr::Name(n) => values
            .get(&n.to_string())
            .cloned()
            .unwrap_or_else(|| expr.clone()),
        Expr::List(items, span) => {
            Expr::List(items.iter().map(|e| subst_in(e, values)).collect(), *span)
        }
        Expr::Call(c) => Expr::Call(Call {
            func: c.func.clone(),
            args: c
                .args
                .iter()
                .map(|a| match a {
                    Arg::Pos(e) => Arg::Pos(subst_in(e, values)),
                    Arg::Named(n, e) => Arg::Named(n.clone(), subst_in(e, values)),
                })
                .collect(),
            close: c.close,
        }),
        other => other.clone(),
    }
}

/// Converts a DSL expression to an attribute value of the kind the spec wants.
pub(crate) fn attr_value(spec: &AttrSpec, value: &Expr) -> Result<AttrValue, (Span, String)> {
    let wrong = |e: &Expr| {
        (
            e.span(),
            format!("expected {}, found {}", spec.kind.describe(), e.describe()),
        )
    };
    let float = |e: &Expr| match e {
        Expr::Int(v, _) => Ok(*v as f32),
        Expr::Float(v, _) => Ok(*v as f32),
        other => Err(wrong(other)),
    };
    match (spec.kind, value) {
        (AttrKind::Int, Expr::Int(v, _)) => Ok(AttrValue::Int(*v)),
        (AttrKind::Int, Expr::Bool(b, _)) => Ok(AttrValue::Int(i64::from(*b))),
        // A dtype name stands for its `TensorProto.DataType` code (`Cast(x, to = i64)`).
        (AttrKind::Int, Expr::Name(id)) if DType::from_name(&id.to_string()).is_some() => {
            let d = DType::from_name(&id.to_string()).expect("checked by the guard");
            Ok(AttrValue::Int(i64::from(d.onnx_code())))
        }
        (AttrKind::Float, e) => float(e).map(AttrValue::Float),
        (AttrKind::Str, Expr::Str(s)) => Ok(AttrValue::Str(s.value())),
        (AttrKind::Ints, Expr::List(items, _)) => items
            .iter()
            .map(|e| match e {
                Expr::Int(v, _) => Ok(*v),
                other => Err(wrong(other)),
            })
            .collect::<Result<_, _>>()
            .map(AttrValue::Ints),
        (AttrKind::Floats, Expr::List(items, _)) => items
            .iter()
            .map(float)
            .collect::<Result<_, _>>()
            .map(AttrValue::Floats),
        (AttrKind::Strs, Expr::List(items, _)) => items
            .iter()
            .map(|e| match e {
                Expr::Str(s) => Ok(s.value()),
                other => Err(wrong(other)),
            })
            .collect::<Result<_, _>>()
            .map(AttrValue::Strs),
        (_, e) => Err(wrong(e)),
    }
}
