//! Names, arity, attributes, dtypes and shapes. Every error is collected with the span
//! of the token it is about; a failed sub-expression yields `None` and a failed
//! definition is poisoned, so the errors that follow from one mistake are not reported
//! again.

use std::collections::{BTreeMap, HashMap, HashSet};

use proc_macro2::Span;

use crate::ir::{Data, Graph, Optimize, TensorId, Winograd};
use crate::layers;
use crate::ops::{self, At, Attrs, OpSchema};
use crate::syntax::{Block, CustomDef, Expr, ModelDef};

mod blocks;
mod calls;
mod flow;
mod items;
mod names;
mod quantize;
mod sink;
mod types;

use sink::Sink;

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
    let mut cx = Checker::new(&model.name.to_string(), &model.doc);
    cx.settings(model);
    cx.collect_blocks(&model.items);
    for item in &model.items {
        cx.item(item);
    }
    if let Some((kw, value)) = cx.quantize_item
        && cx.error_count() == 0
    {
        cx.quantize(kw, value);
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
    cx.finish()
}

impl Checker<'_> {
    /// An empty model named `name`, at the default opset.
    pub(crate) fn new(name: &str, doc: &str) -> Self {
        Checker {
            sink: Sink::default(),
            graph: Graph {
                name: name.to_string(),
                doc: doc.to_string(),
                opset: ops::DEFAULT_OPSET,
                model_version: None,
                domain: None,
                metadata: Vec::new(),
                winograd: Winograd::Never,
                optimize: Optimize::Speed,
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
            quantize_item: None,
        }
    }

    /// The graph, its warnings and the files read, or every error reported.
    pub(crate) fn finish(self) -> Result<Checked, Vec<syn::Error>> {
        let Checker {
            sink,
            graph,
            declared,
            files,
            ..
        } = self;
        sink.finish()?;
        let readers = graph.all_consumers();
        let warnings = declared
            .iter()
            .filter(|(id, _, _)| readers[*id].is_empty())
            .map(|(id, span, what)| {
                let name = &graph.tensors[*id].name;
                (
                    *span,
                    format!("{what} `{name}` is declared but never used: remove it or use it"),
                )
            })
            .collect();
        Ok((graph, warnings, files.paths()))
    }

    /// Adds a model input (for the importer: the DSL's inputs go through `item`).
    pub(crate) fn add_input(&mut self, name: String, ty: crate::types::TensorType) -> TensorId {
        let id = self.new_tensor(name, ty, crate::ir::TensorKind::Input, "", None);
        self.graph.inputs.push(id);
        id
    }

    /// What every following message is about, until set again (`None`: nothing).
    pub(crate) fn set_context(&mut self, context: Option<String>) {
        self.sink.context = context;
    }

    /// What errors are prefixed with now.
    pub(crate) fn context(&self) -> Option<String> {
        self.sink.context.clone()
    }

    /// How many errors were reported so far.
    pub(crate) fn error_count(&self) -> usize {
        self.sink.len()
    }
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
    sink: Sink,
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
    /// The `quantize = ...;` setting, applied once every item is checked.
    quantize_item: Option<(&'m syn::Ident, &'m Expr)>,
}

impl layers::LayerCx for Checker<'_> {
    fn graph(&self) -> &Graph {
        &self.graph
    }
    fn error(&mut self, span: Span, msg: String) {
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
        Checker::load_checked(self, path, name, shape, what).map(|l| l.values)
    }
    fn tensor_expr(&mut self, expr: &Expr) -> Option<TensorId> {
        Checker::tensor_expr(self, expr)
    }
}

impl<'m> Checker<'m> {
    pub(crate) fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.sink.error(span, msg);
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
}

/// What the checker's unit tests share.
#[cfg(test)]
mod testing {
    /// The messages the checker reports for a model that parses, in order (none when it
    /// passes).
    pub(super) fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
        let model = crate::syntax::parse_model(tokens).expect("a test model parses");
        match super::check(&model) {
            Ok(_) => Vec::new(),
            // A combined error (a definition and the first one) counts as its parts.
            Err(errors) => errors
                .into_iter()
                .flatten()
                .map(|e| e.to_string())
                .collect(),
        }
    }
}
