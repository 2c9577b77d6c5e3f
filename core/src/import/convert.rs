//! Opset conversion: a node of any default-domain opset from 7 up (or 1, for the
//! operators that did not change before 7), rewritten to the
//! form the operator has at the model's target opset (13 to 23). Attributes that later
//! opsets turned into inputs become constant inputs; attributes that later opsets
//! dropped and that changed nothing are dropped; the rest is refused with the reason.
//!
//! Softmax, LogSoftmax and Hardmax before 13 (which flatten to 2-D around `axis`) need
//! the input's shape and are rewritten by the importer itself.

use tinyonnx_proto as pb;

use super::proto::{self, Const};
use crate::data::Data;

/// A node in the target opset's form, and the constants its new inputs name.
pub struct Canonical {
    pub node: pb::NodeProto,
    pub consts: Vec<(String, Const)>,
}

/// The lowest opset of the default domain a file may import.
pub const MIN_FILE_OPSET: i64 = 7;
/// The highest: the newest opset of onnx 1.23. From 24 to 28 the registered operators'
/// schemas only gain element types (and Cast a `round_mode` for float8, Attention an
/// optional seventh input and window attributes: what the importer refuses), so such a
/// file imports as opset 23; `check_dtypes.py` checks
/// this against `onnx.defs` in every test run. Three gains are also new semantics, and
/// the importer writes the first two with opset-23 operators (`extra.rs`): `Mod` with
/// `fmod = 0` on floats, `BitShift` on signed integers; the checker refuses the third,
/// `SpaceToDepth`'s `mode` (all opset 28).
pub const MAX_FILE_OPSET: i64 = 28;

/// The operators whose definition at opset 7 is still their opset-1 one (from
/// `onnx.defs`): a file of opset 1 to 6 that uses only these imports as opset 7.
pub const SAME_SINCE_1: &[&str] = &[
    "ArgMax",
    "ArgMin",
    "Constant",
    "Conv",
    "ConvTranspose",
    "DepthToSpace",
    "Flatten",
    "Gather",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Hardmax",
    "Identity",
    "If",
    "LRN",
    "LogSoftmax",
    "Loop",
    "LpNormalization",
    "MatMul",
    "MaxPool",
    "Not",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Shape",
    "Size",
    "Slice",
    "Softmax",
    "Softplus",
    "Softsign",
    "SpaceToDepth",
    "Squeeze",
    "TopK",
    "Transpose",
    "Unsqueeze",
];

/// The operator types of a graph's nodes and of the graphs in their attributes, down
/// `levels` levels of subgraphs.
pub fn op_types(graph: &pb::GraphProto, out: &mut Vec<String>, levels: usize) {
    for n in &graph.node {
        out.push(n.op_type.clone().unwrap_or_default());
        for a in n.attribute.iter().filter(|_| levels > 0) {
            for g in a.g.iter().chain(&a.graphs) {
                op_types(g, out, levels - 1);
            }
        }
    }
}

impl Canonical {
    /// Moves attribute `attr` to input `index` as a constant, padding the inputs
    /// between with "absent" (the empty name).
    fn attr_to_input(
        &mut self,
        attr: &str,
        index: usize,
        data: impl FnOnce(&pb::AttributeProto) -> Option<Const>,
    ) {
        let Some(pos) = self
            .node
            .attribute
            .iter()
            .position(|a| a.name.as_deref() == Some(attr))
        else {
            return;
        };
        let a = self.node.attribute.remove(pos);
        let Some(value) = data(&a) else { return };
        let name = format!(
            "{}::{attr}",
            self.node.output.first().map_or("", |s| s.as_str())
        );
        while self.node.input.len() < index {
            self.node.input.push(String::new());
        }
        if self.node.input.len() == index {
            self.node.input.push(name.clone());
        } else {
            self.node.input[index] = name.clone();
        }
        self.consts.push((name, value));
    }

    fn drop_attr(&mut self, attr: &str) {
        self.node
            .attribute
            .retain(|a| a.name.as_deref() != Some(attr));
    }
}

fn ints(a: &pb::AttributeProto) -> Option<Const> {
    Some(Const {
        dims: vec![a.ints.len()],
        data: Data::I64(a.ints.clone()),
    })
}

