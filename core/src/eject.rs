//! Eject: a checked graph written back as an `onnx_model!` in the DSL, with its f32
//! weights in one `.safetensors` file the DSL `load`s. What `cargo xtask import` writes
//! for an imported file, so that the model can be edited as source. Reads only the
//! graph (a stage beside `emit_onnx`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::data::Data;
use crate::ir::{Control, ControlKind, Graph, Node, Optimize, TensorId, Winograd};
use crate::ops::AttrValue;

/// The DSL source and the weights file it loads.
#[derive(Debug)]
pub struct Ejected {
    /// `tinyonnx::onnx_model! { ... }`.
    pub source: String,
    /// The f32 weights, by the names `load` uses.
    pub safetensors: Vec<u8>,
}

/// Rust keywords, which cannot name a tensor in the DSL.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod",
    "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
    "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "do", "final",
    "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield", "union", "_",
];

/// Readable, unique identifiers for the tensors' names (`/conv1/Conv_output_0` ->
/// `conv1_conv_output_0`).
struct Names {
    by_tensor: HashMap<TensorId, String>,
    taken: HashSet<String>,
}

impl Names {
    fn ident(&mut self, id: TensorId, name: &str) -> String {
        if let Some(s) = self.by_tensor.get(&id) {
            return s.clone();
        }
        let mut s: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        // Runs of underscores and the ones at either end say nothing.
        while s.contains("__") {
            s = s.replace("__", "_");
        }
        let mut s = s.trim_matches('_').to_string();
        if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
            s = format!("t_{s}");
        }
        if KEYWORDS.contains(&s.as_str()) {
            s.push('_');
        }
        let mut unique = s.clone();
        let mut k = 2;
        while !self.taken.insert(unique.clone()) {
            unique = format!("{s}_{k}");
            k += 1;
        }
        self.by_tensor.insert(id, unique.clone());
        unique
    }
}

/// A float literal of the DSL: the shortest text that reads back as the same value,
/// with a `.0` where that has no point or exponent.
fn float_text(text: String, finite: bool) -> Result<String, String> {
    if !finite {
        return Err(format!("the value {text} has no literal in the DSL"));
    }
    Ok(if text.contains(['.', 'e', 'E']) {
        text
    } else {
        format!("{text}.0")
    })
}

fn float(v: f64) -> Result<String, String> {
    float_text(format!("{v:?}"), v.is_finite())
}

fn f32_text(v: f32) -> Result<String, String> {
    float_text(format!("{v:?}"), v.is_finite())
}

