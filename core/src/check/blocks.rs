//! What expands to more than one call: layer sugar, `block`/`function` instances,
//! `custom` operators and `load(...)` of weight files.

use proc_macro2::Span;

use crate::ir::TensorId;
use crate::layers;
use crate::ops::{self, AttrValue, Attrs};
use crate::syntax::{Arg, Block, Call, CustomDef, Expr, OutputRule};

use super::{Checker, MAX_BLOCK_DEPTH, Scope};

impl<'m> Checker<'m> {
    /// `load("file", name = "tensor")`: the values of a tensor of `shape` from a file.
    pub(super) fn load_call(
        &mut self,
        call: &Call,
        shape: &[usize],
        what: &str,
    ) -> Result<crate::weights::Loaded, (Span, String)> {
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
    ) -> Result<crate::weights::Loaded, (Span, String)> {
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
        Ok(loaded)
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

    pub(super) fn instantiate(
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
    pub(super) fn custom_def(&mut self, c: &'m CustomDef) {
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
    pub(super) fn custom_call(&mut self, def: &CustomDef, call: &Call) -> Option<Vec<TensorId>> {
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

#[cfg(test)]
mod tests {
    use super::super::testing::errors;
    use quote::quote;

    #[test]
    fn a_block_calling_itself_stops_at_the_depth_limit() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                block again(x) {
                    return again(Relu(x));
                }
                output y = again(x);
            }
        });
        let expected = format!(
            "block `again` nests deeper than {} levels: does it call itself?",
            super::super::MAX_BLOCK_DEPTH
        );
        assert_eq!(e, [expected]);
    }

    #[test]
    fn block_parameters_are_checked_by_name() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                block scaled(x, k) {
                    return Mul(x, k);
                }
                let a = scaled(x, j = 2.0);
                output y = Relu(a);
            }
        });
        assert!(
            e.iter()
                .any(|m| m.starts_with("block `scaled` has no parameter `j`")),
            "{e:?}"
        );
    }

    #[test]
    fn two_layers_cannot_share_a_name() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                let a = linear(x, 4, name = "fc");
                let b = linear(a, 4, name = "fc");
                output y = Relu(b);
            }
        });
        assert_eq!(
            e,
            ["a layer named `fc` already exists: give this one another `name`"]
        );
    }
}
