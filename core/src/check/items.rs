//! Declarations: the `opset`, `dim` and `winograd` settings, `input`, `weight`, `let`
//! and `output` items, and the doc comments that go with them.

use syn::Ident;

use crate::init;
use crate::ir::{Data, Optimize, TensorId, TensorKind, Winograd};
use crate::layers;
use crate::ops::{self};
use crate::syntax::{Expr, Item, ModelDef, Pattern, TypeExpr};
use crate::types::{DType, MAX_DIM};

use super::Checker;

impl<'m> Checker<'m> {
    /// `opset` and `dim` items, read before the rest so their order does not matter.
    pub(super) fn settings(&mut self, model: &'m ModelDef) {
        let mut opset_seen = false;
        let mut winograd_seen = false;
        let mut optimize_seen = false;
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
                        Err(e) => self.sink.push(e),
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
                    let expected =
                        "`never` (the default), `auto` (where the arena does not grow) or `always`";
                    if let Some(w) =
                        self.setting(&mut winograd_seen, (kw, value), Winograd::CHOICES, expected)
                    {
                        self.graph.winograd = w;
                    }
                }
                Item::Optimize { kw, value } => {
                    let expected = "`speed` (the default) or `size` (convolutions share one kernel copy sized at run time, for less flash)";
                    if let Some(o) =
                        self.setting(&mut optimize_seen, (kw, value), Optimize::CHOICES, expected)
                    {
                        self.graph.optimize = o;
                    }
                }
                Item::Quantize { kw, value } => {
                    if self.quantize_item.is_some() {
                        self.error(kw.span(), "quantize is set twice");
                        continue;
                    }
                    self.quantize_item = Some((kw, value));
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

    pub(super) fn collect_blocks(&mut self, items: &'m [Item]) {
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

    /// A setting given once (`seen`) as `kw = value;`: the choice `value` names, or
    /// `None` after reporting it set twice or unknown (`expected` lists the choices).
    fn setting<T: Copy>(
        &mut self,
        seen: &mut bool,
        (kw, value): (&Ident, &Ident),
        choices: &[(&str, T)],
        expected: &str,
    ) -> Option<T> {
        if std::mem::replace(seen, true) {
            self.error(kw.span(), format!("{kw} is set twice"));
            return None;
        }
        let name = value.to_string();
        let choice = choices.iter().find(|(n, _)| *n == name).map(|&(_, c)| c);
        if choice.is_none() {
            self.error(
                value.span(),
                format!("unknown {kw} setting `{name}`: expected {expected}"),
            );
        }
        choice
    }

    pub(super) fn item(&mut self, item: &'m Item) {
        let in_block = self.scopes.len() > 1;
        match item {
            Item::Opset { kw, .. } if in_block => {
                self.error(kw.span(), "`opset` is set in the model, not in a block")
            }
            Item::ModelVersion { kw, .. }
            | Item::Domain { kw, .. }
            | Item::Winograd { kw, .. }
            | Item::Optimize { kw, .. }
            | Item::Quantize { kw, .. }
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
            | Item::Optimize { .. }
            | Item::Quantize { .. }
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

    pub(super) fn weight_item(&mut self, doc: &str, name: &Ident, ty: &TypeExpr, init: &Expr) {
        let Some(ty) = self.tensor_type(ty, true) else {
            self.poison(name);
            return;
        };
        let shape: Vec<usize> = ty.shape.0.iter().map(|d| d.fixed().unwrap_or(1)).collect();
        let init = self.subst(init);
        let mut file = None;
        let data = match (&init, ty.dtype) {
            (Expr::Call(c), dtype) if c.func == "load" => self
                .load_call(c, &shape, &name.to_string())
                .and_then(|l| match (dtype, l.ints) {
                    // Integers from an integer file exactly, not through f32.
                    (DType::I64, Some(ints)) => Ok(Data::I64(ints)),
                    (DType::I64, None) if l.values.iter().all(|x| x.fract() == 0.0) => {
                        Ok(Data::I64(l.values.into_iter().map(|x| x as i64).collect()))
                    }
                    (DType::I64, None) => Err((
                        c.func.span(),
                        format!("`{name}` is i64 but the file holds non-integer values"),
                    )),
                    (DType::F32, _) => {
                        file = l.file;
                        Ok(Data::F32(l.values))
                    }
                    // Other integers from the file's values, each within the type.
                    (other, ints) => match init::integer_range(other) {
                        Some((lo, hi)) => {
                            let values: Vec<f64> = match ints {
                                Some(ints) => ints.into_iter().map(|i| i as f64).collect(),
                                None => l.values.into_iter().map(f64::from).collect(),
                            };
                            match values.iter().find(|v| v.fract() != 0.0 || **v < lo || **v > hi) {
                                Some(bad) => Err((
                                    c.func.span(),
                                    format!("`{name}` is {other}, which holds integers in {lo}..={hi}; the file holds {bad}"),
                                )),
                                None => Ok(Data::Typed { dtype: other, values }),
                            }
                        }
                        None => Err((
                            c.func.span(),
                            format!("`load` reads float and integer weights; declare `{name}` f32 and Cast it to {other}"),
                        )),
                    },
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
                self.graph.tensors[id].file = file;
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

    pub(super) fn let_item(&mut self, pattern: &Pattern, expr: &Expr) {
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
    pub(super) fn bind_outputs(&mut self, outs: Vec<TensorId>, names: Vec<Option<&Ident>>) {
        for (id, name) in outs.into_iter().zip(names) {
            if let Some(name) = name {
                self.name_tensor(id, name);
                self.bind(name, id);
            }
        }
    }

    /// Runs `f`, then gives the nodes it added that have no doc string `doc`.
    pub(super) fn with_doc(&mut self, doc: &str, f: impl FnOnce(&mut Self)) {
        let first = self.graph.nodes.len();
        f(self);
        for node in &mut self.graph.nodes[first..] {
            if node.doc.is_empty() {
                node.doc = doc.to_string();
            }
        }
    }

    pub(super) fn output(&mut self, doc: &str, name: &Ident, expr: Option<&Expr>) {
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::errors;
    use quote::quote;

    #[test]
    fn each_setting_given_twice_is_reported_and_checking_goes_on() {
        let e = errors(quote! {
            model M {
                opset = 13;
                opset = 13;
                winograd = never;
                winograd = never;
                input x: f32[1, 4];
                output y = Relu(x);
            }
        });
        assert_eq!(e, ["the opset is set twice", "winograd is set twice"]);
    }

    #[test]
    fn an_unknown_winograd_setting_lists_the_known_ones() {
        let e = errors(quote! {
            model M {
                winograd = fast;
                input x: f32[1, 4];
                output y = Relu(x);
            }
        });
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("unknown winograd setting `fast`"), "{e:?}");
        assert!(
            e[0].contains("`never` (the default)") && e[0].contains("`always`"),
            "{e:?}"
        );
    }

    #[test]
    fn a_model_needs_an_output() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
            }
        });
        assert_eq!(
            e,
            ["model `M` has no output: add one such as `output y = Relu(x);`"]
        );
    }
}
