//! `pub model C = compose(A, B, map = [("a_out", "b_in")], prefix1 = "a/", prefix2 =
//! "b/");`: two declared models combined into one, as `onnx.compose.merge_models` does.
//!
//! A proc macro cannot read another invocation, so every model's expansion also defines
//! a `macro_rules!` macro, `__tinyonnx_source_<Name>`, that re-invokes `onnx_model!` with
//! the tokens it is given plus `source <Name> { <the model's own tokens> }`. A
//! composition expands to the first model's source macro, which hands its source over;
//! the next expansion asks the second model's; the third has both and compiles: each
//! model is checked on its own, then the graphs are merged. (The models must be defined
//! before the composition, in the same module.)
//!
//! Merging: every tensor and node name gets its model's prefix; each mapped input of B
//! reads the mapped output of A instead (their types must be equal); the inputs are A's
//! and B's unmapped ones, the outputs A's unmapped ones and B's; both models must use the
//! same opset and settings (`winograd`, `optimize`) and agree on the device values of
//! shared dimension names.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::ir::{Graph, TensorId};
use crate::syntax::{ComposeDef, ModelDef};

/// The source macro every model defines (see the module documentation).
pub fn source_macro(model: &ModelDef, tokens: &TokenStream) -> TokenStream {
    let name = format_ident!("__tinyonnx_source_{}", model.name);
    let model_name = &model.name;
    quote! {
        #[doc(hidden)]
        #[allow(unused_macros)]
        macro_rules! #name {
            ($($rest:tt)*) => {
                ::tinyonnx::onnx_model! { $($rest)* source #model_name { #tokens } }
            };
        }
    }
}

