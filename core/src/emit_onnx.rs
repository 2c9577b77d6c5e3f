//! Serializes a checked graph as an ONNX `ModelProto`.

use tinyonnx_proto as pb;
use tinyonnx_proto::Message;

use std::collections::HashSet;

use crate::ir::{Graph, Node, TensorId};
use crate::ops::AttrValue;
use crate::ops::elementwise::cast::carrier;
use crate::types::{Dim, TensorType};
use tinyonnx_layout::narrow::Narrow;

/// The producer recorded in every model.
pub const PRODUCER: &str = "tinyonnx";

/// The IR version that goes with a default-domain opset (onnx's `VERSION_TABLE`).
pub fn ir_version(opset: i64) -> i64 {
    match opset {
        ..=8 => 3,
        9 => 4,
        10 => 5,
        11 => 6,
        12..=14 => 7,
        15..=18 => 8,
        19..=20 => 9,
        21..=22 => 10,
        23 => 11,
        24 => 12,
        25..=27 => 13,
        _ => 14,
    }
}

fn type_proto(ty: &TensorType) -> pb::TypeProto {
    let dim = ty
        .shape
        .0
        .iter()
        .map(|d| pb::tensor_shape_proto::Dimension {
            value: Some(match d {
                Dim::Fixed(n) => pb::tensor_shape_proto::dimension::Value::DimValue(*n as i64),
                Dim::Sym(s) => pb::tensor_shape_proto::dimension::Value::DimParam(s.clone()),
            }),
            denotation: None,
        })
        .collect();
    pb::TypeProto {
        value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
            elem_type: Some(ty.dtype.onnx_code()),
            shape: Some(pb::TensorShapeProto { dim }),
        })),
        denotation: None,
    }
}

fn value_info(graph: &Graph, id: TensorId) -> pb::ValueInfoProto {
    let t = &graph.tensors[id];
    pb::ValueInfoProto {
        name: Some(t.name.clone()),
        r#type: Some(type_proto(&t.ty)),
        doc_string: (!t.doc.is_empty()).then(|| t.doc.clone()),
        metadata_props: Vec::new(),
    }
}

fn attribute(name: &str, value: &AttrValue) -> pb::AttributeProto {
    use pb::attribute_proto::AttributeType as T;
    let mut a = pb::AttributeProto {
        name: Some(name.to_string()),
        ..Default::default()
    };
    match value {
        AttrValue::Int(v) => {
            a.set_type(T::Int);
            a.i = Some(*v);
        }
        AttrValue::Float(v) => {
            a.set_type(T::Float);
            a.f = Some(*v);
        }
        AttrValue::Ints(v) => {
            a.set_type(T::Ints);
            a.ints = v.clone();
        }
        AttrValue::Floats(v) => {
            a.set_type(T::Floats);
            a.floats = v.clone();
        }
        AttrValue::Str(v) => {
            a.set_type(T::String);
            a.s = Some(v.clone().into_bytes());
        }
        AttrValue::Strs(v) => {
            a.set_type(T::Strings);
            a.strings = v.iter().map(|s| s.clone().into_bytes()).collect();
        }
    }
    a
}

/// The model as a `ModelProto`.
pub fn model_proto(graph: &Graph) -> pb::ModelProto {
    model_proto_without_data(graph, &[])
}

