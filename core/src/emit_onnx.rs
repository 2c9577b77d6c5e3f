//! Serializes a checked graph as an ONNX `ModelProto`.

use tinyonnx_proto as pb;
use tinyonnx_proto::Message;

use crate::ir::{Graph, TensorId};
use crate::ops::AttrValue;
use crate::types::{Dim, TensorType};

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
                raw_data: Some(values.le_bytes()),
                ..Default::default()
            }
        })
        .collect();
    let node = graph
        .nodes
        .iter()
        .map(|n| pb::NodeProto {
            input: n
                .inputs
                .iter()
                .map(|i| i.map_or(String::new(), |id| graph.tensors[id].name.clone()))
                .collect(),
            output: n
                .outputs
                .iter()
                .map(|&o| graph.tensors[o].name.clone())
                .collect(),
            name: Some(n.name.clone()),
            doc_string: (!n.doc.is_empty()).then(|| n.doc.clone()),
            op_type: Some(n.op.op_type.to_string()),
            domain: Some(String::new()),
            attribute: n
                .attrs
                .explicit
                .iter()
                .map(|(name, v)| attribute(name, v))
                .collect(),
            ..Default::default()
        })
        .collect();
    let intermediates: Vec<pb::ValueInfoProto> = graph
        .nodes
        .iter()
        .flat_map(|n| n.outputs.iter().copied())
        .filter(|&o| !graph.is_output(o))
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
    pb::ModelProto {
        ir_version: Some(ir_version(graph.opset)),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(graph.opset),
        }],
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
        functions: Vec::new(),
    }
}

/// The serialized model.
pub fn onnx_bytes(graph: &Graph) -> Vec<u8> {
    model_proto(graph).encode_to_vec()
}
