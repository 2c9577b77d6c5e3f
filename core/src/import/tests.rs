//! The importer on small files made here: opset conversion (the same model at two
//! opsets gives the same graph), node order, folding, and the errors of broken files.

use quote::quote;
use tinyonnx_proto::{self as pb, Message};

use crate::ir::Graph;

#[path = "../../tests/fuzz/onnx.rs"]
mod builders;
use builders::{input, int, ints, node, output};

fn model(
    opset: i64,
    inputs: Vec<pb::ValueInfoProto>,
    nodes: Vec<pb::NodeProto>,
    outputs: &[&str],
) -> Vec<u8> {
    pb::ModelProto {
        ir_version: Some(8),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        graph: Some(pb::GraphProto {
            name: Some("g".into()),
            node: nodes,
            input: inputs,
            output: outputs.iter().map(|o| output(o)).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

fn file(name: &str, bytes: &[u8]) -> crate::scratch::TempFile {
    crate::scratch::TempFile::new(name, bytes)
}

/// Imports `path` with `args` after it; the graph or every message.
fn import(path: &str, args: proc_macro2::TokenStream) -> Result<Graph, Vec<String>> {
    let tokens = quote!(pub model M = import(#path #args););
    let def = crate::syntax::parse_import(tokens)
        .expect("an import")
        .expect("parses");
    super::import(&def)
        .map(|(g, _, _)| g)
        .map_err(|e| e.into_iter().flatten().map(|e| e.to_string()).collect())
}

fn ops(g: &Graph) -> Vec<&'static str> {
    g.nodes.iter().map(|n| n.op.op_type).collect()
}

#[test]
fn attributes_that_became_inputs_convert_and_both_opsets_give_one_graph() {
    let old = model(
        11,
        vec![input("x", &[Ok(2), Ok(3)])],
        vec![
            node("Unsqueeze", &["x"], &["u"], vec![ints("axes", &[0])]),
            node("Clip", &["u", "lo", "hi"], &["c"], vec![]),
            node("Squeeze", &["c"], &["y"], vec![ints("axes", &[0])]),
        ],
        &["y"],
    );
    // Opset 11's Clip already takes inputs; give them as Constants.
    let mut m = pb::ModelProto::decode(old.as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    for (name, v) in [("lo", -0.5f32), ("hi", 0.5)] {
        g.node.insert(
            0,
            node(
                "Constant",
                &[],
                &[name],
                vec![pb::AttributeProto {
                    name: Some("value_float".into()),
                    r#type: Some(1),
                    f: Some(v),
                    ..Default::default()
                }],
            ),
        );
    }
    let old = m.encode_to_vec();
    let a = import(&file("old.onnx", &old), quote!()).unwrap();
    let new = model(
        13,
        vec![input("x", &[Ok(2), Ok(3)])],
        vec![
            node("Unsqueeze", &["x", "ax"], &["u"], vec![]),
            node("Clip", &["u", "lo", "hi"], &["c"], vec![]),
            node("Squeeze", &["c", "ax"], &["y"], vec![]),
        ],
        &["y"],
    );
    let mut m = pb::ModelProto::decode(new.as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    g.initializer.push(pb::TensorProto {
        name: Some("ax".into()),
        dims: vec![1],
        data_type: Some(7),
        int64_data: vec![0],
        ..Default::default()
    });
    for (name, v) in [("lo", -0.5f32), ("hi", 0.5)] {
        g.initializer.push(pb::TensorProto {
            name: Some(name.into()),
            data_type: Some(1),
            float_data: vec![v],
            ..Default::default()
        });
    }
    let b = import(&file("new.onnx", &m.encode_to_vec()), quote!()).unwrap();
    assert_eq!(ops(&a), ["Unsqueeze", "Clip", "Squeeze"]);
    assert_eq!(ops(&a), ops(&b));
    for (x, y) in a.nodes.iter().zip(&b.nodes) {
        let values = |g: &Graph, n: &crate::ir::Node| -> Vec<Option<crate::data::Data>> {
            n.inputs
                .iter()
                .map(|i| i.and_then(|i| g.tensors[i].value.clone()))
                .collect()
        };
        assert_eq!(values(&a, x), values(&b, y));
    }
    assert_eq!(a.opset, 13);
}

#[test]
fn nodes_out_of_order_are_sorted_and_shape_chains_fold() {
    // y = Reshape(x, Concat(Shape(x)[0], [-1])), nodes listed backwards.
    let bytes = model(
        13,
        vec![input("x", &[Err("batch"), Ok(2), Ok(3)])],
        vec![
            node("Reshape", &["x", "shape"], &["y"], vec![]),
            node(
                "Concat",
                &["b1", "minus1"],
                &["shape"],
                vec![int("axis", 0)],
            ),
            node("Unsqueeze", &["b", "zero"], &["b1"], vec![]),
            node("Gather", &["s", "zero_s"], &["b"], vec![int("axis", 0)]),
            node("Shape", &["x"], &["s"], vec![]),
            node("Constant", &[], &["zero"], vec![ints("value_ints", &[0])]),
            node(
                "Constant",
                &[],
                &["minus1"],
                vec![ints("value_ints", &[-1])],
            ),
            node("Constant", &[], &["zero_s"], vec![int("value_int", 0)]),
        ],
        &["y"],
    );
    let g = import(&file("chain.onnx", &bytes), quote!(, dims(batch = 4))).unwrap();
    assert_eq!(ops(&g), ["Reshape"]);
    let shape = g.nodes[0].inputs[1].unwrap();
    assert_eq!(
        g.tensors[shape].value,
        Some(crate::data::Data::I64(vec![4, -1]))
    );
    let y = g.outputs[0];
    assert_eq!(g.tensors[y].ty.shape, crate::types::Shape::fixed(&[4, 6]));
}

#[test]
fn open_dims_unknown_operators_and_broken_names_are_all_reported() {
    let bytes = model(
        13,
        vec![input("x:0", &[Err("batch"), Err(""), Ok(3)])],
        vec![
            node("Frobnicate", &["x:0"], &["a"], vec![]),
            node("Relu", &["a"], &["b"], vec![]),
            node("Relu", &["ghost"], &["c"], vec![]),
            node("Add", &["b", "c"], &["y"], vec![]),
        ],
        &["y"],
    );
    let e = import(
        &file("bad.onnx", &bytes),
        quote!(, dims(batch = 1, chanels = 3)),
    )
    .unwrap_err();
    assert!(
        e.iter()
            .any(|m| m.contains("`x:0` is [batch, ?, 3]: give `shapes(\"x:0\" = [1, ?, 3])`")),
        "{e:#?}"
    );
    assert!(
        e.iter()
            .any(|m| m == "the file's inputs have no dim named `chanels`"),
        "{e:#?}"
    );
    assert!(
        e.iter()
            .any(|m| m.contains("`ghost` (read by `Relu_c` (Relu))")),
        "{e:#?}"
    );
    assert!(
        e.iter()
            .any(|m| m.contains("tinyonnx does not support Frobnicate")),
        "{e:#?}"
    );
    // The failed names do not cascade into more errors.
    assert_eq!(e.len(), 4, "{e:#?}");
}

#[test]
fn cycles_truncation_and_wrong_versions_are_errors_not_panics() {
    let cyc = model(
        13,
        vec![input("x", &[Ok(1)])],
        vec![
            node("Add", &["x", "b"], &["a"], vec![]),
            node("Relu", &["a"], &["b"], vec![]),
        ],
        &["b"],
    );
    let e = import(&file("cycle.onnx", &cyc), quote!()).unwrap_err();
    assert!(
        e.iter().any(|m| m.contains("the graph has a cycle")),
        "{e:#?}"
    );
    for cut in [1, cyc.len() / 2, cyc.len() - 1] {
        let r = import(&file("cut.onnx", &cyc[..cut]), quote!());
        assert!(r.is_err(), "a file cut at {cut} bytes imported");
    }
    let old = model(
        6,
        vec![input("x", &[Ok(1)])],
        vec![node("Relu", &["x"], &["y"], vec![])],
        &["y"],
    );
    let e = import(&file("v6.onnx", &old), quote!()).unwrap_err();
    assert!(
        e[0].contains("uses opset 6 of the default domain; tinyonnx imports opsets 7 to 28"),
        "{e:#?}"
    );
    let e = import("/nonexistent/m.onnx", quote!()).unwrap_err();
    assert!(e[0].contains("not found"), "{e:#?}");
}

#[test]
fn softmax_before_13_flattens_at_its_axis() {
    let bytes = model(
        11,
        vec![input("x", &[Ok(2), Ok(3), Ok(4)])],
        vec![node("Softmax", &["x"], &["y"], vec![])],
        &["y"],
    );
    let g = import(&file("softmax.onnx", &bytes), quote!()).unwrap();
    assert_eq!(ops(&g), ["Reshape", "Softmax", "Reshape"]);
    let flat = g.nodes[0].outputs[0];
    assert_eq!(
        g.tensors[flat].ty.shape,
        crate::types::Shape::fixed(&[2, 12])
    );
}

/// Found by the import fuzzer: a Reshape without its shape input reached inference.
#[test]
fn a_node_without_a_required_input_is_an_error() {
    let bytes = model(
        13,
        vec![input("x", &[Ok(2), Ok(3)])],
        vec![node("Reshape", &["x"], &["y"], vec![])],
        &["y"],
    );
    let e = import(&file("arity.onnx", &bytes), quote!()).unwrap_err();
    assert_eq!(
        e,
        ["node `Reshape_y` (Reshape): lacks its required input shape (input 1)"]
    );
}

#[test]
fn renames_name_the_inputs_and_outputs_and_unknown_ones_are_errors() {
    let bytes = model(
        13,
        vec![input("input.1", &[Ok(2)])],
        vec![node("Relu", &["input.1"], &["out:0"], vec![])],
        &["out:0"],
    );
    let path = file("rename.onnx", &bytes);
    let g = import(&path, quote!(, rename(audio = "input.1", speech = "out:0"))).unwrap();
    assert_eq!(g.tensors[g.inputs[0]].name, "audio");
    assert_eq!(g.tensors[g.outputs[0]].name, "speech");
    let e = import(&path, quote!(, rename(x = "inputs.1"))).unwrap_err();
    assert_eq!(
        e,
        ["the file has no input or output `inputs.1` to rename to `x`"]
    );
}

/// `y = x + w` over two values, `w` an initializer of `data_type` stored as external
/// data with these `(key, value)` entries.
fn external_model(data_type: i32, entries: &[(&str, &str)]) -> Vec<u8> {
    let mut m = pb::ModelProto::decode(
        model(
            13,
            vec![input("x", &[Ok(2)])],
            vec![node("Add", &["x", "w"], &["y"], vec![])],
            &["y"],
        )
        .as_slice(),
    )
    .unwrap();
    m.graph.as_mut().unwrap().initializer.push(pb::TensorProto {
        name: Some("w".into()),
        dims: vec![2],
        data_type: Some(data_type),
        data_location: Some(1),
        external_data: entries
            .iter()
            .map(|(k, v)| pb::StringStringEntryProto {
                key: Some(k.to_string()),
                value: Some(v.to_string()),
            })
            .collect(),
        ..Default::default()
    });
    m.encode_to_vec()
}

#[test]
fn external_data_outside_the_models_directory_is_refused() {
    let m = external_model(1, &[("location", "../../etc/passwd"), ("length", "8")]);
    let e = import(&file("escape.onnx", &m), quote!()).unwrap_err();
    assert_eq!(
        e,
        [
            "initializer `w` is external data at `../../etc/passwd`: the location must be a relative path below the model's directory"
        ]
    );
}

/// External data gets the cases every weight reader has: a range past the file's end, a
/// range shorter or longer than the dims need, and an element type tinyonnx cannot
/// read, each an error naming the initializer and the sizes; the exact range loads.
#[test]
fn external_data_that_is_short_long_or_of_another_type_is_refused() {
    let data: Vec<u8> = [1.5f32, -2.0, 3.25]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    // The model files beside the data, in one directory.
    let dir = crate::scratch::Scratch::new();
    dir.write("weights.bin", &data);
    let with = |offset: &str, length: &str, data_type: i32| {
        let entries = [
            ("location", "weights.bin"),
            ("offset", offset),
            ("length", length),
        ];
        let name = format!("ext_{offset}_{length}_{data_type}.onnx");
        import(
            &dir.write(&name, &external_model(data_type, &entries)),
            quote!(),
        )
    };
    let g = with("4", "8", 1).unwrap();
    let w = g.weights[0];
    assert_eq!(
        g.tensors[w].value,
        Some(crate::data::Data::F32(vec![-2.0, 3.25]))
    );
    let error = |offset: &str, length: &str, data_type: i32| {
        with(offset, length, data_type).unwrap_err().join("\n")
    };
    assert_eq!(
        error("4", "12", 1),
        "initializer `w` is external data at bytes 4..16 of weights.bin, which has 12 bytes"
    );
    assert_eq!(
        error("4", "4", 1),
        "initializer `w` is truncated or corrupt: dims [2] need 8 bytes of raw data, it holds 4"
    );
    assert_eq!(
        error("0", "12", 1),
        "initializer `w` is truncated or corrupt: dims [2] need 8 bytes of raw data, it holds 12"
    );
    assert!(
        error("4", "8", 8)
            .starts_with("initializer `w` has element type STRING; tinyonnx reads FLOAT")
    );
}

/// A scalar `Constant` of ONNX type `dtype` from its little-endian bytes.
fn scalar(name: &str, dtype: i32, raw: &[u8]) -> pb::NodeProto {
    let t = pb::TensorProto {
        data_type: Some(dtype),
        raw_data: Some(raw.to_vec()),
        ..Default::default()
    };
    let mut n = node("Constant", &[], &[name], vec![]);
    n.attribute.push(pb::AttributeProto {
        name: Some("value".into()),
        r#type: Some(4),
        t: Some(t),
        ..Default::default()
    });
    n
}

#[test]
fn a_qlinear_softmax_of_opset_11_flattens_at_its_axis() {
    let mut softmax = node(
        "QLinearSoftmax",
        &["q", "s", "z", "ys", "yz"],
        &["y"],
        vec![int("axis", 1), int("opset", 11)],
    );
    softmax.domain = Some("com.microsoft".into());
    let nodes = vec![
        scalar("s", 1, &0.05f32.to_le_bytes()),
        scalar("z", 3, &[3]),
        scalar("ys", 1, &(1.0f32 / 256.0).to_le_bytes()),
        scalar("yz", 3, &[128]),
        node("QuantizeLinear", &["x", "s", "z"], &["q"], vec![]),
        softmax,
    ];
    let bytes = model(17, vec![input("x", &[Ok(2), Ok(3), Ok(4)])], nodes, &["y"]);
    let g = import(&file("qsoftmax.onnx", &bytes), quote!()).unwrap();
    let found = ops(&g);
    let at = found
        .iter()
        .position(|&o| o == "Softmax")
        .expect("a Softmax");
    assert_eq!(found[at - 1], "Reshape", "{found:?}");
    let flat = g.nodes[at].inputs[0].unwrap();
    assert_eq!(
        g.tensors[flat].ty.shape,
        crate::types::Shape::fixed(&[2, 12])
    );
    // At its own opset (17) the same node takes the axis as it is: no reshape.
    let mut bytes = pb::ModelProto::decode(&bytes[..]).unwrap();
    let graph = bytes.graph.as_mut().unwrap();
    let last = graph.node.len() - 1;
    graph.node[last].attribute[1].i = Some(17);
    let g = import(&file("qsoftmax17.onnx", &bytes.encode_to_vec()), quote!()).unwrap();
    assert!(!ops(&g).contains(&"Reshape"), "{:?}", ops(&g));
}

#[test]
fn a_qlinear_where_passes_its_condition_and_dequantizes_its_operands() {
    let where_node = |cond: &str| {
        let mut n = node(
            "QLinearWhere",
            &[cond, "q", "s", "z", "q", "s", "z", "ys", "yz"],
            &["y"],
            vec![],
        );
        n.domain = Some("com.microsoft".into());
        n
    };
    let nodes = |cond: &str| {
        vec![
            scalar("s", 1, &0.05f32.to_le_bytes()),
            scalar("z", 3, &[3]),
            scalar("ys", 1, &0.1f32.to_le_bytes()),
            scalar("yz", 3, &[0]),
            scalar("cut", 1, &0.0f32.to_le_bytes()),
            node("Greater", &["x", "cut"], &["c"], vec![]),
            node("QuantizeLinear", &["x", "s", "z"], &["q"], vec![]),
            where_node(cond),
        ]
    };
    let x = || vec![input("x", &[Ok(2), Ok(3)])];
    let bytes = model(17, x(), nodes("c"), &["y"]);
    let g = import(&file("qwhere.onnx", &bytes), quote!()).unwrap();
    let found = ops(&g);
    let at = found.iter().position(|&o| o == "Where").expect("a Where");
    let greater = found
        .iter()
        .position(|&o| o == "Greater")
        .expect("a Greater");
    assert_eq!(g.nodes[at].inputs[0], Some(g.nodes[greater].outputs[0]));
    let dequantized = found.iter().filter(|&&o| o == "DequantizeLinear").count();
    assert_eq!(dequantized, 2, "{found:?}");
    assert_eq!(found.last(), Some(&"QuantizeLinear"), "{found:?}");

    let bytes = model(17, x(), nodes(""), &["y"]);
    let e = import(&file("qwhere_nocond.onnx", &bytes), quote!()).unwrap_err();
    assert!(
        e.iter().any(|m| m.contains("has no condition (input 0)")),
        "{e:?}"
    );
}
