//! Small builders of ONNX messages, shared by the importer's unit tests and its fuzz
//! test (each includes this file).

#![allow(dead_code)]

use tinyonnx_proto as pb;

/// A node named `<op>_<first output>`.
pub fn node(
    op: &str,
    inputs: &[&str],
    outputs: &[&str],
    attrs: Vec<pb::AttributeProto>,
) -> pb::NodeProto {
    pb::NodeProto {
        op_type: Some(op.into()),
        name: Some(format!("{op}_{}", outputs.first().unwrap_or(&""))),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

/// An INTS attribute.
pub fn ints(name: &str, v: &[i64]) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.into()),
        r#type: Some(7),
        ints: v.to_vec(),
        ..Default::default()
    }
}

/// An INT attribute.
pub fn int(name: &str, v: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.into()),
        r#type: Some(2),
        i: Some(v),
        ..Default::default()
    }
}

/// A GRAPH attribute.
pub fn graph(name: &str, g: pb::GraphProto) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.into()),
        r#type: Some(5),
        g: Some(g),
        ..Default::default()
    }
}

/// An f32 tensor value: each dim a number (`Ok`) or a name (`Err`).
pub fn input(name: &str, dims: &[Result<i64, &str>]) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{Dimension, dimension::Value as D};
    pb::ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(pb::TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|d| Dimension {
                            value: Some(match d {
                                Ok(v) => D::DimValue(*v),
                                Err(p) => D::DimParam(p.to_string()),
                            }),
                            ..Default::default()
                        })
                        .collect(),
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A graph output with only a name.
pub fn output(name: &str) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: Some(name.into()),
        ..Default::default()
    }
}
