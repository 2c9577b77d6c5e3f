//! Layer sugar: calls that create their own weights and lower to a fixed, documented
//! sequence of ONNX nodes, built through the same checks as raw operators.
//!
//! | layer | nodes | weights (under the layer's name) |
//! |---|---|---|
//! | `linear(x, out)` | `Gemm` | `weight [in, out]`, `bias [out]` |
//! | `conv2d(x, out, kernel)` | `Conv` | `weight [out, in/groups, kh, kw]`, `bias [out]` |
//! | `batch_norm(x)` | `BatchNormalization` | `scale`, `bias`, `mean`, `var` `[C]` |
//! | `max_pool2d(x, kernel)` | `MaxPool` | |
//! | `avg_pool2d(x, kernel)` | `AveragePool` | |
//! | `global_avg_pool(x)` | `GlobalAveragePool` | |
//! | `flatten(x)` | `Flatten` | |
//! | `lstm(x, hidden)` | `LSTM` (outputs Y, Y_h, Y_c) | `W [D, 4H, I]`, `R [D, 4H, H]`, `B [D, 8H]` |
//! | `layer_norm(x)` | `LayerNormalization` | `scale`, `bias` (normalized shape) |
//! | `multi_head_attention(x, heads)` | Q/K/V `MatMul`+`Add`, `Reshape`, `Transpose`, `MatMul`, `Mul`, `Softmax`, `MatMul`, `Transpose`, `Reshape`, `MatMul`+`Add` | `q`, `k`, `v`, `out` `.weight [D, D]`, `.bias [D]` |
//! | `dropout(x)` | `Dropout` (identity at inference) | |

use proc_macro2::Span;

use crate::init;
use crate::ir::{Data, TensorId};
use crate::ops::{self, At, AttrValue, Attrs, OpSchema, attrs_with_defaults};
use crate::syntax::{Call, Expr};
use crate::types::{DType, Dim, MAX_DIM};

/// What layer sugar needs of the checker. A layer expands into nodes and weights
/// built through this, so every node it makes passes the checker's rules, and the
/// checker (which implements it) is the only module that knows both.
pub(crate) trait LayerCx {
    /// The graph built so far.
    fn graph(&self) -> &crate::ir::Graph;
    /// Reports an error at `span`; checking goes on.
    fn error(&mut self, span: Span, msg: impl std::fmt::Display);
    /// A new weight tensor holding `data`.
    fn add_weight(&mut self, name: String, shape: &[usize], data: Data) -> TensorId;
    /// Checks and adds one node (see `check::Checker::build`).
    fn build(
        &mut self,
        op: &'static OpSchema,
        node_name: String,
        inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        span_of: &dyn Fn(At) -> Span,
    ) -> Option<Vec<TensorId>>;
    /// The name of the next instance of `layer` (explicit, from the binding, or counted).
    fn instance_name(
        &mut self,
        layer: &str,
        explicit: Option<(String, Span)>,
        hint: Option<String>,
        span: Span,
    ) -> Option<String>;
    /// Instances of `layer` so far.
    fn layer_index(&self, layer: &str) -> usize;
    /// f32 values of a weight file's tensor, checked against `shape`.
    fn load_checked(
        &mut self,
        path: &syn::LitStr,
        name: Option<&str>,
        shape: &[usize],
        what: &str,
    ) -> Result<Vec<f32>, (Span, String)>;
    /// The tensor an argument expression names or computes.
    fn tensor_expr(&mut self, expr: &Expr) -> Option<TensorId>;
}

/// Every layer sugar name.
pub const LAYERS: &[&str] = &[
    "linear",
    "conv2d",
    "batch_norm",
    "max_pool2d",
    "avg_pool2d",
    "global_avg_pool",
    "flatten",
    "lstm",
    "layer_norm",
    "multi_head_attention",
    "dropout",
];

/// Whether `name` is layer sugar.
pub fn is_layer(name: &str) -> bool {
    LAYERS.contains(&name)
}