/// [`model_proto`] with no `raw_data` in the initializers `skip` (filled in by
/// [`aligned_layout`] straight from the values).
fn model_proto_without_data(graph: &Graph, skip: &[TensorId]) -> pb::ModelProto {
    let initializer = graph
        .weights
        .iter()
        .map(|&w| {
            let t = &graph.tensors[w];
            let values = t.value.as_ref().expect("bug: a weight without values");
            pb::TensorProto {
                dims: t
                    .ty
                    .shape
                    .0
                    .iter()
                    .map(|d| d.fixed().expect("weights have fixed shapes") as i64)
                    .collect(),
                data_type: Some(t.ty.dtype.onnx_code()),
                name: Some(t.name.clone()),
                raw_data: (!skip.contains(&w)).then(|| values.le_bytes()),
                ..Default::default()
            }
        })
        .collect();
    let Functions {
        node,
        functions,
        internal,
    } = functions(graph);
    let node = file_nodes(node);
    let intermediates: Vec<pb::ValueInfoProto> = graph
        .nodes
        .iter()
        .flat_map(|n| n.outputs.iter().copied())
        .filter(|&o| !graph.is_output(o) && !internal.contains(&o))
        .map(|o| value_info(graph, o))
        .collect();
    let g = pb::GraphProto {
        node,
        name: Some(graph.name.clone()),
        initializer,
        doc_string: (!graph.doc.is_empty()).then(|| graph.doc.clone()),
        input: graph.inputs.iter().map(|&i| value_info(graph, i)).collect(),
        output: graph
            .outputs
            .iter()
            .map(|&o| value_info(graph, o))
            .collect(),
        value_info: intermediates,
        metadata_props: Vec::new(),
    };
    let mut opset_import = vec![pb::OperatorSetIdProto {
        domain: Some(String::new()),
        version: Some(graph.opset),
    }];
    if !functions.is_empty() {
        opset_import.push(pb::OperatorSetIdProto {
            domain: Some(function_domain(graph)),
            version: Some(1),
        });
    }
    for c in crate::ir::all_nodes(&graph.nodes)
        .into_iter()
        .filter_map(|n| n.custom.as_ref())
    {
        if !opset_import
            .iter()
            .any(|o| o.domain.as_deref() == Some(&c.domain))
        {
            opset_import.push(pb::OperatorSetIdProto {
                domain: Some(c.domain.clone()),
                version: Some(c.version),
            });
        }
    }
    pb::ModelProto {
        ir_version: Some(ir_version(graph.opset)),
        opset_import,
        producer_name: Some(PRODUCER.to_string()),
        producer_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        domain: graph.domain.clone(),
        model_version: graph.model_version,
        doc_string: (!graph.doc.is_empty()).then(|| graph.doc.clone()),
        graph: Some(g),
        metadata_props: graph
            .metadata
            .iter()
            .map(|(k, v)| pb::StringStringEntryProto {
                key: Some(k.clone()),
                value: Some(v.clone()),
            })
            .collect(),
        functions,
    }
}

/// The domain of a model's functions: the model's `domain`, else `tinyonnx.local`.
pub fn function_domain(graph: &Graph) -> String {
    graph
        .domain
        .clone()
        .unwrap_or_else(|| "tinyonnx.local".to_string())
}

/// The main graph's nodes with each `function` block instance replaced by one call node,
/// the `FunctionProto`s (one per distinct body), and the tensors internal to the calls
/// (which the main graph no longer names).
struct Functions {
    node: Vec<pb::NodeProto>,
    functions: Vec<pb::FunctionProto>,
    internal: HashSet<TensorId>,
}