fn attr(v: &AttrValue) -> Result<String, String> {
    Ok(match v {
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => f32_text(*f)?,
        AttrValue::Ints(v) => format!(
            "[{}]",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
        AttrValue::Floats(v) => format!(
            "[{}]",
            v.iter()
                .map(|f| f32_text(*f))
                .collect::<Result<Vec<_>, _>>()?
                .join(", ")
        ),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::Strs(v) => format!(
            "[{}]",
            v.iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// Writes nodes as `let` items, control-flow nodes as `if` and `for` with their bodies.
struct Writer<'a> {
    graph: &'a Graph,
    names: &'a mut Names,
    used: &'a HashSet<TensorId>,
    /// Nodes written as a layer call, by node name: the layer's name.
    sugar: &'a HashMap<String, String>,
    weights_path: &'a str,
}

/// Whether a node is one a layer writes, with its weights and their parts' names: a 2-D
/// `Conv` with explicit padding (`conv2d`), a `Gemm` of a 2-D input with a `[out]` bias
/// or none, no scaling and no transposed input (`linear`, the weight in either layout),
/// an inference `BatchNormalization` (`batch_norm`), a 2-D `MaxPool` or `AveragePool`
/// with explicit, symmetric padding, no dilation and one output (`max_pool2d`,
/// `avg_pool2d`), a `GlobalAveragePool` (`global_avg_pool`). Its f32 weights must be
/// read by this node only.
fn layer_sugar(graph: &Graph, all: &[&Node], n: &Node) -> Option<Vec<(TensorId, &'static str)>> {
    if n.control.is_some() || n.custom.is_some() || n.outputs.len() != 1 {
        return None;
    }
    let x = n.inputs.first().copied().flatten()?;
    let input = |k: usize| n.inputs.get(k).copied().flatten();
    let rank = |id: TensorId| graph.tensors[id].ty.shape.0.len();
    let owned = |id: TensorId| {
        graph.weights.contains(&id)
            && matches!(graph.tensors[id].value, Some(Data::F32(_)))
            && all.iter().filter(|m| m.inputs.contains(&Some(id))).count() == 1
            && !graph.outputs.contains(&id)
    };
    let auto = n.attrs.string("auto_pad").is_none_or(|a| a == "NOTSET");
    let parts: Vec<(TensorId, &'static str)> = match n.op.op_type {
        "Conv" => {
            let w = input(1)?;
            let fits = rank(x) == 4 && rank(w) == 4 && auto;
            fits.then(|| {
                let mut p = vec![(w, "weight")];
                p.extend(input(2).map(|b| (b, "bias")));
                p
            })?
        }
        "Gemm" => {
            let (w, b) = (input(1)?, input(2));
            let out = graph.tensors[w]
                .ty
                .shape
                .0
                .get(usize::from(n.attrs.int("transB") == 0))?;
            let plain = |k: &str| {
                n.attrs
                    .get(k)
                    .is_none_or(|v| matches!(v, AttrValue::Float(f) if *f == 1.0))
            };
            let fits = rank(x) == 2
                && rank(w) == 2
                && n.attrs.int("transA") == 0
                && plain("alpha")
                && plain("beta")
                && b.is_none_or(|b| {
                    graph.tensors[b].ty.shape.0.iter().collect::<Vec<_>>() == vec![out]
                });
            fits.then(|| {
                let mut p = vec![(w, "weight")];
                p.extend(b.map(|b| (b, "bias")));
                p
            })?
        }
        "BatchNormalization" => {
            let inference = n
                .attrs
                .get("training_mode")
                .is_none_or(|_| n.attrs.int("training_mode") == 0);
            let parts = [(1, "scale"), (2, "bias"), (3, "mean"), (4, "var")];
            let p: Option<Vec<_>> = parts
                .iter()
                .map(|&(k, part)| Some((input(k)?, part)))
                .collect();
            (inference && rank(x) >= 2).then_some(p?)?
        }
        "MaxPool" | "AveragePool" => {
            let ints = |k: &str| n.attrs.ints(k).map(<[i64]>::to_vec);
            let kernel = ints("kernel_shape")?;
            let pads = ints("pads").unwrap_or(vec![0; 4]);
            let symmetric = pads.len() == 4 && pads[0] == pads[2] && pads[1] == pads[3];
            let undilated = ints("dilations").is_none_or(|d| d.iter().all(|&v| v == 1));
            let order = n
                .attrs
                .get("storage_order")
                .is_none_or(|_| n.attrs.int("storage_order") == 0);
            let fits = rank(x) == 4 && kernel.len() == 2 && symmetric && undilated && order && auto;
            fits.then(Vec::new)?
        }
        "GlobalAveragePool" => Vec::new(),
        _ => return None,
    };
    parts.iter().all(|&(id, _)| owned(id)).then_some(parts)
}

impl Writer<'_> {
    fn ident(&mut self, id: TensorId) -> String {
        self.names.ident(id, &self.graph.tensors[id].name)
    }

    /// A `let` pattern for `outs`: unused ones `_` (one alone keeps a name to bind).
    fn pattern(&mut self, outs: &[TensorId]) -> String {
        let names: Vec<String> = outs
            .iter()
            .map(|&o| {
                if self.used.contains(&o) {
                    self.ident(o)
                } else {
                    "_".to_string()
                }
            })
            .collect();
        match names.as_slice() {
            [one] if one == "_" => self.ident(outs[0]),
            [one] => one.clone(),
            _ => format!("({})", names.join(", ")),
        }
    }

    /// `return x;` or `return (x, y);`.
    fn returns(&mut self, w: &mut String, pad: &str, outs: &[TensorId]) {
        let names: Vec<String> = outs.iter().map(|&o| self.ident(o)).collect();
        let value = match names.as_slice() {
            [one] => one.clone(),
            _ => format!("({})", names.join(", ")),
        };
        let _ = writeln!(w, "{pad}    return {value};");
    }

    fn nodes(&mut self, w: &mut String, nodes: &[Node], depth: usize) -> Result<(), String> {
        let pad = "    ".repeat(depth);
        for n in nodes {
            if n.custom.is_some() {
                return Err(format!(
                    "node `{}` ({}) is a custom operator, which eject does not write",
                    n.name, n.op.op_type
                ));
            }
            if let Some(c) = &n.control {
                self.control(w, n, c, depth)?;
                continue;
            }
            if let Some(layer) = self.sugar.get(&n.name) {
                let call = self.layer_call(n, layer);
                let pattern = self.pattern(&n.outputs);
                let _ = writeln!(w, "{pad}let {pattern} = {call};");
                continue;
            }
            let mut args: Vec<String> = n
                .inputs
                .iter()
                .map(|i| match i {
                    Some(i) => self.ident(*i),
                    None => "_".to_string(),
                })
                .collect();
            for (k, v) in &n.attrs.explicit {
                args.push(format!("{k} = {}", attr(v)?));
            }
            let pattern = self.pattern(&n.outputs);
            let _ = writeln!(
                w,
                "{pad}let {pattern} = {}({});",
                n.op.op_type,
                args.join(", ")
            );
        }
        Ok(())
    }

    /// The layer call of a node [`layer_sugar`] accepted, its arguments other than their
    /// defaults.
    fn layer_call(&mut self, n: &Node, layer: &str) -> String {
        let x = n.inputs[0].map_or("_".to_string(), |x| self.ident(x));
        let list = |v: &[i64]| {
            let items: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("[{}]", items.join(", "))
        };
        let flag = |k: &str| n.attrs.get(k).is_some_and(|_| n.attrs.int(k) != 0);
        let mut args = Vec::new();
        let (func, weights) = match n.op.op_type {
            "Gemm" | "Conv" => {
                self.weighted_args(n, &mut args);
                let func = if n.op.op_type == "Gemm" {
                    "linear"
                } else {
                    "conv2d"
                };
                (func, true)
            }
            "BatchNormalization" => {
                if let Some(AttrValue::Float(e)) = n.attrs.get("epsilon") {
                    args.push(format!("epsilon = {e:?}"));
                }
                ("batch_norm", true)
            }
            "MaxPool" | "AveragePool" => {
                let ints = |k: &str| n.attrs.ints(k).map(<[i64]>::to_vec);
                let kernel = ints("kernel_shape").unwrap_or_default();
                args.push(list(&kernel));
                args.push(format!(
                    "stride = {}",
                    list(&ints("strides").unwrap_or(vec![1, 1]))
                ));
                let pads = ints("pads").unwrap_or(vec![0; 4]);
                if pads.iter().any(|&p| p != 0) {
                    args.push(format!("pad = {}", list(&pads[..2])));
                }
                if flag("ceil_mode") {
                    args.push("ceil_mode = true".to_string());
                }
                if n.op.op_type == "AveragePool" && flag("count_include_pad") {
                    args.push("count_include_pad = true".to_string());
                }
                let func = if n.op.op_type == "MaxPool" {
                    "max_pool2d"
                } else {
                    "avg_pool2d"
                };
                (func, false)
            }
            _ => ("global_avg_pool", false),
        };
        args.push(format!("name = {layer:?}"));
        if weights {
            args.push(format!("weights = {:?}", self.weights_path));
        }
        let args = std::iter::once(x)
            .chain(args)
            .collect::<Vec<_>>()
            .join(", ");
        format!("{func}({args})")
    }

    /// The arguments of a `linear` or `conv2d` call after its input: the output width
    /// (and PyTorch's layout) or the channels, kernel and the geometry.
    fn weighted_args(&self, n: &Node, args: &mut Vec<String>) {
        let w: Vec<i64> = n.inputs[1].map_or(Vec::new(), |w| {
            self.graph.tensors[w]
                .ty
                .shape
                .0
                .iter()
                .map(|d| d.fixed().unwrap_or(1) as i64)
                .collect()
        });
        let list = |v: &[i64]| {
            let items: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("[{}]", items.join(", "))
        };
        if n.op.op_type == "Gemm" {
            let pytorch = n.attrs.int("transB") != 0;
            args.push(w[usize::from(!pytorch)].to_string());
            if pytorch {
                args.push("layout = \"pytorch\"".to_string());
            }
        } else {
            args.push(w.first().copied().unwrap_or(1).to_string());
            args.push(list(&w[2..]));
            for (attr, arg, default) in [
                ("strides", "stride", vec![1, 1]),
                ("pads", "pad", vec![0; 4]),
                ("dilations", "dilation", vec![1, 1]),
            ] {
                let v = n.attrs.ints(attr).map_or(default.clone(), <[i64]>::to_vec);
                if v != default {
                    args.push(format!("{arg} = {}", list(&v)));
                }
            }
            let group = n.attrs.get("group").map_or(1, |_| n.attrs.int("group"));
            if group != 1 {
                args.push(format!("groups = {group}"));
            }
        }
        if n.inputs.get(2).copied().flatten().is_none() {
            args.push("bias = false".to_string());
        }
    }

    /// An `if` or a `for` with its bodies.
    fn control(
        &mut self,
        w: &mut String,
        n: &Node,
        c: &Control,
        depth: usize,
    ) -> Result<(), String> {
        let pad = "    ".repeat(depth);
        let pattern = self.pattern(&n.outputs);
        let input = |k: usize| n.inputs.get(k).copied().flatten();
        let with = |this: &mut Self, formals: &[TensorId], inits: &[Option<TensorId>]| {
            let pairs: Vec<String> = formals
                .iter()
                .zip(inits)
                .map(|(&f, i)| {
                    let init = i.map_or("_".to_string(), |i| this.ident(i));
                    format!("{} = {init}", this.ident(f))
                })
                .collect();
            if pairs.is_empty() {
                String::new()
            } else {
                format!(" with ({})", pairs.join(", "))
            }
        };
        match (c.kind, c.bodies.as_slice()) {
            (ControlKind::If, [then, other]) => {
                let cond = input(0).ok_or("an If without a condition")?;
                let cond = self.ident(cond);
                let _ = writeln!(w, "{pad}let {pattern} = if {cond} {{");
                self.nodes(w, &then.nodes, depth + 1)?;
                self.returns(w, &pad, &then.outputs);
                let _ = writeln!(w, "{pad}}} else {{");
                self.nodes(w, &other.nodes, depth + 1)?;
                self.returns(w, &pad, &other.outputs);
                let _ = writeln!(w, "{pad}}};");
            }
            (ControlKind::Loop { exit: true, .. }, _) => {
                return Err(format!(
                    "Loop `{}` ends on a condition its body computes, which the language's `for` cannot write",
                    n.name
                ));
            }
            (ControlKind::Loop { trips, .. }, [body]) => {
                // The body's condition output is its condition input passed through (a
                // static trip count); the language writes neither.
                let (Some(&i), Some(&cond)) = (body.inputs.first(), body.inputs.get(1)) else {
                    return Err(format!("Loop `{}` has a body without its counters", n.name));
                };
                let passes = |m: &&Node| {
                    m.op.op_type == "Identity"
                        && m.inputs.first() == Some(&Some(cond))
                        && body.outputs.first() == m.outputs.first()
                };
                if body
                    .nodes
                    .iter()
                    .any(|m| !passes(&m) && m.inputs.contains(&Some(cond)))
                {
                    return Err(format!(
                        "Loop `{}` reads its condition in its body, which eject does not write",
                        n.name
                    ));
                }
                let carried = body.inputs.len().saturating_sub(2);
                let inits: Vec<Option<TensorId>> = (0..carried).map(|k| input(2 + k)).collect();
                let with = with(self, &body.inputs[2..], &inits);
                let iter = self.ident(i);
                let _ = writeln!(w, "{pad}let {pattern} = for {iter} in 0..{trips}{with} {{");
                let kept: Vec<Node> = body.nodes.iter().filter(|m| !passes(m)).cloned().collect();
                self.nodes(w, &kept, depth + 1)?;
                self.returns(w, &pad, &body.outputs[1..]);
                let _ = writeln!(w, "{pad}}};");
            }
            (ControlKind::Scan { scan_inputs, .. }, [body]) => {
                let states = c.explicit.saturating_sub(scan_inputs);
                let inits: Vec<Option<TensorId>> = (0..states).map(input).collect();
                let with = with(self, &body.inputs[..states.min(body.inputs.len())], &inits);
                let reversed = n
                    .attrs
                    .explicit
                    .iter()
                    .find(|(k, _)| *k == "scan_input_directions")
                    .map(|(_, v)| match v {
                        AttrValue::Ints(d) => d.clone(),
                        _ => Vec::new(),
                    })
                    .unwrap_or_default();
                let mut slices = Vec::new();
                let mut seqs = Vec::new();
                for k in 0..scan_inputs {
                    let (Some(&f), Some(seq)) = (body.inputs.get(states + k), input(states + k))
                    else {
                        return Err(format!("Scan `{}` has fewer inputs than it scans", n.name));
                    };
                    slices.push(self.ident(f));
                    let seq = self.ident(seq);
                    seqs.push(if reversed.get(k).is_some_and(|&d| d != 0) {
                        format!("rev({seq})")
                    } else {
                        seq
                    });
                }
                let (slices, seqs) = if scan_inputs == 1 {
                    (slices.join(""), seqs.join(""))
                } else {
                    (
                        format!("({})", slices.join(", ")),
                        format!("({})", seqs.join(", ")),
                    )
                };
                let _ = writeln!(w, "{pad}let {pattern} = for {slices} in {seqs}{with} {{");
                self.nodes(w, &body.nodes, depth + 1)?;
                self.returns(w, &pad, &body.outputs);
                let _ = writeln!(w, "{pad}}};");
            }
            _ => return Err(format!("control node `{}` has an unexpected shape", n.name)),
        }
        Ok(())
    }
}

/// Writes `graph` as the DSL model `name`; `weights_path` is what its `load` calls
/// name (relative to the Cargo.toml of the crate the source goes into).
pub fn eject(graph: &Graph, name: &str, weights_path: &str) -> Result<Ejected, String> {
    let mut names = Names {
        by_tensor: HashMap::new(),
        taken: HashSet::new(),
    };
    let mut out = String::new();
    let mut tensors: Vec<(String, Vec<usize>, Vec<f32>)> = Vec::new();
    let w = &mut out;
    let shape = |id: TensorId| -> Vec<usize> {
        graph.tensors[id]
            .ty
            .shape
            .0
            .iter()
            .map(|d| d.fixed().unwrap_or(1))
            .collect()
    };
    let dims = |s: &[usize]| {
        s.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(w, "tinyonnx::onnx_model! {{");
    if !graph.doc.is_empty() {
        for line in graph.doc.lines() {
            let _ = writeln!(w, "    ///{}{line}", if line.is_empty() { "" } else { " " });
        }
    }
    let _ = writeln!(w, "    pub model {name} {{");
    let _ = writeln!(w, "        opset = {};", graph.opset);
    // The settings that change the device code, where not their defaults.
    if graph.winograd != Winograd::default() {
        let value = graph.winograd.name();
        let _ = writeln!(w, "        winograd = {value};");
    }
    if graph.optimize != Optimize::default() {
        let value = graph.optimize.name();
        let _ = writeln!(w, "        optimize = {value};");
    }
    for &i in &graph.inputs {
        let t = &graph.tensors[i];
        let id = names.ident(i, &t.name);
        let _ = writeln!(
            w,
            "        input {id}: {}[{}];",
            t.ty.dtype.name(),
            dims(&shape(i))
        );
    }
    // Weights in the order nodes (those of bodies too) read them; f32 from the file, the
    // rest as literals.
    let all = crate::ir::all_nodes(&graph.nodes);
    // Nodes written as layer calls, their weights under the layer's names.
    let mut sugar: HashMap<String, String> = HashMap::new();
    let mut declared = HashSet::new();
    for n in all.iter().copied() {
        if let Some(parts) = layer_sugar(graph, &all, n) {
            let layer = names.ident(n.outputs[0], &graph.tensors[n.outputs[0]].name);
            for (id, part) in parts {
                if let Some(Data::F32(v)) = &graph.tensors[id].value {
                    tensors.push((format!("{layer}.{part}"), shape(id), v.clone()));
                }
                declared.insert(id);
            }
            sugar.insert(n.name.clone(), layer);
        }
    }
    for n in all.iter().copied() {
        // A Loop's trip count is written in its `for` (`0..n`), not as a weight.
        let counted = n
            .control
            .as_ref()
            .is_some_and(|c| matches!(c.kind, ControlKind::Loop { .. }));
        for &i in n.inputs.iter().skip(usize::from(counted)).flatten() {
            let t = &graph.tensors[i];
            let Some(data) = t.value.as_ref() else {
                continue;
            };
            if !graph.weights.contains(&i) || !declared.insert(i) {
                continue;
            }
            let id = names.ident(i, &t.name);
            let s = shape(i);
            let init = match data {
                Data::F32(v) => {
                    tensors.push((t.name.clone(), s.clone(), v.clone()));
                    format!("load({weights_path:?}, name = {:?})", t.name)
                }
                Data::I64(v) => format!(
                    "[{}]",
                    v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                ),
                Data::Typed { dtype, values } => {
                    let items: Vec<String> = match dtype {
                        crate::types::DType::F64 => {
                            values.iter().map(|v| float(*v)).collect::<Result<_, _>>()?
                        }
                        crate::types::DType::Bool => values
                            .iter()
                            .map(|v| if *v != 0.0 { "true" } else { "false" }.to_string())
                            .collect(),
                        _ => values.iter().map(|v| (*v as i64).to_string()).collect(),
                    };
                    format!("[{}]", items.join(", "))
                }
            };
            let _ = writeln!(
                w,
                "        weight {id}: {}[{}] = {init};",
                t.ty.dtype.name(),
                dims(&s)
            );
        }
    }
    let used: HashSet<TensorId> = all
        .iter()
        .flat_map(|m| m.inputs.iter().flatten().copied())
        .chain(
            all.iter()
                .flat_map(|m| m.control.iter().flat_map(|c| &c.bodies))
                .flat_map(|b| b.outputs.iter().copied()),
        )
        .chain(graph.outputs.iter().copied())
        .collect();
    let mut writer = Writer {
        graph,
        names: &mut names,
        used: &used,
        sugar: &sugar,
        weights_path,
    };
    writer.nodes(w, &graph.nodes, 2)?;
    for &o in &graph.outputs {
        let _ = writeln!(
            w,
            "        output {};",
            names.ident(o, &graph.tensors[o].name)
        );
    }
    let _ = writeln!(w, "    }}");
    let _ = writeln!(w, "}}");
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, _, v)| v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let views = tensors
        .iter()
        .zip(&bytes)
        .map(|((n, s, _), b)| {
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b)
                .map(|v| (n.clone(), v))
                .map_err(|e| format!("weight `{n}`: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let safetensors = safetensors::serialize(views, None).map_err(|e| e.to_string())?;
    Ok(Ejected {
        source: out,
        safetensors,
    })
}