/// What to suggest for the PyTorch or Keras name of a layer.
pub fn framework_alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "Linear" | "Dense" => "linear",
        "Conv2d" | "Conv2D" => "conv2d",
        "BatchNorm2d" | "BatchNormalization2D" => "batch_norm",
        "MaxPool2d" | "MaxPooling2D" => "max_pool2d",
        "AvgPool2d" | "AveragePooling2D" => "avg_pool2d",
        "AdaptiveAvgPool2d" | "GlobalAveragePooling2D" => "global_avg_pool",
        "LayerNorm" => "layer_norm",
        "MultiheadAttention" => "multi_head_attention",
        "ReLU" => "Relu",
        "GELU" => "Gelu",
        _ => return None,
    })
}

/// The arguments of one layer call, checked against what the layer takes.
struct Args<'c> {
    call: &'c Call,
    layer: &'static str,
    pos: Vec<&'c Expr>,
}

impl<'c> Args<'c> {
    fn named(&self, name: &str) -> Option<&'c Expr> {
        self.call.named().find(|(n, _)| *n == name).map(|(_, e)| e)
    }

    fn int<C: LayerCx>(
        &self,
        cx: &mut C,
        e: Option<&Expr>,
        what: &str,
        default: i64,
    ) -> Option<i64> {
        match e {
            None => Some(default),
            Some(Expr::Int(v, _)) => Some(*v),
            Some(Expr::Bool(b, _)) => Some(i64::from(*b)),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{what}` to be an integer, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    fn positive<C: LayerCx>(
        &self,
        cx: &mut C,
        e: Option<&Expr>,
        what: &str,
        default: i64,
    ) -> Option<usize> {
        let v = self.int(cx, e, what, default)?;
        if v <= 0 || v as u64 > MAX_DIM as u64 {
            cx.error(
                e.map_or(self.call.func.span(), Expr::span),
                format!("{} expects `{what}` in 1..={MAX_DIM}, got {v}", self.layer),
            );
            return None;
        }
        Some(v as usize)
    }

    /// An integer or a list of `n` integers (`3` means `[3, 3]`).
    fn ints<C: LayerCx>(
        &self,
        cx: &mut C,
        e: Option<&Expr>,
        what: &str,
        n: usize,
        default: i64,
    ) -> Option<Vec<i64>> {
        match e {
            None => Some(vec![default; n]),
            Some(Expr::Int(v, _)) if v.unsigned_abs() <= MAX_DIM as u64 => Some(vec![*v; n]),
            Some(Expr::List(items, span)) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Expr::Int(v, _) if v.unsigned_abs() <= MAX_DIM as u64 => out.push(*v),
                        other => {
                            cx.error(
                                other.span(),
                                format!("{} expects integers in `{what}`", self.layer),
                            );
                            return None;
                        }
                    }
                }
                if out.len() != n {
                    cx.error(
                        *span,
                        format!(
                            "{} expects `{what}` as one integer or {n} of them, got {}",
                            self.layer,
                            out.len()
                        ),
                    );
                    return None;
                }
                Some(out)
            }
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{what}` as an integer or a list, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    fn float<C: LayerCx>(&self, cx: &mut C, name: &str, default: f32) -> Option<f32> {
        match self.named(name) {
            None => Some(default),
            Some(Expr::Int(v, _)) => Some(*v as f32),
            Some(Expr::Float(v, _)) => Some(*v as f32),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{name}` to be a number, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    fn boolean<C: LayerCx>(&self, cx: &mut C, name: &str, default: bool) -> Option<bool> {
        match self.named(name) {
            None => Some(default),
            Some(Expr::Bool(b, _)) => Some(*b),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{name}` to be true or false, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    fn string<C: LayerCx>(&self, cx: &mut C, name: &str, default: &str) -> Option<String> {
        match self.named(name) {
            None => Some(default.to_string()),
            Some(Expr::Str(s)) => Some(s.value()),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{name}` to be a string, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    fn explicit_name(&self) -> Option<(String, Span)> {
        match self.named("name") {
            Some(Expr::Str(s)) => Some((s.value(), s.span())),
            _ => None,
        }
    }

    fn x_span(&self) -> Span {
        self.pos.first().map_or(self.call.func.span(), |e| e.span())
    }
}

/// Positional parameters and named options of each layer.
fn signature(layer: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match layer {
        "linear" => (
            &["input", "out_features"],
            &["init", "bias", "bias_init", "name", "weights", "layout"],
        ),
        "conv2d" => (
            &["input", "out_channels", "kernel"],
            &[
                "stride",
                "pad",
                "dilation",
                "groups",
                "bias",
                "init",
                "bias_init",
                "name",
                "weights",
            ],
        ),
        "batch_norm" => (
            &["input"],
            &[
                "epsilon",
                "scale_init",
                "bias_init",
                "mean_init",
                "var_init",
                "name",
                "weights",
                "layout",
            ],
        ),
        "max_pool2d" => (
            &["input", "kernel"],
            &["stride", "pad", "ceil_mode", "name"],
        ),
        "avg_pool2d" => (
            &["input", "kernel"],
            &["stride", "pad", "ceil_mode", "count_include_pad", "name"],
        ),
        "global_avg_pool" | "dropout" => (&["input"], &["name", "ratio"]),
        "flatten" => (&["input"], &["axis", "name"]),
        "lstm" => (
            &["input", "hidden"],
            &[
                "direction",
                "init",
                "recurrent_init",
                "bias_init",
                "bias",
                "name",
                "weights",
                "layout",
            ],
        ),
        "layer_norm" => (
            &["input"],
            &["axis", "epsilon", "scale_init", "bias_init", "name"],
        ),
        "multi_head_attention" => (&["input", "heads"], &["init", "bias_init", "name"]),
        _ => unreachable!("bug: `{layer}` is not a layer"),
    }
}

/// Expands one layer call. Returns the outputs of its last node.
pub(crate) fn expand<C: LayerCx>(
    cx: &mut C,
    call: &Call,
    hint: Option<String>,
) -> Option<Vec<TensorId>> {
    let layer = LAYERS
        .iter()
        .copied()
        .find(|l| call.func == l)
        .expect("is_layer was checked");
    let (positional, named) = signature(layer);
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
        if !named.contains(&key.as_str()) || (layer == "global_avg_pool" && key == "ratio") {
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
    let x_span = args.x_span();
    let func_span = call.func.span();
    let span_of = move |at: At| match at {
        At::Input(0) => x_span,
        _ => func_span,
    };
    let fixed = |d: &Dim| d.fixed();
    let build = |cx: &mut C,
                 op: &str,
                 node: String,
                 inputs: Vec<Option<TensorId>>,
                 attrs: Vec<(&'static str, AttrValue)>| {
        let op = ops::lookup(op).expect("layers lower to registered operators");
        cx.build(op, node, inputs, attrs_with_defaults(op, attrs), &span_of)
    };
    // A weight from its initializer, or from the `weights` file under the key given.
    let weight_keyed = |cx: &mut C,
                        e: Option<&Expr>,
                        default: Expr,
                        wname: String,
                        key: &str,
                        shape: &[usize]|
     -> Option<TensorId> {
        let values = match &file {
            Some(path) => cx.load_checked(path, Some(key), shape, &wname),
            None => init::evaluate(e.unwrap_or(&default), shape),
        };
        match values {
            Ok(v) => Some(cx.add_weight(wname, shape, Data::F32(v))),
            Err((span, msg)) => {
                cx.error(span, msg);
                None
            }
        }
    };
    // The same, with the file key equal to the weight's name.
    let weight = |cx: &mut C,
                  e: Option<&Expr>,
                  default: Expr,
                  wname: String,
                  shape: &[usize]|
     -> Option<TensorId> {
        let key = wname.clone();
        weight_keyed(cx, e, default, wname, &key, shape)
    };
    let call_init = |f: &str, args: &[(&str, Expr)]| {
        Expr::Call(Call {
            func: syn::Ident::new(f, func_span),
            args: args
                .iter()
                .map(|(n, e)| crate::syntax::Arg::Named(syn::Ident::new(n, func_span), e.clone()))
                .collect(),
            close: func_span,
        })
    };
    let seed = |k: usize| Expr::Int(k as i64, func_span);
    let num = |v: f64| Expr::Float(v, func_span);
    let zeros = Expr::Name(syn::Ident::new("zeros", func_span));
    let ones = Expr::Name(syn::Ident::new("ones", func_span));
    let channels = |cx: &mut C, rank: usize| -> Option<usize> {
        if xt.shape.rank() != rank {
            cx.error(
                x_span,
                format!(
                    "{layer} expects a rank-{rank} input {}, got {}",
                    if rank == 4 {
                        "[N, C, H, W]"
                    } else {
                        "[batch, features]"
                    },
                    xt.shape
                ),
            );
            return None;
        }
        let c = xt.shape.0[1].fixed();
        if c.is_none() {
            cx.error(
                x_span,
                format!("{layer} needs a fixed channel dimension, got {}", xt.shape),
            );
        }
        c
    };

    match layer {
        "linear" => {
            let out = args.positive(cx, args.pos.get(1).copied(), "out_features", 1)?;
            let in_f = channels(cx, 2)?;
            // PyTorch stores Linear weights as [out, in]: Gemm reads them with transB = 1.
            let w_shape = if pytorch { [out, in_f] } else { [in_f, out] };
            let default = call_init("glorot_uniform", &[("seed", seed(index))]);
            let w = weight(
                cx,
                args.named("init"),
                default,
                format!("{name}.weight"),
                &w_shape,
            )?;
            let mut inputs = vec![Some(x), Some(w)];
            if args.boolean(cx, "bias", true)? {
                let b = weight(
                    cx,
                    args.named("bias_init"),
                    zeros,
                    format!("{name}.bias"),
                    &[out],
                )?;
                inputs.push(Some(b));
            }
            let attrs = if pytorch {
                vec![("transB", AttrValue::Int(1))]
            } else {
                vec![]
            };
            build(cx, "Gemm", name, inputs, attrs)
        }
        "conv2d" => {
            let out = args.positive(cx, args.pos.get(1).copied(), "out_channels", 1)?;
            let k = args.ints(cx, args.pos.get(2).copied(), "kernel", 2, 1)?;
            let stride = args.ints(cx, args.named("stride"), "stride", 2, 1)?;
            let dil = args.ints(cx, args.named("dilation"), "dilation", 2, 1)?;
            let pads = match args.named("pad") {
                Some(Expr::List(items, _)) if items.len() == 4 => {
                    args.ints(cx, args.named("pad"), "pad", 4, 0)?
                }
                e => {
                    let p = args.ints(cx, e, "pad", 2, 0)?;
                    vec![p[0], p[1], p[0], p[1]]
                }
            };
            let groups = args.positive(cx, args.named("groups"), "groups", 1)?;
            let c = channels(cx, 4)?;
            if c % groups != 0 || out % groups != 0 {
                cx.error(
                    args.named("groups").map_or(func_span, Expr::span),
                    format!("{layer}: groups = {groups} must divide the input channels ({c}) and out_channels ({out})"),
                );
                return None;
            }
            if k.iter().chain(&stride).chain(&dil).any(|&v| v <= 0) || pads.iter().any(|&p| p < 0) {
                cx.error(
                    func_span,
                    format!(
                        "{layer}: kernel, stride and dilation must be positive and pad non-negative"
                    ),
                );
                return None;
            }
            let shape = [out, c / groups, k[0] as usize, k[1] as usize];
            let w = weight(
                cx,
                args.named("init"),
                call_init("he_normal", &[("seed", seed(index))]),
                format!("{name}.weight"),
                &shape,
            )?;
            let mut inputs = vec![Some(x), Some(w)];
            if args.boolean(cx, "bias", true)? {
                inputs.push(Some(weight(
                    cx,
                    args.named("bias_init"),
                    zeros,
                    format!("{name}.bias"),
                    &[out],
                )?));
            }
            build(
                cx,
                "Conv",
                name,
                inputs,
                vec![
                    ("dilations", AttrValue::Ints(dil)),
                    ("group", AttrValue::Int(groups as i64)),
                    ("kernel_shape", AttrValue::Ints(k)),
                    ("pads", AttrValue::Ints(pads)),
                    ("strides", AttrValue::Ints(stride)),
                ],
            )
        }
        "batch_norm" => {
            if xt.shape.rank() < 2 {
                cx.error(
                    x_span,
                    format!("{layer} expects an input [N, C, ...], got {}", xt.shape),
                );
                return None;
            }
            let Some(c) = xt.shape.0[1].fixed() else {
                cx.error(
                    x_span,
                    format!("{layer} needs a fixed channel dimension, got {}", xt.shape),
                );
                return None;
            };
            let eps = args.float(cx, "epsilon", 1e-5)?;
            // PyTorch names: weight, bias, running_mean, running_var.
            let key =
                |onnx: &str, torch: &str| format!("{name}.{}", if pytorch { torch } else { onnx });
            let (sinit, binit) = (args.named("scale_init"), args.named("bias_init"));
            let (minit, vinit) = (args.named("mean_init"), args.named("var_init"));
            let k = key("scale", "weight");
            let scale = weight_keyed(cx, sinit, ones.clone(), format!("{name}.scale"), &k, &[c])?;
            let k = key("bias", "bias");
            let bias = weight_keyed(cx, binit, zeros.clone(), format!("{name}.bias"), &k, &[c])?;
            let k = key("mean", "running_mean");
            let mean = weight_keyed(cx, minit, zeros, format!("{name}.mean"), &k, &[c])?;
            let k = key("var", "running_var");
            let var = weight_keyed(cx, vinit, ones, format!("{name}.var"), &k, &[c])?;
            build(
                cx,
                "BatchNormalization",
                name,
                vec![Some(x), Some(scale), Some(bias), Some(mean), Some(var)],
                vec![("epsilon", AttrValue::Float(eps))],
            )
        }
        "max_pool2d" | "avg_pool2d" => {
            let k = args.ints(cx, args.pos.get(1).copied(), "kernel", 2, 1)?;
            let stride = match args.named("stride") {
                None => k.clone(),
                e => args.ints(cx, e, "stride", 2, 1)?,
            };
            let p = args.ints(cx, args.named("pad"), "pad", 2, 0)?;
            let ceil = args.boolean(cx, "ceil_mode", false)?;
            let mut attrs = vec![
                ("ceil_mode", AttrValue::Int(i64::from(ceil))),
                ("kernel_shape", AttrValue::Ints(k)),
                ("pads", AttrValue::Ints(vec![p[0], p[1], p[0], p[1]])),
                ("strides", AttrValue::Ints(stride)),
            ];
            let op = if layer == "max_pool2d" {
                "MaxPool"
            } else {
                let cip = args.boolean(cx, "count_include_pad", false)?;
                attrs.push(("count_include_pad", AttrValue::Int(i64::from(cip))));
                "AveragePool"
            };
            build(cx, op, name, vec![Some(x)], attrs)
        }
        "global_avg_pool" => build(cx, "GlobalAveragePool", name, vec![Some(x)], vec![]),
        "flatten" => {
            let axis = args.int(cx, args.named("axis"), "axis", 1)?;
            build(
                cx,
                "Flatten",
                name,
                vec![Some(x)],
                vec![("axis", AttrValue::Int(axis))],
            )
        }
        "dropout" => {
            let mut inputs = vec![Some(x)];
            if args.named("ratio").is_some() {
                let r = args.float(cx, "ratio", 0.5)?;
                if !(0.0..1.0).contains(&r) {
                    cx.error(
                        args.named("ratio").map_or(func_span, Expr::span),
                        "dropout ratio must be in [0, 1)",
                    );
                    return None;
                }
                inputs.push(Some(cx.add_weight(
                    format!("{name}.ratio"),
                    &[],
                    Data::F32(vec![r]),
                )));
            }
            build(cx, "Dropout", name, inputs, vec![])
        }
        "lstm" => {
            let hidden = args.positive(cx, args.pos.get(1).copied(), "hidden", 1)?;
            let direction = args.string(cx, "direction", "forward")?;
            let dirs = match direction.as_str() {
                "forward" | "reverse" => 1,
                "bidirectional" => 2,
                other => {
                    cx.error(
                        args.named("direction").map_or(func_span, Expr::span),
                        format!("lstm direction must be \"forward\", \"reverse\" or \"bidirectional\", got \"{other}\""),
                    );
                    return None;
                }
            };
            if xt.shape.rank() != 3 {
                cx.error(
                    x_span,
                    format!(
                        "lstm expects an input [seq, batch, features], got {}",
                        xt.shape
                    ),
                );
                return None;
            }
            let Some(input) = xt.shape.0[2].fixed() else {
                cx.error(
                    x_span,
                    format!("lstm needs a fixed number of features, got {}", xt.shape),
                );
                return None;
            };
            let k = 1.0 / (hidden as f64).sqrt();
            let uni = |s: usize| {
                call_init(
                    "uniform",
                    &[("low", num(-k)), ("high", num(k)), ("seed", seed(s))],
                )
            };
            let bias = args.boolean(cx, "bias", true)?;
            let mut inputs = vec![Some(x)];
            if pytorch {
                let path = file.as_ref().expect("checked: pytorch needs a file");
                let (w, r, b) = pytorch_lstm(cx, path, &name, dirs, hidden, input, bias)?;
                let w_shape = [dirs, 4 * hidden, input];
                let r_shape = [dirs, 4 * hidden, hidden];
                inputs.push(Some(cx.add_weight(
                    format!("{name}.W"),
                    &w_shape,
                    Data::F32(w),
                )));
                inputs.push(Some(cx.add_weight(
                    format!("{name}.R"),
                    &r_shape,
                    Data::F32(r),
                )));
                if let Some(b) = b {
                    let b_shape = [dirs, 8 * hidden];
                    inputs.push(Some(cx.add_weight(
                        format!("{name}.B"),
                        &b_shape,
                        Data::F32(b),
                    )));
                }
            } else {
                let w_shape = [dirs, 4 * hidden, input];
                let r_shape = [dirs, 4 * hidden, hidden];
                let init = args.named("init");
                let w = weight(cx, init, uni(3 * index), format!("{name}.W"), &w_shape)?;
                let rinit = args.named("recurrent_init");
                let r = weight(cx, rinit, uni(3 * index + 1), format!("{name}.R"), &r_shape)?;
                inputs.push(Some(w));
                inputs.push(Some(r));
                if bias {
                    let binit = args.named("bias_init");
                    let b_shape = [dirs, 8 * hidden];
                    let b = weight(cx, binit, uni(3 * index + 2), format!("{name}.B"), &b_shape)?;
                    inputs.push(Some(b));
                }
            }
            build(
                cx,
                "LSTM",
                name,
                inputs,
                vec![
                    ("direction", AttrValue::Str(direction)),
                    ("hidden_size", AttrValue::Int(hidden as i64)),
                ],
            )
        }
        "layer_norm" => {
            let axis = args.int(cx, args.named("axis"), "axis", -1)?;
            let eps = args.float(cx, "epsilon", 1e-5)?;
            let rank = xt.shape.rank() as i64;
            if axis < -rank || axis >= rank {
                cx.error(
                    args.named("axis").map_or(func_span, Expr::span),
                    format!("layer_norm axis = {axis} is out of range for {}", xt.shape),
                );
                return None;
            }
            let a = if axis < 0 { axis + rank } else { axis } as usize;
            let norm: Option<Vec<usize>> = xt.shape.0[a..].iter().map(fixed).collect();
            let Some(norm) = norm else {
                cx.error(
                    x_span,
                    format!(
                        "layer_norm needs fixed normalized dimensions, got {}",
                        xt.shape
                    ),
                );
                return None;
            };
            let scale = weight(
                cx,
                args.named("scale_init"),
                ones,
                format!("{name}.scale"),
                &norm,
            )?;
            let bias = weight(
                cx,
                args.named("bias_init"),
                zeros,
                format!("{name}.bias"),
                &norm,
            )?;
            build(
                cx,
                "LayerNormalization",
                name,
                vec![Some(x), Some(scale), Some(bias)],
                vec![
                    ("axis", AttrValue::Int(axis)),
                    ("epsilon", AttrValue::Float(eps)),
                ],
            )
        }
        "multi_head_attention" => {
            let heads = args.positive(cx, args.pos.get(1).copied(), "heads", 1)?;
            if xt.shape.rank() != 3 {
                cx.error(
                    x_span,
                    format!(
                        "multi_head_attention expects an input [batch, seq, d_model], got {}",
                        xt.shape
                    ),
                );
                return None;
            }
            let (Some(seq), Some(d)) = (xt.shape.0[1].fixed(), xt.shape.0[2].fixed()) else {
                cx.error(
                    x_span,
                    format!(
                        "multi_head_attention needs fixed seq and d_model, got {}",
                        xt.shape
                    ),
                );
                return None;
            };
            if d % heads != 0 {
                cx.error(
                    args.pos[1].span(),
                    format!(
                        "multi_head_attention: d_model = {d} is not divisible by heads = {heads}"
                    ),
                );
                return None;
            }
            let hd = d / heads;
            let proj = |cx: &mut C, input: TensorId, part: &str, k: usize| -> Option<TensorId> {
                let w = weight(
                    cx,
                    args.named("init"),
                    call_init("glorot_uniform", &[("seed", seed(4 * index + k))]),
                    format!("{name}.{part}.weight"),
                    &[d, d],
                )?;
                let b = weight(
                    cx,
                    args.named("bias_init"),
                    zeros.clone(),
                    format!("{name}.{part}.bias"),
                    &[d],
                )?;
                let m = build(
                    cx,
                    "MatMul",
                    format!("{name}.{part}.matmul"),
                    vec![Some(input), Some(w)],
                    vec![],
                )?[0];
                Some(
                    build(
                        cx,
                        "Add",
                        format!("{name}.{part}.add"),
                        vec![Some(m), Some(b)],
                        vec![],
                    )?[0],
                )
            };
            let q = proj(cx, x, "q", 0)?;
            let k = proj(cx, x, "k", 1)?;
            let v = proj(cx, x, "v", 2)?;
            let split_shape = cx.add_weight(
                format!("{name}.split_shape"),
                &[4],
                Data::I64(vec![-1, seq as i64, heads as i64, hd as i64]),
            );
            let heads_of =
                |cx: &mut C, t: TensorId, part: &str, perm: Vec<i64>| -> Option<TensorId> {
                    let r = build(
                        cx,
                        "Reshape",
                        format!("{name}.{part}.split"),
                        vec![Some(t), Some(split_shape)],
                        vec![],
                    )?[0];
                    Some(
                        build(
                            cx,
                            "Transpose",
                            format!("{name}.{part}.heads"),
                            vec![Some(r)],
                            vec![("perm", AttrValue::Ints(perm))],
                        )?[0],
                    )
                };
            let qh = heads_of(cx, q, "q", vec![0, 2, 1, 3])?;
            let kt = heads_of(cx, k, "k", vec![0, 2, 3, 1])?;
            let vh = heads_of(cx, v, "v", vec![0, 2, 1, 3])?;
            let scores = build(
                cx,
                "MatMul",
                format!("{name}.scores"),
                vec![Some(qh), Some(kt)],
                vec![],
            )?[0];
            let scale = cx.add_weight(
                format!("{name}.scale"),
                &[],
                Data::F32(vec![(1.0 / (hd as f64).sqrt()) as f32]),
            );
            let scaled = build(
                cx,
                "Mul",
                format!("{name}.scaled"),
                vec![Some(scores), Some(scale)],
                vec![],
            )?[0];
            let probs = build(
                cx,
                "Softmax",
                format!("{name}.probs"),
                vec![Some(scaled)],
                vec![("axis", AttrValue::Int(-1))],
            )?[0];
            let ctx = build(
                cx,
                "MatMul",
                format!("{name}.context"),
                vec![Some(probs), Some(vh)],
                vec![],
            )?[0];
            let merged = build(
                cx,
                "Transpose",
                format!("{name}.merge"),
                vec![Some(ctx)],
                vec![("perm", AttrValue::Ints(vec![0, 2, 1, 3]))],
            )?[0];
            let merge_shape = cx.add_weight(
                format!("{name}.merge_shape"),
                &[3],
                Data::I64(vec![-1, seq as i64, d as i64]),
            );
            let flat = build(
                cx,
                "Reshape",
                format!("{name}.concat_heads"),
                vec![Some(merged), Some(merge_shape)],
                vec![],
            )?[0];
            let out = proj(cx, flat, "out", 3)?;
            Some(vec![out])
        }
        _ => unreachable!("bug: `{layer}` has no expansion"),
    }
}

/// ONNX LSTM W, R and (optional) B values.
type LstmWeights = (Vec<f32>, Vec<f32>, Option<Vec<f32>>);

/// PyTorch `nn.LSTM` weights (`weight_ih_l0` `[4H, I]`, `weight_hh_l0` `[4H, H]`,
/// `bias_ih_l0`, `bias_hh_l0` `[4H]`, with `_reverse` for the second direction), gate order
/// i, f, g, o, converted to ONNX's W, R, B with gate order i, o, f, c.
fn pytorch_lstm<C: LayerCx>(
    cx: &mut C,
    path: &syn::LitStr,
    name: &str,
    dirs: usize,
    hidden: usize,
    input: usize,
    bias: bool,
) -> Option<LstmWeights> {
    // ONNX gate k takes PyTorch gate ORDER[k]: i <- i, o <- o (3), f <- f (1), c <- g (2).
    const ORDER: [usize; 4] = [0, 3, 1, 2];
    let reorder = |v: &[f32], per_gate: usize| -> Vec<f32> {
        ORDER
            .iter()
            .flat_map(|&g| v[g * per_gate..(g + 1) * per_gate].iter().copied())
            .collect()
    };
    let (mut w, mut r, mut b) = (Vec::new(), Vec::new(), Vec::new());
    for d in 0..dirs {
        let suffix = if d == 1 { "_reverse" } else { "" };
        let mut get = |key: &str, shape: &[usize]| {
            let full = format!("{name}.{key}_l0{suffix}");
            cx.load_checked(path, Some(&full), shape, &full)
                .map_err(|(span, msg)| cx.error(span, msg))
                .ok()
        };
        w.extend(reorder(
            &get("weight_ih", &[4 * hidden, input])?,
            hidden * input,
        ));
        r.extend(reorder(
            &get("weight_hh", &[4 * hidden, hidden])?,
            hidden * hidden,
        ));
        if bias {
            let bi = get("bias_ih", &[4 * hidden])?;
            let bh = get("bias_hh", &[4 * hidden])?;
            b.extend(reorder(&bi, hidden));
            b.extend(reorder(&bh, hidden));
        }
    }
    Some((w, r, bias.then_some(b)))
}