fn floats(a: &pb::AttributeProto) -> Option<Const> {
    Some(Const {
        dims: vec![a.floats.len()],
        data: Data::F32(a.floats.clone()),
    })
}

fn scalar(v: f32) -> Const {
    Const {
        dims: Vec::new(),
        data: Data::F32(vec![v]),
    }
}

/// `node` (of the file's default-domain opset `opset`) in the form of the target opset.
pub fn canonical(node: &pb::NodeProto, opset: i64) -> Result<Canonical, String> {
    let mut c = Canonical {
        node: node.clone(),
        consts: Vec::new(),
    };
    let op = node.op_type.as_deref().unwrap_or("");
    match op {
        "Squeeze" | "Unsqueeze" if opset < 13 => c.attr_to_input("axes", 1, ints),
        "ReduceSum" if opset < 13 => c.attr_to_input("axes", 1, ints),
        "Split" if opset < 13 => c.attr_to_input("split", 1, ints),
        "Slice" if opset < 10 => {
            c.attr_to_input("starts", 1, ints);
            c.attr_to_input("ends", 2, ints);
            c.attr_to_input("axes", 3, ints);
        }
        "Clip" if opset < 11 => {
            // Before 11 the bounds were attributes, defaulting to the f32 extremes.
            let min = proto::float(node, "min").unwrap_or(f32::MIN);
            let max = proto::float(node, "max").unwrap_or(f32::MAX);
            c.drop_attr("min");
            c.drop_attr("max");
            let out = node.output.first().cloned().unwrap_or_default();
            c.node.input.truncate(1);
            for (k, v) in [("min", min), ("max", max)] {
                let name = format!("{out}::{k}");
                c.node.input.push(name.clone());
                c.consts.push((name, scalar(v)));
            }
        }
        "Pad" if opset < 11 => {
            let value = proto::float(node, "value").unwrap_or(0.0);
            c.drop_attr("value");
            c.attr_to_input("pads", 1, ints);
            let name = format!("{}::value", node.output.first().map_or("", |s| s.as_str()));
            c.node.input.push(name.clone());
            c.consts.push((name, scalar(value)));
        }
        "Dropout" if opset < 12 => {
            // Inference: the output is the input. The mask output, if read, is refused
            // where it is read.
            c.drop_attr("ratio");
            c.drop_attr("is_test");
        }
        "BatchNormalization" if opset < 9 => {
            if proto::int(node, "spatial").unwrap_or(1) != 1 {
                return Err(
                    "has spatial = 0 (statistics per element, opset 7-8), which tinyonnx does not run"
                        .into(),
                );
            }
            c.drop_attr("spatial");
            c.drop_attr("is_test");
        }
        // Upsample (7, 9) and Resize before 11: asymmetric coordinates and, for nearest,
        // the lower neighbour (what a whole-number upsampling repeats); the scales move
        // to input 2 of Resize, after an omitted roi.
        "Upsample" | "Resize" if op == "Upsample" || opset < 11 => {
            let mode = proto::string(node, "mode").unwrap_or_else(|| "nearest".into());
            if !matches!(mode.as_str(), "nearest" | "linear") {
                return Err(format!(
                    "{op} mode \"{mode}\" is not supported (nearest, linear)"
                ));
            }
            c.attr_to_input("scales", 1, floats);
            let x = c.node.input.first().cloned().unwrap_or_default();
            let scales = c.node.input.get(1).cloned().unwrap_or_default();
            c.node.input = vec![x, String::new(), scales];
            c.node.op_type = Some("Resize".into());
            c.node
                .attribute
                .retain(|a| a.name.as_deref() == Some("mode"));
            for (name, value) in [
                ("coordinate_transformation_mode", "asymmetric"),
                ("nearest_mode", "floor"),
            ] {
                c.node.attribute.push(pb::AttributeProto {
                    name: Some(name.into()),
                    r#type: Some(pb::attribute_proto::AttributeType::String as i32),
                    s: Some(value.as_bytes().to_vec()),
                    ..Default::default()
                });
            }
        }
        _ => {}
    }
    Ok(c)
}
