//! Layer sugar: calls that create their own weights and lower to a fixed, documented
//! sequence of ONNX nodes, built through the same checks as raw operators. The layers
//! themselves, a table and one builder each, are in [`specs`].

mod args;
mod cx;
mod layer;
mod specs;

use crate::ir::TensorId;
use crate::syntax::{Call, Expr};
use crate::types::DType;

use args::Args;
pub(crate) use cx::LayerCx;
use layer::Layer;
use specs::SPECS;

/// Every layer sugar name.
pub fn names() -> impl Iterator<Item = &'static str> {
    SPECS.iter().map(|s| s.name)
}

/// Whether `name` is layer sugar.
pub fn is_layer(name: &str) -> bool {
    names().any(|l| l == name)
}

/// What to suggest for the PyTorch or Keras name of a layer or an activation.
pub fn framework_alias(name: &str) -> Option<&'static str> {
    match name {
        "ReLU" => Some("Relu"),
        "GELU" => Some("Gelu"),
        _ => SPECS
            .iter()
            .find(|s| s.frameworks.contains(&name))
            .map(|s| s.name),
    }
}

/// Expands one layer call: checks its arguments against the layer's spec, then runs
/// its builder. Returns the outputs of its last node.
pub(crate) fn expand(
    cx: &mut dyn LayerCx,
    call: &Call,
    hint: Option<String>,
) -> Option<Vec<TensorId>> {
    let spec = SPECS
        .iter()
        .find(|s| call.func == s.name)
        .expect("is_layer was checked");
    let (layer, positional, named) = (spec.name, spec.positional, spec.named);
    let pos: Vec<&Expr> = call.positional().collect();
    let args = Args { call, layer, pos };
    let mut ok = true;
    if args.pos.len() != positional.len() {
        let span = args
            .pos
            .get(positional.len())
            .map_or(call.close, |e| e.span());
        cx.error(
            span,
            format!(
                "{layer} takes {} positional arguments ({}), got {}",
                positional.len(),
                positional.join(", "),
                args.pos.len()
            ),
        );
        ok = false;
    }
    for (name, _) in call.named() {
        let key = name.to_string();
        if !named.contains(&key.as_str()) {
            let hint = crate::suggest::did_you_mean(&key, named)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            cx.error(
                name.span(),
                format!(
                    "{layer} has no argument `{key}`: {hint}it takes {}",
                    named.join(", ")
                ),
            );
            ok = false;
        }
    }
    let x = args.pos.first().and_then(|e| cx.tensor_expr(e));
    if !ok {
        return None;
    }
    let x = x?;
    let name = cx.instance_name(layer, args.explicit_name(), hint, call.func.span())?;
    let file: Option<syn::LitStr> = match args.named("weights") {
        None => None,
        Some(Expr::Str(s)) => Some(s.clone()),
        Some(other) => {
            cx.error(
                other.span(),
                format!("{layer} expects `weights` to be a file path string"),
            );
            return None;
        }
    };
    let pytorch = match args.named("layout") {
        None => false,
        Some(Expr::Str(s)) if s.value() == "onnx" => false,
        Some(Expr::Str(s)) if s.value() == "pytorch" => true,
        Some(other) => {
            cx.error(
                other.span(),
                format!("{layer} expects `layout` to be \"onnx\" or \"pytorch\""),
            );
            return None;
        }
    };
    if pytorch && file.is_none() {
        cx.error(
            call.func.span(),
            format!("{layer}: `layout` describes weights from a file; add `weights = \"...\"`"),
        );
        return None;
    }
    let xt = cx.graph().tensors[x].ty.clone();
    if xt.dtype != DType::F32 {
        cx.error(
            args.x_span(),
            format!("{layer} expects an f32 input, got {}", xt.dtype),
        );
        return None;
    }
    let index = cx.layer_index(layer).saturating_sub(1);
    let (x_span, func_span) = (args.x_span(), call.func.span());
    let mut l = Layer {
        cx,
        args,
        layer,
        name,
        x,
        xt,
        x_span,
        func_span,
        file,
        pytorch,
        index,
    };
    (spec.build)(&mut l)
}
