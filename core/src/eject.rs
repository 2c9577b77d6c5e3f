//! Eject: a checked graph written back as an `onnx_model!` in the DSL, with its f32
//! weights in one `.safetensors` file the DSL `load`s. What `cargo xtask import` writes
//! for an imported file, so that the model can be edited as source. Reads only the
//! graph (a stage beside `emit_onnx`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::data::Data;
use crate::ir::{Graph, TensorId};
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
    // Weights in the order nodes read them; f32 from the file, the rest as literals.
    let mut declared = HashSet::new();
    for n in &graph.nodes {
        for &i in n.inputs.iter().flatten() {
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
    let used: HashSet<TensorId> = graph
        .nodes
        .iter()
        .flat_map(|m| m.inputs.iter().flatten().copied())
        .chain(graph.outputs.iter().copied())
        .collect();
    for n in &graph.nodes {
        if n.control.is_some() || n.custom.is_some() {
            return Err(format!(
                "node `{}` ({}) is control flow or a custom operator, which eject does not write yet",
                n.name, n.op.op_type
            ));
        }
        let mut args: Vec<String> = n
            .inputs
            .iter()
            .map(|i| match i {
                Some(i) => names.ident(*i, &graph.tensors[*i].name),
                None => "_".to_string(),
            })
            .collect();
        for (k, v) in &n.attrs.explicit {
            args.push(format!("{k} = {}", attr(v)?));
        }
        let outs: Vec<String> = n
            .outputs
            .iter()
            .map(|&o| {
                if used.contains(&o) {
                    names.ident(o, &graph.tensors[o].name)
                } else {
                    "_".to_string()
                }
            })
            .collect();
        let pattern = if outs.len() == 1 {
            if outs[0] == "_" {
                // A single unused output still needs a name to bind.
                names.ident(n.outputs[0], &graph.tensors[n.outputs[0]].name)
            } else {
                outs[0].clone()
            }
        } else {
            format!("({})", outs.join(", "))
        };
        let _ = writeln!(
            w,
            "        let {pattern} = {}({});",
            n.op.op_type,
            args.join(", ")
        );
    }
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
