//! Names, arity, attributes, dtypes and shapes. Every error is collected with the span
//! of the token it is about; a failed sub-expression yields `None` so the errors that
//! follow from it are not reported twice.

use std::collections::{BTreeMap, HashMap, HashSet};

use proc_macro2::Span;
use syn::Ident;

use crate::init;
use crate::ir::{Graph, Node, Tensor, TensorId, TensorKind};
use crate::ops::{self, At, AttrDefault, AttrKind, AttrSpec, AttrValue, Attrs, InferCtx, OpSchema};
use crate::suggest;
use crate::syntax::{Arg, Call, DimExpr, Expr, Item, ModelDef, TypeExpr};
use crate::types::{DType, Dim, Shape, TensorType};

/// Lower-case layer sugar that is exactly one ONNX operator.
const ALIASES: &[(&str, &str)] = &[
    ("relu", "Relu"),
    ("sigmoid", "Sigmoid"),
    ("tanh", "Tanh"),
    ("softmax", "Softmax"),
    ("matmul", "MatMul"),
    ("identity", "Identity"),
];

/// Layer sugar that creates weights.
const LAYERS: &[&str] = &["linear"];

/// Checks a parsed model and builds its graph, or returns every error found.
pub fn check(model: &ModelDef) -> Result<Graph, Vec<syn::Error>> {
    let mut cx = Checker {
        errors: Vec::new(),
        graph: Graph {
            name: model.name.to_string(),
            doc: model.doc.clone(),
            opset: ops::DEFAULT_OPSET,
            device_dims: BTreeMap::new(),
            tensors: Vec::new(),
            inputs: Vec::new(),
            weights: Vec::new(),
            nodes: Vec::new(),
            outputs: Vec::new(),
        },
        names: HashMap::new(),
        output_declared: false,
        anonymous: HashSet::new(),
        layer_counts: HashMap::new(),
    };
    cx.settings(model);
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
    if cx.errors.is_empty() {
        Ok(cx.graph)
    } else {
        Err(cx.errors)
    }
}

struct Checker {
    errors: Vec<syn::Error>,
    graph: Graph,
    /// Every name in scope: inputs, weights, let bindings, outputs. `None` marks a
    /// name whose definition failed: uses of it are not reported again.
    names: HashMap<String, (Option<TensorId>, Span)>,
    /// Whether any output item was seen, even one that failed.
    output_declared: bool,
    /// Tensors that still carry a generated name.
    anonymous: HashSet<TensorId>,
    /// How many of each layer sugar were used, for generated names and seeds.
    layer_counts: HashMap<&'static str, usize>,
}