/// The next step of a composition whose sources are not all there yet: invoke the source
/// macro of the first model still missing, handing it the whole invocation.
pub fn fetch_next(def: &ComposeDef, tokens: TokenStream) -> Option<TokenStream> {
    let missing = [&def.first, &def.second]
        .into_iter()
        .find(|m| !def.sources.iter().any(|(s, _)| s == *m))?;
    let mac = Ident::new(&format!("__tinyonnx_source_{missing}"), missing.span());
    Some(quote!(#mac! { #tokens }))
}

/// Merges `b` into `a` (see the module documentation); errors point at `def`'s tokens.
pub fn merge(def: &ComposeDef, mut a: Graph, b: Graph) -> Result<Graph, Vec<syn::Error>> {
    let err = |span: Span, msg: String| vec![syn::Error::new(span, msg)];
    if a.opset != b.opset {
        return Err(err(
            def.call,
            format!(
                "`{}` uses opset {} and `{}` opset {}: compose models of one opset",
                def.first, a.opset, def.second, b.opset
            ),
        ));
    }
    // One forward pass runs under one set of settings: a model's choice is not
    // silently dropped for the other's.
    let settings = [
        ("winograd", a.winograd.name(), b.winograd.name()),
        ("optimize", a.optimize.name(), b.optimize.name()),
    ];
    let differ: Vec<syn::Error> = settings
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(key, x, y)| {
            syn::Error::new(
                def.call,
                format!(
                    "`{}` has `{key} = {x}` but `{}` `{key} = {y}`: compose models of \
                     one setting (give both models the same `{key}`)",
                    def.first, def.second
                ),
            )
        })
        .collect();
    if !differ.is_empty() {
        return Err(differ);
    }
    for (k, v) in &b.device_dims {
        if a.device_dims.get(k).is_some_and(|w| w != v) {
            return Err(err(
                def.call,
                format!(
                    "dimension `{k}` is {} on the device in `{}` but {v} in `{}`",
                    a.device_dims[k], def.first, def.second
                ),
            ));
        }
    }
    let (p1, p2) = (
        def.prefix1
            .as_ref()
            .map(syn::LitStr::value)
            .unwrap_or_default(),
        def.prefix2
            .as_ref()
            .map(syn::LitStr::value)
            .unwrap_or_default(),
    );
    // Which of A's outputs feeds which of B's inputs.
    let mut links: Vec<(TensorId, TensorId)> = Vec::new();
    for (out, inp) in &def.map {
        let Some(&o) = a
            .outputs
            .iter()
            .find(|&&o| a.tensors[o].name == out.value())
        else {
            let names: Vec<&str> = a
                .outputs
                .iter()
                .map(|&o| a.tensors[o].name.as_str())
                .collect();
            return Err(err(
                out.span(),
                format!(
                    "`{}` has no output `{}`; its outputs are {}",
                    def.first,
                    out.value(),
                    names.join(", ")
                ),
            ));
        };
        let Some(&i) = b.inputs.iter().find(|&&i| b.tensors[i].name == inp.value()) else {
            let names: Vec<&str> = b
                .inputs
                .iter()
                .map(|&i| b.tensors[i].name.as_str())
                .collect();
            return Err(err(
                inp.span(),
                format!(
                    "`{}` has no input `{}`; its inputs are {}",
                    def.second,
                    inp.value(),
                    names.join(", ")
                ),
            ));
        };
        if a.tensors[o].ty != b.tensors[i].ty {
            return Err(err(
                inp.span(),
                format!(
                    "`{}` output `{}` is {} but `{}` input `{}` is {}",
                    def.first,
                    out.value(),
                    a.tensors[o].ty,
                    def.second,
                    inp.value(),
                    b.tensors[i].ty
                ),
            ));
        }
        if links.iter().any(|&(_, j)| j == i) {
            return Err(err(
                inp.span(),
                format!("input `{}` is mapped twice", inp.value()),
            ));
        }
        links.push((o, i));
    }
    let offset = a.tensors.len();
    let instances = a.instances.len();
    for t in &mut a.tensors {
        t.name = format!("{p1}{}", t.name);
    }
    for n in &mut a.nodes {
        n.prefix_names(&p1);
    }
    let remap = |id: TensorId| match links.iter().find(|&&(_, i)| i == id) {
        Some(&(o, _)) => o,
        None => id + offset,
    };
    for mut t in b.tensors {
        t.name = format!("{p2}{}", t.name);
        a.tensors.push(t);
    }
    for mut n in b.nodes {
        n.prefix_names(&p2);
        // Only inputs can be mapped tensors (B's mapped inputs are its model inputs).
        n.map_ids(&remap);
        n.instance = n.instance.map(|k| k + instances);
        a.nodes.push(n);
    }
    a.instances.extend(b.instances.into_iter().map(|mut inst| {
        inst.prefix = format!("{p2}{}", inst.prefix);
        inst
    }));
    for inst in a.instances.iter_mut().take(instances) {
        inst.prefix = format!("{p1}{}", inst.prefix);
    }
    a.weights.extend(b.weights.iter().map(|&w| w + offset));
    a.inputs.extend(
        b.inputs
            .iter()
            .filter(|i| !links.iter().any(|(_, j)| j == *i))
            .map(|&i| i + offset),
    );
    a.outputs.retain(|o| !links.iter().any(|(p, _)| p == o));
    a.outputs.extend(b.outputs.iter().map(|&o| o + offset));
    a.device_dims.extend(b.device_dims);
    // Names must stay unique among the tensors the merged graph uses (B's mapped inputs
    // are left unused).
    let used: Vec<TensorId> = a
        .inputs
        .iter()
        .chain(&a.weights)
        .copied()
        .chain(a.nodes.iter().flat_map(|n| n.outputs.iter().copied()))
        .collect();
    let mut seen = std::collections::HashSet::new();
    if let Some(t) = used
        .iter()
        .map(|&id| &a.tensors[id])
        .find(|t| !seen.insert(t.name.clone()))
    {
        return Err(err(
            def.call,
            format!(
                "both models name a tensor `{}`: give them prefixes (prefix1 = \"a/\", prefix2 = \"b/\")",
                t.name
            ),
        ));
    }
    a.name = def.name.to_string();
    a.doc = def.doc.clone();
    a.model_version = None;
    a.domain = None;
    a.metadata = Vec::new();
    Ok(a)
}