fn node_proto(graph: &Graph, n: &Node, name: &dyn Fn(TensorId) -> String) -> pb::NodeProto {
    let mut attribute: Vec<pb::AttributeProto> = n
        .attrs
        .explicit
        .iter()
        .map(|(name, v)| attribute(name, v))
        .collect();
    // onnx 1.23's shape inference reads STFT's `onesided` as 0 when it is left out (the
    // operator's default is 1), so the checker's full check refuses the file unless it
    // is written.
    if n.op.op_type == "STFT" && !n.attrs.explicit.iter().any(|(k, _)| *k == "onesided") {
        let onesided = AttrValue::Int(n.attrs.int("onesided"));
        attribute.push(self::attribute("onesided", &onesided));
    }
    // A control-flow node's bodies, as graph attributes (outer names are read as is).
    for body in n.control.iter().flat_map(|c| &c.bodies) {
        let mut a = pb::AttributeProto {
            name: Some(body.attr.to_string()),
            g: Some(pb::GraphProto {
                node: file_nodes(
                    body.nodes
                        .iter()
                        .map(|m| node_proto(graph, m, name))
                        .collect(),
                ),
                name: Some(body.name.clone()),
                input: body.inputs.iter().map(|&i| value_info(graph, i)).collect(),
                output: body.outputs.iter().map(|&o| value_info(graph, o)).collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        a.set_type(pb::attribute_proto::AttributeType::Graph);
        attribute.push(a);
    }
    pb::NodeProto {
        input: n
            .onnx_inputs()
            .iter()
            .map(|i| i.map_or(String::new(), name))
            .collect(),
        output: n.outputs.iter().map(|&o| name(o)).collect(),
        name: Some(n.name.clone()),
        doc_string: (!n.doc.is_empty()).then(|| n.doc.clone()),
        op_type: Some(
            n.custom
                .as_ref()
                .map_or(n.op.op_type.to_string(), |c| c.op_type.clone()),
        ),
        domain: Some(
            n.custom
                .as_ref()
                .map_or(String::new(), |c| c.domain.clone()),
        ),
        attribute,
        ..Default::default()
    }
}

/// A graph's nodes as the file holds them: narrow casts split, and every node named
/// once (a rewrite may give the nodes it makes their source node's name, and ONNX
/// Runtime refuses a graph with two nodes of one name).
fn file_nodes(nodes: Vec<pb::NodeProto>) -> Vec<pb::NodeProto> {
    let mut nodes = split_narrow_casts(nodes);
    let mut seen = HashSet::new();
    for n in &mut nodes {
        let Some(name) = n.name.as_mut() else {
            continue;
        };
        if seen.insert(name.clone()) {
            continue;
        }
        let fresh = (2..)
            .map(|k| format!("{name}::{k}"))
            .find(|c| !seen.contains(c))
            .expect("an unused suffix exists");
        seen.insert(fresh.clone());
        *name = fresh;
    }
    nodes
}

/// Each `Cast` to a narrow storage format (whose values tinyonnx carries in f32, i8 or
/// u8) as the two casts it stands for: to the format, and back to the carrier, so the
/// file's tensors keep the types the model declares and ONNX Runtime rounds as the
/// kernel does.
fn split_narrow_casts(nodes: Vec<pb::NodeProto>) -> Vec<pb::NodeProto> {
    let mut out = Vec::with_capacity(nodes.len());
    for n in nodes {
        let narrow = (n.op_type.as_deref() == Some("Cast")
            && n.domain.as_deref().unwrap_or("").is_empty())
        .then(|| n.attribute.iter().find(|a| a.name.as_deref() == Some("to")))
        .flatten()
        .and_then(|a| Narrow::from_onnx(a.i.unwrap_or(0)));
        let (Some(f), [y]) = (narrow, n.output.as_slice()) else {
            out.push(n);
            continue;
        };
        if f.bits() == 2 {
            out.extend(wrap_2bit(&n, f, y));
            continue;
        }
        let mid = format!("{y}__{}", f.name());
        let widen = pb::NodeProto {
            input: vec![mid.clone()],
            output: vec![y.clone()],
            name: n.name.as_ref().map(|m| format!("{m}__widen")),
            op_type: Some("Cast".into()),
            domain: Some(String::new()),
            attribute: vec![attribute(
                "to",
                &AttrValue::Int(i64::from(carrier(f).onnx_code())),
            )],
            ..Default::default()
        };
        out.push(pb::NodeProto {
            output: vec![mid],
            ..n
        });
        out.push(widen);
    }
    out
}

/// A cast to `INT2` or `UINT2`, whose `Cast` ONNX has only from opset 25, as arithmetic
/// every emitted opset has: truncate to int64, keep the value modulo 4 (`Mod` of
/// integers takes the divisor's sign) and, for `INT2`, shift it into -2..=1 around the
/// modulo, then cast to the carrier.
fn wrap_2bit(n: &pb::NodeProto, f: Narrow, y: &str) -> Vec<pb::NodeProto> {
    let name = n.name.clone().unwrap_or_else(|| y.to_string());
    let node =
        |op: &str, suffix: &str, input: Vec<String>, attr: Option<(&str, i64)>| pb::NodeProto {
            input,
            output: vec![format!("{y}__{suffix}")],
            name: Some(format!("{name}__{suffix}")),
            op_type: Some(op.into()),
            domain: Some(String::new()),
            attribute: attr
                .map(|(k, v)| attribute(k, &AttrValue::Int(v)))
                .into_iter()
                .collect(),
            ..Default::default()
        };
    let v = |suffix: &str| format!("{y}__{suffix}");
    let signed = f == Narrow::I2;
    let mut out = vec![
        node("Cast", "i64", n.input.clone(), Some(("to", 7))),
        node("Constant", "four", Vec::new(), Some(("value_int", 4))),
        node("Constant", "two", Vec::new(), Some(("value_int", 2))),
    ];
    if signed {
        out.push(node("Add", "shifted", vec![v("i64"), v("two")], None));
    }
    let dividend = if signed { v("shifted") } else { v("i64") };
    out.push(node("Mod", "mod", vec![dividend, v("four")], None));
    if signed {
        out.push(node("Sub", "wrapped", vec![v("mod"), v("two")], None));
    }
    let last = if signed { v("wrapped") } else { v("mod") };
    let to = i64::from(carrier(f).onnx_code());
    let mut cast = node("Cast", "carrier", vec![last], Some(("to", to)));
    cast.output = vec![y.to_string()];
    cast.name = n.name.clone();
    out.push(cast);
    out
}

fn functions(graph: &Graph) -> Functions {
    let global = |id: TensorId| graph.tensors[id].name.clone();
    let mut out = Functions {
        node: Vec::new(),
        functions: Vec::new(),
        internal: HashSet::new(),
    };
    // Distinct bodies (encoded) of each block, with the function name each got.
    let mut bodies: Vec<(String, Vec<u8>, String)> = Vec::new();
    let mut done = vec![false; graph.instances.len()];
    for n in &graph.nodes {
        let Some(k) = n.instance else {
            out.node.push(node_proto(graph, n, &global));
            continue;
        };
        if std::mem::replace(&mut done[k], true) {
            continue;
        }
        let inst = &graph.instances[k];
        let nodes: Vec<&Node> = graph
            .nodes
            .iter()
            .filter(|m| m.instance == Some(k))
            .collect();
        let produced: HashSet<TensorId> = nodes.iter().flat_map(|m| m.outputs.clone()).collect();
        let mut inputs: Vec<TensorId> = Vec::new();
        for m in &nodes {
            for &t in m.inputs.iter().flatten() {
                if !produced.contains(&t) && !inputs.contains(&t) {
                    inputs.push(t);
                }
            }
        }
        let outputs: Vec<TensorId> = nodes
            .iter()
            .flat_map(|m| m.outputs.iter().copied())
            .filter(|&t| {
                graph.is_output(t)
                    || graph
                        .consumers(t)
                        .iter()
                        .any(|&c| graph.nodes[c].instance != Some(k))
            })
            .collect();
        out.internal
            .extend(produced.iter().filter(|t| !outputs.contains(t)));
        // Names inside the body: the instance prefix dropped, node names numbered within
        // the body (so equal bodies encode equally); tensors from outside are `input_<j>`
        // unless the instance created them (its weights and literals).
        let strip = |s: &str| s.strip_prefix(&inst.prefix).unwrap_or(s).to_string();
        let renames: Vec<(String, String)> = nodes
            .iter()
            .enumerate()
            .map(|(i, m)| (strip(&m.name), format!("{}_{i}", m.op.op_type)))
            .collect();
        let local = |id: TensorId| -> String {
            let name = &graph.tensors[id].name;
            if let Some(j) = inputs.iter().position(|&t| t == id)
                && !name.starts_with(&inst.prefix)
            {
                return format!("input_{j}");
            }
            if !name.starts_with(&inst.prefix) {
                // An output the caller named (`let r1 = residual(x)`).
                let j = outputs.iter().position(|&t| t == id).unwrap_or(0);
                return format!("output_{j}");
            }
            let stripped = strip(name);
            for (from, to) in &renames {
                if let Some(rest) = stripped.strip_prefix(&format!("{from}.")) {
                    return format!("{to}.{rest}");
                }
            }
            stripped
        };
        let body: Vec<pb::NodeProto> = nodes
            .iter()
            .zip(&renames)
            .map(|(m, (_, to))| pb::NodeProto {
                name: Some(to.clone()),
                ..node_proto(graph, m, &local)
            })
            .collect();
        let mut f = pb::FunctionProto {
            name: None,
            input: inputs.iter().map(|&t| local(t)).collect(),
            output: outputs.iter().map(|&t| local(t)).collect(),
            node: file_nodes(body),
            doc_string: (!inst.doc.is_empty()).then(|| inst.doc.clone()),
            opset_import: {
                // The default domain, and the domains of custom operators in the body.
                let mut imports = vec![pb::OperatorSetIdProto {
                    domain: Some(String::new()),
                    version: Some(graph.opset),
                }];
                for c in nodes.iter().filter_map(|m| m.custom.as_ref()) {
                    if !imports
                        .iter()
                        .any(|o| o.domain.as_deref() == Some(&c.domain))
                    {
                        imports.push(pb::OperatorSetIdProto {
                            domain: Some(c.domain.clone()),
                            version: Some(c.version),
                        });
                    }
                }
                imports
            },
            domain: Some(function_domain(graph)),
            ..Default::default()
        };
        let key = f.encode_to_vec();
        let name = match bodies
            .iter()
            .find(|(b, k2, _)| *b == inst.block && *k2 == key)
        {
            Some((_, _, name)) => name.clone(),
            None => {
                let same = bodies.iter().filter(|(b, _, _)| *b == inst.block).count();
                let name = if same == 0 {
                    inst.block.clone()
                } else {
                    format!("{}_{}", inst.block, same + 1)
                };
                bodies.push((inst.block.clone(), key, name.clone()));
                f.name = Some(name.clone());
                out.functions.push(f);
                name
            }
        };
        out.node.push(pb::NodeProto {
            input: inputs.iter().map(|&t| global(t)).collect(),
            output: outputs.iter().map(|&t| global(t)).collect(),
            name: Some(inst.prefix.trim_end_matches('.').to_string()),
            op_type: Some(name),
            domain: Some(function_domain(graph)),
            ..Default::default()
        });
    }
    out
}

/// A weight whose values the ONNX bytes hold at `offset` (a multiple of
/// [`STREAM_ALIGN`]) and that the generated code takes from `file`.
#[derive(Debug, Clone, PartialEq)]
pub struct Streamed {
    pub name: String,
    pub offset: usize,
    pub file: crate::data::FileSlice,
}

/// The serialized model and where its streamed weights' values are in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Onnx {
    pub bytes: Vec<u8>,
    pub streamed: Vec<Streamed>,
}

/// Where streamed values start in the ONNX bytes: the weights' own alignment (a cache
/// line, as `__export::Aligned`), so the kernels can read them in place.
pub const STREAM_ALIGN: usize = 64;

/// The serialized model. With weights that [`crate::plan::streamed_weights`] takes from
/// their files, it is laid out so each one's raw data starts at a multiple of
/// [`STREAM_ALIGN`]: those initializers come last in the graph, each with a `doc_string`
/// of spaces before its `raw_data` as padding, and the graph after the model's other
/// fields (protobuf readers take fields in any order). Other models are prost's bytes.
pub fn onnx(graph: &Graph) -> Onnx {
    let ids = crate::plan::streamed_weights(graph);
    if !ids.is_empty() {
        // The values go into the bytes once, from the graph (a large weight is not
        // copied into the message first).
        if let Some(onnx) = aligned_layout(model_proto_without_data(graph, &ids), graph, &ids) {
            return onnx;
        }
    }
    // Nothing streamed, or padding that did not settle (never seen): prost's bytes.
    Onnx {
        bytes: model_proto(graph).encode_to_vec(),
        streamed: Vec::new(),
    }
}

fn varint_len(v: usize) -> usize {
    prost::encoding::encoded_len_varint(v as u64)
}

/// The bytes of `model` with the initializers `ids` last and their raw data aligned.
fn aligned_layout(mut model: pb::ModelProto, graph: &Graph, ids: &[TensorId]) -> Option<Onnx> {
    // Field keys (number << 3 | length-delimited).
    const MODEL_GRAPH: u8 = 7 << 3 | 2;
    const GRAPH_INITIALIZER: u8 = 5 << 3 | 2;
    const TENSOR_DOC_STRING: u8 = 12 << 3 | 2;
    const TENSOR_RAW_DATA: u8 = 9 << 3 | 2;
    let mut g = model.graph.take()?;
    let names: Vec<&str> = ids
        .iter()
        .map(|&w| graph.tensors[w].name.as_str())
        .collect();
    let (last, rest): (Vec<pb::TensorProto>, Vec<pb::TensorProto>) = g
        .initializer
        .drain(..)
        .partition(|t| names.contains(&t.name.as_deref().unwrap_or("")));
    g.initializer = rest;
    let head = model.encode_to_vec();
    let graph_head = g.encode_to_vec();
    // Each streamed initializer: its other fields, then the padding, then the data
    // (the values of weight `w`, `len` bytes).
    let mut parts: Vec<(TensorId, Vec<u8>, usize)> = Vec::new();
    for mut t in last {
        t.doc_string = None;
        let name = t.name.clone().unwrap_or_default();
        let &w = ids.iter().find(|&&w| graph.tensors[w].name == name)?;
        let Some(crate::data::Data::F32(v)) = &graph.tensors[w].value else {
            return None;
        };
        parts.push((w, t.encode_to_vec(), 4 * v.len()));
    }
    let tensor_len = |i: usize, pad: usize| {
        let (_, h, d) = &parts[i];
        h.len() + 2 + pad + 1 + varint_len(*d) + d
    };
    let record_len = |i: usize, pad: usize| {
        let t = tensor_len(i, pad);
        1 + varint_len(t) + t
    };
    // Paddings below STREAM_ALIGN (one-byte lengths) reach every residue; a changed
    // padding can lengthen a varint before it, so repeat until none changes.
    let mut pads = vec![0usize; parts.len()];
    let mut settled = false;
    for _ in 0..8 {
        let graph_len = graph_head.len()
            + (0..parts.len())
                .map(|i| record_len(i, pads[i]))
                .sum::<usize>();
        let mut pos = head.len() + 1 + varint_len(graph_len) + graph_head.len();
        let mut changed = false;
        for i in 0..parts.len() {
            let (_, h, d) = &parts[i];
            let start = pos
                + 1
                + varint_len(tensor_len(i, pads[i]))
                + h.len()
                + 2
                + pads[i]
                + 1
                + varint_len(*d);
            let fix = (STREAM_ALIGN - start % STREAM_ALIGN) % STREAM_ALIGN;
            if fix != 0 {
                pads[i] = (pads[i] + fix) % STREAM_ALIGN;
                changed = true;
            }
            pos += record_len(i, pads[i]);
        }
        if !changed {
            settled = true;
            break;
        }
    }
    if !settled {
        return None;
    }
    let graph_len = graph_head.len()
        + (0..parts.len())
            .map(|i| record_len(i, pads[i]))
            .sum::<usize>();
    let mut out = head;
    out.reserve(1 + varint_len(graph_len) + graph_len);
    out.push(MODEL_GRAPH);
    prost::encoding::encode_varint(graph_len as u64, &mut out);
    out.extend_from_slice(&graph_head);
    let mut streamed = Vec::new();
    for (i, (w, h, d)) in parts.iter().enumerate() {
        out.push(GRAPH_INITIALIZER);
        prost::encoding::encode_varint(tensor_len(i, pads[i]) as u64, &mut out);
        out.extend_from_slice(h);
        out.push(TENSOR_DOC_STRING);
        out.push(pads[i] as u8);
        out.resize(out.len() + pads[i], b' ');
        out.push(TENSOR_RAW_DATA);
        prost::encoding::encode_varint(*d as u64, &mut out);
        let offset = out.len();
        if let Some(crate::data::Data::F32(v)) = &graph.tensors[*w].value {
            out.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
        if !offset.is_multiple_of(STREAM_ALIGN) || out.len() != offset + d {
            return None;
        }
        streamed.push(Streamed {
            name: graph.tensors[*w].name.clone(),
            offset,
            file: graph.tensors[*w].file.clone()?,
        });
    }
    Some(Onnx {
        bytes: out,
        streamed,
    })
}