impl Checker {
    fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    /// `opset` and `dim` items, read before the rest so their order does not matter.
    fn settings(&mut self, model: &ModelDef) {
        let mut opset_seen = false;
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
                Item::Dim { name, value } => {
                    let key = name.to_string();
                    if self.graph.device_dims.contains_key(&key) {
                        self.error(name.span(), format!("dimension `{key}` is set twice"));
                        continue;
                    }
                    match value.base10_parse::<usize>() {
                        Ok(v) if v > 0 => {
                            self.graph.device_dims.insert(key, v);
                        }
                        _ => self.error(
                            value.span(),
                            format!("the device value of `{key}` must be a positive integer"),
                        ),
                    }
                }
                _ => {}
            }
        }
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Opset { .. } | Item::Dim { .. } => {}
            Item::Input { doc, name, ty } => {
                let Some(ty) = self.tensor_type(ty, false) else {
                    self.poison(name);
                    return;
                };
                let id = self.new_tensor(name.to_string(), ty, TensorKind::Input, doc);
                self.graph.inputs.push(id);
                self.bind(name, id);
            }
            Item::Weight {
                doc,
                name,
                ty,
                init,
            } => {
                let Some(ty) = self.tensor_type(ty, true) else {
                    self.poison(name);
                    return;
                };
                let shape = ty.shape.fixed_numel().map(|_| {
                    ty.shape
                        .0
                        .iter()
                        .map(|d| d.fixed().unwrap_or(1))
                        .collect::<Vec<_>>()
                });
                let Some(shape) = shape else {
                    self.poison(name);
                    return;
                };
                match init::evaluate(init, &shape) {
                    Ok(values) => {
                        let id =
                            self.new_tensor(name.to_string(), ty, TensorKind::Weight(values), doc);
                        self.graph.weights.push(id);
                        self.bind(name, id);
                    }
                    Err((span, msg)) => {
                        self.error(span, msg);
                        self.poison(name);
                    }
                }
            }
            Item::Let { name, expr } => match self.tensor_expr(expr) {
                Some(id) => {
                    self.name_tensor(id, name);
                    self.bind(name, id);
                }
                None => self.poison(name),
            },
            Item::Output { doc, name, expr } => self.output(doc, name, expr.as_ref()),
        }
    }

    fn output(&mut self, doc: &str, name: &Ident, expr: Option<&Expr>) {
        self.output_declared = true;
        let id = match expr {
            Some(expr) => {
                let Some(id) = self.tensor_expr(expr) else {
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
        if !matches!(self.graph.tensors[id].kind, TensorKind::Value) {
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
    ) -> TensorId {
        self.graph.tensors.push(Tensor {
            name,
            ty,
            kind,
            doc: doc.to_string(),
        });
        self.graph.tensors.len() - 1
    }

    fn name_tensor(&mut self, id: TensorId, name: &Ident) {
        if self.anonymous.remove(&id) {
            self.graph.tensors[id].name = name.to_string();
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
        if let Some((_, first)) = self.names.get(&key) {
            let mut e = syn::Error::new(
                name.span(),
                format!("`{key}` is defined twice: every name in a model is defined once"),
            );
            e.combine(syn::Error::new(
                *first,
                format!("`{key}` is first defined here"),
            ));
            self.errors.push(e);
            return;
        }
        self.names.insert(key, (Some(id), name.span()));
    }

    /// Records a name whose definition failed, so its uses stay quiet.
    fn poison(&mut self, name: &Ident) {
        self.names
            .entry(name.to_string())
            .or_insert((None, name.span()));
    }

    fn lookup(&mut self, name: &Ident) -> Option<TensorId> {
        let key = name.to_string();
        if let Some((id, _)) = self.names.get(&key) {
            return *id;
        }
        let known: Vec<&str> = self.names.keys().map(String::as_str).collect();
        let hint = suggest::did_you_mean(&key, &known)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        self.error(
            name.span(),
            format!("cannot find `{key}` in this model{hint}"),
        );
        None
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
                    Ok(n) if n > 0 => dims.push(Dim::Fixed(n)),
                    _ => {
                        ok = false;
                        self.error(lit.span(), "a dimension must be a positive integer");
                    }
                },
                DimExpr::Sym(id) if weight => {
                    ok = false;
                    self.error(
                        id.span(),
                        format!("a weight needs fixed dimensions; `{id}` is symbolic"),
                    );
                }
                DimExpr::Sym(id) => dims.push(Dim::Sym(id.to_string())),
            }
        }
        if weight && dtype.is_some_and(|d| d != DType::F32) {
            ok = false;
            self.error(
                ty.dtype.span(),
                format!("weights of dtype `{name}` are not supported yet: declare them as f32"),
            );
        }
        ok.then(|| TensorType {
            dtype: dtype.expect("checked above"),
            shape: Shape(dims),
        })
    }

    /// An expression that must denote a tensor.
    fn tensor_expr(&mut self, expr: &Expr) -> Option<TensorId> {
        match expr {
            Expr::Name(name) => self.lookup(name),
            Expr::Call(call) => self.call(call),
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

    fn call(&mut self, call: &Call) -> Option<TensorId> {
        let name = call.func.to_string();
        if let Some(op) = ops::lookup(&name) {
            return self.op_call(call, op);
        }
        if let Some((_, op_type)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
            return self.op_call(call, ops::lookup(op_type).expect("aliases name real ops"));
        }
        if name == "linear" {
            return self.linear(call);
        }
        let mut known: Vec<&str> = ops::REGISTRY.iter().map(|op| op.op_type).collect();
        known.extend(ALIASES.iter().map(|(a, _)| *a));
        known.extend(LAYERS);
        let hint = suggest::did_you_mean(&name, &known)
            .map(|s| format!(": did you mean `{s}`?"))
            .unwrap_or_else(|| {
                format!(
                    "; tinyonnx knows the ONNX operators {} and the layers {}",
                    ops::REGISTRY
                        .iter()
                        .map(|op| op.op_type)
                        .collect::<Vec<_>>()
                        .join(", "),
                    LAYERS
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
            if matches!(arg, Expr::Call(_) | Expr::Name(_)) {
                self.tensor_expr(arg);
            }
        }
        None
    }

    fn op_call(&mut self, call: &Call, op: &'static OpSchema) -> Option<TensorId> {
        let positional: Vec<&Expr> = call.positional().collect();
        let (min, max) = (op.min_inputs(), op.inputs.len());
        let mut ok = true;
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
        let inputs: Vec<Option<TensorId>> =
            positional.iter().map(|e| self.tensor_expr(e)).collect();
        ok &= inputs.iter().all(Option::is_some);
        let attrs = self.attributes(call, op);
        let attrs = match attrs {
            Some(a) if ok => a,
            _ => return None,
        };
        let inputs: Vec<Option<TensorId>> = inputs.into_iter().take(max).collect();

        if !self.check_dtypes(op, &inputs, &positional) {
            return None;
        }
        let types: Vec<TensorType> = inputs
            .iter()
            .map(|i| self.graph.tensors[i.expect("all present")].ty.clone())
            .collect();
        let mut padded: Vec<Option<&TensorType>> = types.iter().map(Some).collect();
        padded.resize(max, None);
        let infer_cx = InferCtx {
            op,
            inputs: padded,
            attrs: &attrs,
            opset: self.graph.opset,
        };
        let out_types = match (op.infer)(&infer_cx) {
            Ok(t) => t,
            Err(e) => {
                let span = match e.at {
                    At::Input(i) => positional.get(i).map_or(call.func.span(), |e| e.span()),
                    At::Attr(name) => call
                        .named()
                        .find(|(n, _)| *n == name)
                        .map_or(call.func.span(), |(_, v)| v.span()),
                    At::Op => call.func.span(),
                };
                self.error(span, e.msg);
                return None;
            }
        };
        let node_name = format!("{}_{}", op.op_type, self.graph.nodes.len());
        Some(self.add_node(node_name, op, inputs, out_types, attrs))
    }

    fn add_node(
        &mut self,
        node_name: String,
        op: &'static OpSchema,
        mut inputs: Vec<Option<TensorId>>,
        out_types: Vec<TensorType>,
        attrs: Attrs,
    ) -> TensorId {
        while inputs.last().is_some_and(Option::is_none) {
            inputs.pop();
        }
        let outputs: Vec<TensorId> = out_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                let id = self.new_tensor(format!("{node_name}.out{i}"), ty, TensorKind::Value, "");
                self.anonymous.insert(id);
                id
            })
            .collect();
        let first = outputs[0];
        self.graph.nodes.push(Node {
            name: node_name,
            op,
            inputs,
            outputs,
            attrs,
        });
        first
    }

    fn check_dtypes(
        &mut self,
        op: &OpSchema,
        inputs: &[Option<TensorId>],
        positional: &[&Expr],
    ) -> bool {
        let mut first: Option<(usize, DType)> = None;
        for (i, id) in inputs.iter().enumerate() {
            let Some(id) = id else { continue };
            let dtype = self.graph.tensors[*id].ty.dtype;
            let span = positional[i].span();
            if !op.dtypes.contains(&dtype) {
                let allowed: Vec<&str> = op.dtypes.iter().map(|d| d.name()).collect();
                self.error(
                    span,
                    format!(
                        "{} does not accept {dtype} (input {}); it accepts {}",
                        op.op_type,
                        op.inputs[i].name,
                        allowed.join(", ")
                    ),
                );
                return false;
            }
            match first {
                None => first = Some((i, dtype)),
                Some((j, d)) if d != dtype => {
                    self.error(
                        span,
                        format!(
                            "{} needs inputs of one dtype: {} is {d} but {} is {dtype}",
                            op.op_type, op.inputs[j].name, op.inputs[i].name
                        ),
                    );
                    return false;
                }
                Some(_) => {}
            }
        }
        true
    }

    fn attributes(&mut self, call: &Call, op: &'static OpSchema) -> Option<Attrs> {
        let mut attrs = Attrs::default();
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
            match attr_value(spec, value) {
                Ok(v) => attrs.explicit.push((spec.name, v)),
                Err((span, msg)) => {
                    ok = false;
                    self.error(span, format!("attribute `{key}` of {}: {msg}", op.op_type));
                }
            }
        }
        for spec in op.attrs {
            if attrs.explicit.iter().any(|(n, _)| *n == spec.name) {
                continue;
            }
            match spec.default {
                AttrDefault::Int(v) => attrs.defaults.push((spec.name, AttrValue::Int(v))),
                AttrDefault::Float(v) => attrs.defaults.push((spec.name, AttrValue::Float(v))),
                AttrDefault::Required => {
                    ok = false;
                    self.error(
                        call.func.span(),
                        format!("{} needs the attribute `{}`", op.op_type, spec.name),
                    );
                }
            }
        }
        // Keep the schema's order so the emitted ONNX does not depend on argument order.
        attrs
            .explicit
            .sort_by_key(|(n, _)| op.attrs.iter().position(|a| a.name == *n));
        ok.then_some(attrs)
    }

    /// `linear(x, out_features, init = ..., bias = true, name = "fc")`: one Gemm with a
    /// weight `[in, out]` and a bias `[out]`.
    fn linear(&mut self, call: &Call) -> Option<TensorId> {
        let index = *self.layer_counts.entry("linear").or_default();
        *self.layer_counts.get_mut("linear").expect("inserted above") += 1;
        let positional: Vec<&Expr> = call.positional().collect();
        if positional.len() != 2 {
            let span = positional.get(2).map_or(call.close, |e| e.span());
            self.error(
                span,
                format!(
                    "linear takes 2 positional arguments (input, out_features), got {}",
                    positional.len()
                ),
            );
            return None;
        }
        let x = self.tensor_expr(positional[0]);
        let out_features = match positional[1] {
            Expr::Int(v, _) if *v > 0 => Some(*v as usize),
            other => {
                self.error(
                    other.span(),
                    format!(
                        "linear expects out_features as a positive integer, found {}",
                        other.describe()
                    ),
                );
                None
            }
        };
        let mut init = None;
        let mut bias_init = None;
        let mut bias = true;
        let mut prefix = format!("linear_{index}");
        let mut ok = true;
        for (name, value) in call.named() {
            match (name.to_string().as_str(), value) {
                ("init", e) => init = Some(e.clone()),
                ("bias_init", e) => bias_init = Some(e.clone()),
                ("bias", Expr::Bool(b, _)) => bias = *b,
                ("name", Expr::Str(s)) => prefix = s.value(),
                ("bias", e) | ("name", e) => {
                    ok = false;
                    let want = if name == "bias" {
                        "a boolean"
                    } else {
                        "a string"
                    };
                    self.error(
                        e.span(),
                        format!(
                            "linear expects `{name}` to be {want}, found {}",
                            e.describe()
                        ),
                    );
                }
                (other, _) => {
                    ok = false;
                    let known = ["init", "bias", "bias_init", "name"];
                    let hint = suggest::did_you_mean(other, &known)
                        .map(|s| format!("did you mean `{s}`? "))
                        .unwrap_or_default();
                    self.error(
                        name.span(),
                        format!(
                            "linear has no argument `{other}`: {hint}it takes init, bias, bias_init, name"
                        ),
                    );
                }
            }
        }
        let (x, out_features) = (x?, out_features?);
        if !ok {
            return None;
        }
        let xt = self.graph.tensors[x].ty.clone();
        if xt.dtype != DType::F32 {
            self.error(
                positional[0].span(),
                format!("linear expects an f32 input, got {}", xt.dtype),
            );
            return None;
        }
        if xt.shape.rank() != 2 {
            self.error(
                positional[0].span(),
                format!(
                    "linear expects a rank-2 input [batch, features], got {}",
                    xt.shape
                ),
            );
            return None;
        }
        let Some(in_features) = xt.shape.0[1].fixed() else {
            self.error(
                positional[0].span(),
                format!(
                    "linear needs a fixed number of input features, got {}",
                    xt.shape
                ),
            );
            return None;
        };
        let w_name = format!("{prefix}.weight");
        if self.graph.tensors.iter().any(|t| t.name == w_name) {
            self.error(
                call.func.span(),
                format!("a layer named `{prefix}` already exists: give this one another `name`"),
            );
            return None;
        }
        let default_init = Expr::Call(Call {
            func: Ident::new("glorot_uniform", call.func.span()),
            args: vec![Arg::Named(
                Ident::new("seed", call.func.span()),
                Expr::Int(index as i64, call.func.span()),
            )],
            close: call.close,
        });
        let w_values = match init::evaluate(
            init.as_ref().unwrap_or(&default_init),
            &[in_features, out_features],
        ) {
            Ok(v) => v,
            Err((span, msg)) => {
                self.error(span, msg);
                return None;
            }
        };
        let w = self.new_tensor(
            w_name,
            TensorType {
                dtype: DType::F32,
                shape: Shape::fixed(&[in_features, out_features]),
            },
            TensorKind::Weight(w_values),
            "",
        );
        self.graph.weights.push(w);
        let mut inputs = vec![Some(x), Some(w)];
        if bias {
            let zeros = Expr::Name(Ident::new("zeros", call.func.span()));
            let b_values =
                match init::evaluate(bias_init.as_ref().unwrap_or(&zeros), &[out_features]) {
                    Ok(v) => v,
                    Err((span, msg)) => {
                        self.error(span, msg);
                        return None;
                    }
                };
            let b = self.new_tensor(
                format!("{prefix}.bias"),
                TensorType {
                    dtype: DType::F32,
                    shape: Shape::fixed(&[out_features]),
                },
                TensorKind::Weight(b_values),
                "",
            );
            self.graph.weights.push(b);
            inputs.push(Some(b));
        } else if bias_init.is_some() {
            self.error(
                call.func.span(),
                "linear has `bias = false` and a `bias_init`",
            );
            return None;
        }
        let gemm = ops::lookup("Gemm").expect("Gemm is registered");
        let attrs = Attrs {
            explicit: Vec::new(),
            defaults: gemm
                .attrs
                .iter()
                .map(|a: &AttrSpec| {
                    let v = match a.default {
                        AttrDefault::Int(v) => AttrValue::Int(v),
                        AttrDefault::Float(v) => AttrValue::Float(v),
                        AttrDefault::Required => unreachable!("Gemm has no required attribute"),
                    };
                    (a.name, v)
                })
                .collect(),
        };
        let out = TensorType {
            dtype: DType::F32,
            shape: Shape(vec![xt.shape.0[0].clone(), Dim::Fixed(out_features)]),
        };
        Some(self.add_node(prefix, gemm, inputs, vec![out], attrs))
    }
}

/// Converts a DSL expression to an attribute value of the kind the spec wants.
fn attr_value(spec: &AttrSpec, value: &Expr) -> Result<AttrValue, (Span, String)> {
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
        (_, e) => Err(wrong(e)),
    }
}
