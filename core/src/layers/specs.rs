//! The layers: one entry of [`SPECS`] and one builder each. A builder reads its call's
//! arguments and makes its weights and nodes through the [`Layer`] it is given; a new
//! layer is one entry and one function here.
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

use crate::ir::{Data, TensorId};
use crate::ops::AttrValue;
use crate::syntax::Expr;
use crate::types::Dim;

use super::cx::LayerCx;
use super::layer::{Layer, LayerSpec};

/// Every layer, in the order the documentation lists them.
pub(crate) const SPECS: &[LayerSpec] = &[
    LayerSpec {
        name: "linear",
        frameworks: &["Linear", "Dense"],
        positional: &["input", "out_features"],
        named: &["init", "bias", "bias_init", "name", "weights", "layout"],
        build: linear,
    },
    LayerSpec {
        name: "conv2d",
        frameworks: &["Conv2d", "Conv2D"],
        positional: &["input", "out_channels", "kernel"],
        named: &[
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
        build: conv2d,
    },
    LayerSpec {
        name: "batch_norm",
        frameworks: &["BatchNorm2d", "BatchNormalization2D"],
        positional: &["input"],
        named: &[
            "epsilon",
            "scale_init",
            "bias_init",
            "mean_init",
            "var_init",
            "name",
            "weights",
            "layout",
        ],
        build: batch_norm,
    },
    LayerSpec {
        name: "max_pool2d",
        frameworks: &["MaxPool2d", "MaxPooling2D"],
        positional: &["input", "kernel"],
        named: &["stride", "pad", "ceil_mode", "name"],
        build: pool2d,
    },
    LayerSpec {
        name: "avg_pool2d",
        frameworks: &["AvgPool2d", "AveragePooling2D"],
        positional: &["input", "kernel"],
        named: &["stride", "pad", "ceil_mode", "count_include_pad", "name"],
        build: pool2d,
    },
    LayerSpec {
        name: "global_avg_pool",
        frameworks: &["AdaptiveAvgPool2d", "GlobalAveragePooling2D"],
        positional: &["input"],
        named: &["name"],
        build: global_avg_pool,
    },
    LayerSpec {
        name: "flatten",
        frameworks: &[],
        positional: &["input"],
        named: &["axis", "name"],
        build: flatten,
    },
    LayerSpec {
        name: "lstm",
        frameworks: &[],
        positional: &["input", "hidden"],
        named: &[
            "direction",
            "init",
            "recurrent_init",
            "bias_init",
            "bias",
            "name",
            "weights",
            "layout",
        ],
        build: lstm,
    },
    LayerSpec {
        name: "layer_norm",
        frameworks: &["LayerNorm"],
        positional: &["input"],
        named: &["axis", "epsilon", "scale_init", "bias_init", "name"],
        build: layer_norm,
    },
    LayerSpec {
        name: "multi_head_attention",
        frameworks: &["MultiheadAttention"],
        positional: &["input", "heads"],
        named: &["init", "bias_init", "name"],
        build: multi_head_attention,
    },
    LayerSpec {
        name: "dropout",
        frameworks: &[],
        positional: &["input"],
        named: &["name", "ratio"],
        build: dropout,
    },
];

fn linear(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let name = l.name.clone();
    let x = l.x;
    let pytorch = l.pytorch;
    let index = l.index;
    let out = args.positive(l.cx, args.pos.get(1).copied(), "out_features", 1)?;
    let in_f = l.channels(2)?;
    // PyTorch stores Linear weights as [out, in]: Gemm reads them with transB = 1.
    let w_shape = if pytorch { [out, in_f] } else { [in_f, out] };
    let default = l.call_init("glorot_uniform", &[("seed", l.seed(index))]);
    let w = l.weight(
        args.named("init"),
        default,
        format!("{name}.weight"),
        &w_shape,
    )?;
    let mut inputs = vec![Some(x), Some(w)];
    if args.boolean(l.cx, "bias", true)? {
        let b = l.weight(
            args.named("bias_init"),
            l.zeros(),
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
    l.build("Gemm", name, inputs, attrs)
}

fn conv2d(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let layer = l.layer;
    let name = l.name.clone();
    let x = l.x;
    let func_span = l.func_span;
    let index = l.index;
    let out = args.positive(l.cx, args.pos.get(1).copied(), "out_channels", 1)?;
    let k = args.ints(l.cx, args.pos.get(2).copied(), "kernel", 2, 1)?;
    let stride = args.ints(l.cx, args.named("stride"), "stride", 2, 1)?;
    let dil = args.ints(l.cx, args.named("dilation"), "dilation", 2, 1)?;
    let pads = match args.named("pad") {
        Some(Expr::List(items, _)) if items.len() == 4 => {
            args.ints(l.cx, args.named("pad"), "pad", 4, 0)?
        }
        e => {
            let p = args.ints(l.cx, e, "pad", 2, 0)?;
            vec![p[0], p[1], p[0], p[1]]
        }
    };
    let groups = args.positive(l.cx, args.named("groups"), "groups", 1)?;
    let c = l.channels(4)?;
    if c % groups != 0 || out % groups != 0 {
        l.cx.error(
            args.named("groups").map_or(func_span, Expr::span),
            format!("{layer}: groups = {groups} must divide the input channels ({c}) and out_channels ({out})"),
        );
        return None;
    }
    if k.iter().chain(&stride).chain(&dil).any(|&v| v <= 0) || pads.iter().any(|&p| p < 0) {
        l.cx.error(
            func_span,
            format!("{layer}: kernel, stride and dilation must be positive and pad non-negative"),
        );
        return None;
    }
    let shape = [out, c / groups, k[0] as usize, k[1] as usize];
    let w = l.weight(
        args.named("init"),
        l.call_init("he_normal", &[("seed", l.seed(index))]),
        format!("{name}.weight"),
        &shape,
    )?;
    let mut inputs = vec![Some(x), Some(w)];
    if args.boolean(l.cx, "bias", true)? {
        inputs.push(Some(l.weight(
            args.named("bias_init"),
            l.zeros(),
            format!("{name}.bias"),
            &[out],
        )?));
    }
    l.build(
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

fn batch_norm(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let layer = l.layer;
    let name = l.name.clone();
    let x = l.x;
    let xt = l.xt.clone();
    let x_span = l.x_span;
    let pytorch = l.pytorch;
    if xt.shape.rank() < 2 {
        l.cx.error(
            x_span,
            format!("{layer} expects an input [N, C, ...], got {}", xt.shape),
        );
        return None;
    }
    let Some(c) = xt.shape.0[1].fixed() else {
        l.cx.error(
            x_span,
            format!("{layer} needs a fixed channel dimension, got {}", xt.shape),
        );
        return None;
    };
    let eps = args.float(l.cx, "epsilon", 1e-5)?;
    // PyTorch names: weight, bias, running_mean, running_var.
    let key = |onnx: &str, torch: &str| format!("{name}.{}", if pytorch { torch } else { onnx });
    let (sinit, binit) = (args.named("scale_init"), args.named("bias_init"));
    let (minit, vinit) = (args.named("mean_init"), args.named("var_init"));
    let k = key("scale", "weight");
    let scale = l.weight_keyed(sinit, l.ones(), format!("{name}.scale"), &k, &[c])?;
    let k = key("bias", "bias");
    let bias = l.weight_keyed(binit, l.zeros(), format!("{name}.bias"), &k, &[c])?;
    let k = key("mean", "running_mean");
    let mean = l.weight_keyed(minit, l.zeros(), format!("{name}.mean"), &k, &[c])?;
    let k = key("var", "running_var");
    let var = l.weight_keyed(vinit, l.ones(), format!("{name}.var"), &k, &[c])?;
    l.build(
        "BatchNormalization",
        name,
        vec![Some(x), Some(scale), Some(bias), Some(mean), Some(var)],
        vec![("epsilon", AttrValue::Float(eps))],
    )
}

fn pool2d(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let layer = l.layer;
    let name = l.name.clone();
    let x = l.x;
    let k = args.ints(l.cx, args.pos.get(1).copied(), "kernel", 2, 1)?;
    let stride = match args.named("stride") {
        None => k.clone(),
        e => args.ints(l.cx, e, "stride", 2, 1)?,
    };
    let p = args.ints(l.cx, args.named("pad"), "pad", 2, 0)?;
    let ceil = args.boolean(l.cx, "ceil_mode", false)?;
    let mut attrs = vec![
        ("ceil_mode", AttrValue::Int(i64::from(ceil))),
        ("kernel_shape", AttrValue::Ints(k)),
        ("pads", AttrValue::Ints(vec![p[0], p[1], p[0], p[1]])),
        ("strides", AttrValue::Ints(stride)),
    ];
    let op = if layer == "max_pool2d" {
        "MaxPool"
    } else {
        let cip = args.boolean(l.cx, "count_include_pad", false)?;
        attrs.push(("count_include_pad", AttrValue::Int(i64::from(cip))));
        "AveragePool"
    };
    l.build(op, name, vec![Some(x)], attrs)
}

fn global_avg_pool(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let name = l.name.clone();
    let x = l.x;
    l.build("GlobalAveragePool", name, vec![Some(x)], vec![])
}

fn flatten(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let name = l.name.clone();
    let x = l.x;
    let axis = args.int(l.cx, args.named("axis"), "axis", 1)?;
    l.build(
        "Flatten",
        name,
        vec![Some(x)],
        vec![("axis", AttrValue::Int(axis))],
    )
}

fn dropout(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let name = l.name.clone();
    let x = l.x;
    let func_span = l.func_span;
    let mut inputs = vec![Some(x)];
    if args.named("ratio").is_some() {
        let r = args.float(l.cx, "ratio", 0.5)?;
        if !(0.0..1.0).contains(&r) {
            l.cx.error(
                args.named("ratio").map_or(func_span, Expr::span),
                "dropout ratio must be in [0, 1)".into(),
            );
            return None;
        }
        inputs.push(Some(l.cx.add_weight(
            format!("{name}.ratio"),
            &[],
            Data::F32(vec![r]),
        )));
    }
    l.build("Dropout", name, inputs, vec![])
}

fn lstm(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let name = l.name.clone();
    let x = l.x;
    let xt = l.xt.clone();
    let x_span = l.x_span;
    let func_span = l.func_span;
    let file = l.file.clone();
    let pytorch = l.pytorch;
    let index = l.index;
    let hidden = args.positive(l.cx, args.pos.get(1).copied(), "hidden", 1)?;
    let direction = args.string(l.cx, "direction", "forward")?;
    let dirs = match direction.as_str() {
        "forward" | "reverse" => 1,
        "bidirectional" => 2,
        other => {
            l.cx.error(
                args.named("direction").map_or(func_span, Expr::span),
                format!("lstm direction must be \"forward\", \"reverse\" or \"bidirectional\", got \"{other}\""),
            );
            return None;
        }
    };
    if xt.shape.rank() != 3 {
        l.cx.error(
            x_span,
            format!(
                "lstm expects an input [seq, batch, features], got {}",
                xt.shape
            ),
        );
        return None;
    }
    let Some(input) = xt.shape.0[2].fixed() else {
        l.cx.error(
            x_span,
            format!("lstm needs a fixed number of features, got {}", xt.shape),
        );
        return None;
    };
    let k = 1.0 / (hidden as f64).sqrt();
    let uni = |l: &Layer<'_>, s: usize| {
        l.call_init(
            "uniform",
            &[("low", l.num(-k)), ("high", l.num(k)), ("seed", l.seed(s))],
        )
    };
    let bias = args.boolean(l.cx, "bias", true)?;
    let mut inputs = vec![Some(x)];
    if pytorch {
        let path = file.as_ref().expect("checked: pytorch needs a file");
        let (w, r, b) = pytorch_lstm(l.cx, path, &name, dirs, hidden, input, bias)?;
        let w_shape = [dirs, 4 * hidden, input];
        let r_shape = [dirs, 4 * hidden, hidden];
        inputs.push(Some(l.cx.add_weight(
            format!("{name}.W"),
            &w_shape,
            Data::F32(w),
        )));
        inputs.push(Some(l.cx.add_weight(
            format!("{name}.R"),
            &r_shape,
            Data::F32(r),
        )));
        if let Some(b) = b {
            let b_shape = [dirs, 8 * hidden];
            inputs.push(Some(l.cx.add_weight(
                format!("{name}.B"),
                &b_shape,
                Data::F32(b),
            )));
        }
    } else {
        let w_shape = [dirs, 4 * hidden, input];
        let r_shape = [dirs, 4 * hidden, hidden];
        let init = args.named("init");
        let w = l.weight(init, uni(l, 3 * index), format!("{name}.W"), &w_shape)?;
        let rinit = args.named("recurrent_init");
        let r = l.weight(rinit, uni(l, 3 * index + 1), format!("{name}.R"), &r_shape)?;
        inputs.push(Some(w));
        inputs.push(Some(r));
        if bias {
            let binit = args.named("bias_init");
            let b_shape = [dirs, 8 * hidden];
            let b = l.weight(binit, uni(l, 3 * index + 2), format!("{name}.B"), &b_shape)?;
            inputs.push(Some(b));
        }
    }
    l.build(
        "LSTM",
        name,
        inputs,
        vec![
            ("direction", AttrValue::Str(direction)),
            ("hidden_size", AttrValue::Int(hidden as i64)),
        ],
    )
}

fn layer_norm(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let name = l.name.clone();
    let x = l.x;
    let xt = l.xt.clone();
    let x_span = l.x_span;
    let func_span = l.func_span;
    let fixed = |d: &Dim| d.fixed();
    let axis = args.int(l.cx, args.named("axis"), "axis", -1)?;
    let eps = args.float(l.cx, "epsilon", 1e-5)?;
    let rank = xt.shape.rank() as i64;
    if axis < -rank || axis >= rank {
        l.cx.error(
            args.named("axis").map_or(func_span, Expr::span),
            format!("layer_norm axis = {axis} is out of range for {}", xt.shape),
        );
        return None;
    }
    let a = if axis < 0 { axis + rank } else { axis } as usize;
    let norm: Option<Vec<usize>> = xt.shape.0[a..].iter().map(fixed).collect();
    let Some(norm) = norm else {
        l.cx.error(
            x_span,
            format!(
                "layer_norm needs fixed normalized dimensions, got {}",
                xt.shape
            ),
        );
        return None;
    };
    let scale = l.weight(
        args.named("scale_init"),
        l.ones(),
        format!("{name}.scale"),
        &norm,
    )?;
    let bias = l.weight(
        args.named("bias_init"),
        l.zeros(),
        format!("{name}.bias"),
        &norm,
    )?;
    l.build(
        "LayerNormalization",
        name,
        vec![Some(x), Some(scale), Some(bias)],
        vec![
            ("axis", AttrValue::Int(axis)),
            ("epsilon", AttrValue::Float(eps)),
        ],
    )
}

fn multi_head_attention(l: &mut Layer<'_>) -> Option<Vec<TensorId>> {
    let args = l.args.clone();
    let name = l.name.clone();
    let x = l.x;
    let xt = l.xt.clone();
    let x_span = l.x_span;
    let index = l.index;
    let heads = args.positive(l.cx, args.pos.get(1).copied(), "heads", 1)?;
    if xt.shape.rank() != 3 {
        l.cx.error(
            x_span,
            format!(
                "multi_head_attention expects an input [batch, seq, d_model], got {}",
                xt.shape
            ),
        );
        return None;
    }
    let (Some(seq), Some(d)) = (xt.shape.0[1].fixed(), xt.shape.0[2].fixed()) else {
        l.cx.error(
            x_span,
            format!(
                "multi_head_attention needs fixed seq and d_model, got {}",
                xt.shape
            ),
        );
        return None;
    };
    if d % heads != 0 {
        l.cx.error(
            args.pos[1].span(),
            format!("multi_head_attention: d_model = {d} is not divisible by heads = {heads}"),
        );
        return None;
    }
    let hd = d / heads;
    let proj = |l: &mut Layer<'_>, input: TensorId, part: &str, k: usize| -> Option<TensorId> {
        let w = l.weight(
            args.named("init"),
            l.call_init("glorot_uniform", &[("seed", l.seed(4 * index + k))]),
            format!("{name}.{part}.weight"),
            &[d, d],
        )?;
        let b = l.weight(
            args.named("bias_init"),
            l.zeros(),
            format!("{name}.{part}.bias"),
            &[d],
        )?;
        let m = l.node("MatMul", &format!("{part}.matmul"), &[input, w], vec![])?;
        l.node("Add", &format!("{part}.add"), &[m, b], vec![])
    };
    let q = proj(l, x, "q", 0)?;
    let k = proj(l, x, "k", 1)?;
    let v = proj(l, x, "v", 2)?;
    let split_shape = l.cx.add_weight(
        format!("{name}.split_shape"),
        &[4],
        Data::I64(vec![-1, seq as i64, heads as i64, hd as i64]),
    );
    let heads_of =
        |l: &mut Layer<'_>, t: TensorId, part: &str, perm: Vec<i64>| -> Option<TensorId> {
            let r = l.node(
                "Reshape",
                &format!("{part}.split"),
                &[t, split_shape],
                vec![],
            )?;
            let perm = vec![("perm", AttrValue::Ints(perm))];
            l.node("Transpose", &format!("{part}.heads"), &[r], perm)
        };
    let qh = heads_of(l, q, "q", vec![0, 2, 1, 3])?;
    let kt = heads_of(l, k, "k", vec![0, 2, 3, 1])?;
    let vh = heads_of(l, v, "v", vec![0, 2, 1, 3])?;
    let scores = l.node("MatMul", "scores", &[qh, kt], vec![])?;
    let scale = l.cx.add_weight(
        format!("{name}.scale"),
        &[],
        Data::F32(vec![(1.0 / (hd as f64).sqrt()) as f32]),
    );
    let scaled = l.node("Mul", "scaled", &[scores, scale], vec![])?;
    let axis = vec![("axis", AttrValue::Int(-1))];
    let probs = l.node("Softmax", "probs", &[scaled], axis)?;
    let ctx = l.node("MatMul", "context", &[probs, vh], vec![])?;
    let perm = vec![("perm", AttrValue::Ints(vec![0, 2, 1, 3]))];
    let merged = l.node("Transpose", "merge", &[ctx], perm)?;
    let merge_shape = l.cx.add_weight(
        format!("{name}.merge_shape"),
        &[3],
        Data::I64(vec![-1, seq as i64, d as i64]),
    );
    let flat = l.node("Reshape", "concat_heads", &[merged, merge_shape], vec![])?;
    let out = proj(l, flat, "out", 3)?;
    Some(vec![out])
}

/// ONNX LSTM W, R and (optional) B values.
type LstmWeights = (Vec<f32>, Vec<f32>, Option<Vec<f32>>);

/// PyTorch `nn.LSTM` weights (`weight_ih_l0` `[4H, I]`, `weight_hh_l0` `[4H, H]`,
/// `bias_ih_l0`, `bias_hh_l0` `[4H]`, with `_reverse` for the second direction), gate order
/// i, f, g, o, converted to ONNX's W, R, B with gate order i, o, f, c.
fn pytorch_lstm(
    cx: &mut dyn LayerCx,
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

#[cfg(test)]
mod tests {
    use super::SPECS;

    #[test]
    fn layer_names_are_unique_and_shadow_no_operator() {
        for (i, spec) in SPECS.iter().enumerate() {
            assert!(
                SPECS[..i].iter().all(|s| s.name != spec.name),
                "{} listed twice",
                spec.name
            );
            assert!(crate::ops::lookup(spec.name).is_none(), "{}", spec.name);
            assert_eq!(spec.positional.first(), Some(&"input"), "{}", spec.name);
            for f in spec.frameworks {
                assert_eq!(crate::layers::framework_alias(f), Some(spec.name));
            }
        }
    }
}
