//! The ONNX importer on mutated files: a seed model that uses what the importer handles
//! (opset 11 forms, a shape chain, a constant If, Sum, a local function) and the real
//! models `cargo xtask setup` fetched, changed structurally (huge or negative dims,
//! nodes reversed, dropped or made into a cycle, attributes of the wrong type, other
//! operators, opsets and IR versions, element types, If nested deep) and byte by byte
//! (truncated, flipped, overwritten). Every file must compile through the whole pipeline
//! or be refused with errors, never panic. `TINYONNX_FUZZ_SECONDS` sets the budget
//! (default 3).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use tinyonnx_core::init::SplitMix64;
use tinyonnx_proto::{self as pb, Message};

#[path = "fuzz/bytes.rs"]
mod bytes;
#[path = "fuzz/onnx.rs"]
mod onnx;
use onnx::{graph as graph_attr, input as value_info, int as attr_i, ints as attr_ints, node};

fn f32_tensor(name: &str, dims: &[i64], values: &[f32]) -> pb::TensorProto {
    pb::TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(1),
        raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        ..Default::default()
    }
}

/// The seed: x [batch, 2, 4, 4] -> Conv -> Clip -> Sum with itself and a function call
/// -> an If on the batch (constant once fixed) -> Reshape to [batch, -1] by a shape chain
/// -> Softmax (opset 11: over the flattened rest).
fn seed() -> pb::ModelProto {
    let w: Vec<f32> = (0..2 * 2 * 3 * 3)
        .map(|k| (k as f32 * 0.37).sin())
        .collect();
    let then_branch = pb::GraphProto {
        name: Some("then".into()),
        node: vec![node("Relu", &["s"], &["t_out"], vec![])],
        output: vec![value_info("t_out", &[])],
        ..Default::default()
    };
    let else_branch = pb::GraphProto {
        name: Some("else".into()),
        node: vec![node("Neg", &["s"], &["e_out"], vec![])],
        output: vec![value_info("e_out", &[])],
        ..Default::default()
    };
    let function = pb::FunctionProto {
        name: Some("Twice".into()),
        domain: Some("local".into()),
        input: vec!["a".into()],
        output: vec!["b".into()],
        node: vec![node("Add", &["a", "a"], &["b"], vec![])],
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(11),
        }],
        ..Default::default()
    };
    let mut call = node("Twice", &["c"], &["f"], vec![]);
    call.domain = Some("local".into());
    let nodes = vec![
        node(
            "Conv",
            &["x", "w"],
            &["conv"],
            vec![attr_ints("pads", &[1, 1, 1, 1])],
        ),
        node("Clip", &["conv"], &["c"], vec![]),
        call,
        node("Sum", &["c", "c", "f"], &["s"], vec![]),
        node("Shape", &["x"], &["shape"], vec![]),
        node(
            "Gather",
            &["shape", "zero"],
            &["batch"],
            vec![attr_i("axis", 0)],
        ),
        node("Equal", &["batch", "one"], &["is_one"], vec![]),
        node(
            "If",
            &["is_one"],
            &["picked"],
            vec![
                graph_attr("then_branch", then_branch),
                graph_attr("else_branch", else_branch),
            ],
        ),
        node(
            "Unsqueeze",
            &["batch"],
            &["batch1"],
            vec![attr_ints("axes", &[0])],
        ),
        node(
            "Concat",
            &["batch1", "minus1"],
            &["flat"],
            vec![attr_i("axis", 0)],
        ),
        node("Reshape", &["picked", "flat"], &["r"], vec![]),
        node("Softmax", &["r"], &["y"], vec![]),
    ];
    let int_tensor = |name: &str, dims: &[i64], v: &[i64]| pb::TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(7),
        int64_data: v.to_vec(),
        ..Default::default()
    };
    pb::ModelProto {
        ir_version: Some(7),
        opset_import: vec![
            pb::OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(11),
            },
            pb::OperatorSetIdProto {
                domain: Some("local".into()),
                version: Some(1),
            },
        ],
        graph: Some(pb::GraphProto {
            name: Some("seed".into()),
            node: nodes,
            initializer: vec![
                f32_tensor("w", &[2, 2, 3, 3], &w),
                int_tensor("zero", &[], &[0]),
                int_tensor("one", &[], &[1]),
                int_tensor("minus1", &[1], &[-1]),
            ],
            input: vec![value_info("x", &[Err("batch"), Ok(2), Ok(4), Ok(4)])],
            output: vec![value_info("y", &[])],
            ..Default::default()
        }),
        functions: vec![function],
        ..Default::default()
    }
}

const OPS: &[&str] = &[
    "Relu",
    "Conv",
    "Reshape",
    "Shape",
    "Gather",
    "Concat",
    "Slice",
    "If",
    "Loop",
    "Softmax",
    "Sum",
    "Squeeze",
    "Unsqueeze",
    "Pad",
    "Clip",
    "Split",
    "LSTM",
    "Constant",
    "MatMul",
    "ConstantOfShape",
    "Range",
    "Expand",
    "Cast",
    "Nonsense",
    "",
];

/// One structural mutation of a decoded model.
fn mutate_model(rng: &mut SplitMix64, m: &mut pb::ModelProto) {
    let pick = |rng: &mut SplitMix64, n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
    let big = [i64::MAX, i64::MIN, -5, 0, 1 << 40, 1 << 31, 3];
    let what = rng.next_u64() % 12;
    if what == 6 {
        if let Some(o) = m.opset_import.first_mut() {
            o.version = Some(pick(rng, 30) as i64 - 1);
        }
        return;
    }
    if what == 7 {
        m.ir_version = Some(pick(rng, 14) as i64 - 1);
        return;
    }
    let Some(g) = m.graph.as_mut() else { return };
    let n = g.node.len();
    match what {
        0 => {
            if let Some(pb::type_proto::Value::TensorType(t)) = g
                .input
                .first_mut()
                .and_then(|i| i.r#type.as_mut())
                .and_then(|t| t.value.as_mut())
                && let Some(s) = t.shape.as_mut()
                && !s.dim.is_empty()
            {
                let k = pick(rng, s.dim.len());
                s.dim[k].value = Some(pb::tensor_shape_proto::dimension::Value::DimValue(
                    big[pick(rng, big.len())],
                ));
            }
        }
        1 => g.node.reverse(),
        2 if n > 0 => {
            g.node.remove(pick(rng, n));
        }
        3 if n > 1 => {
            // A cycle: an early node reads a later one's output.
            let (i, j) = (pick(rng, n), pick(rng, n));
            let (i, j) = (i.min(j), i.max(j));
            if let Some(out) = g.node[j].output.first().cloned()
                && !g.node[i].input.is_empty()
            {
                g.node[i].input[0] = out;
            }
        }
        4 if n > 0 => {
            let k = pick(rng, n);
            if let Some(a) = g.node[k].attribute.first_mut() {
                a.r#type = Some(pick(rng, 16) as i32);
                match pick(rng, 4) {
                    0 => a.ints = vec![big[pick(rng, big.len())]; pick(rng, 9)],
                    1 => a.i = Some(big[pick(rng, big.len())]),
                    2 => a.f = Some(f32::NAN),
                    _ => a.g = None,
                }
            }
        }
        5 if n > 0 => {
            let k = pick(rng, n);
            g.node[k].op_type = Some(OPS[pick(rng, OPS.len())].into());
        }
        8 if n > 1 => {
            let out = g.node[0].output.clone();
            let k = pick(rng, n);
            g.node[k].output = out;
        }
        9 if !g.initializer.is_empty() => {
            let k = pick(rng, g.initializer.len());
            let t = &mut g.initializer[k];
            match pick(rng, 3) {
                0 => t.data_type = Some(pick(rng, 25) as i32),
                1 => t.dims.push(big[pick(rng, big.len())]),
                _ => {
                    if let Some(r) = t.raw_data.as_mut() {
                        r.truncate(r.len() / 2)
                    }
                }
            }
        }
        10 if n > 0 => {
            let k = pick(rng, n);
            if let Some(i) = g.node[k].input.first_mut() {
                *i = "nowhere".into();
            }
        }
        11 => {
            // If inside If, up to 40 deep, each on a constant condition.
            let depth = 1 + pick(rng, 40);
            let mut body = pb::GraphProto {
                node: vec![node("Identity", &["y0"], &["inner"], vec![])],
                output: vec![value_info("inner", &[])],
                ..Default::default()
            };
            for d in 0..depth {
                let out = format!("nest{d}");
                body = pb::GraphProto {
                    node: vec![node(
                        "If",
                        &["cond"],
                        &[&out],
                        // The else branch small: both the nested body would double
                        // the file at every level.
                        vec![
                            graph_attr("then_branch", body),
                            graph_attr("else_branch", leaf(&out)),
                        ],
                    )],
                    output: vec![value_info(&out, &[])],
                    ..Default::default()
                };
            }
            g.initializer.push(pb::TensorProto {
                name: Some("cond".into()),
                data_type: Some(9),
                int32_data: vec![1],
                ..Default::default()
            });
            if let Some(y) = g.output.first_mut() {
                y.name = Some("final".into());
            }
            let mut last = body.node.remove(0);
            last.output = vec!["final".into()];
            if let Some(first) = g.node.last_mut() {
                first.output = vec!["y0".into()];
            }
            g.node.push(last);
        }
        _ => {}
    }
}

/// A branch that copies `y0` to `out`.
fn leaf(out: &str) -> pb::GraphProto {
    pb::GraphProto {
        node: vec![node("Identity", &["y0"], &[out], vec![])],
        output: vec![value_info(out, &[])],
        ..Default::default()
    }
}

/// Compiles `bytes` as an import; whether it panicked.
fn panics(path: &Path, bytes: &[u8]) -> bool {
    std::fs::write(path, bytes).unwrap();
    let src = format!(
        "pub model M = import({:?}, dims(batch = 1), shapes(x = [1, 2, 4, 4]));",
        path.display().to_string()
    );
    let tokens = proc_macro2::TokenStream::from_str(&src).unwrap();
    catch_unwind(AssertUnwindSafe(|| {
        let _ = tinyonnx_core::driver::compile(tokens);
    }))
    .is_err()
}

#[test]
fn mutated_onnx_files_never_panic() {
    let seconds: u64 = std::env::var("TINYONNX_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let dir = std::env::temp_dir().join(format!("tinyonnx-fuzz-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.onnx");
    let seed = seed();
    // The seed imports as written (the shapes(...) entry fixes the same dims).
    std::fs::write(&path, seed.encode_to_vec()).unwrap();
    let src = format!(
        "pub model M = import({:?}, dims(batch = 1));",
        path.display().to_string()
    );
    if let Err(f) =
        tinyonnx_core::driver::compile(proc_macro2::TokenStream::from_str(&src).unwrap())
    {
        let errs: Vec<String> = f.errors.iter().map(ToString::to_string).collect();
        panic!("the seed does not import: {errs:#?}");
    }
    let mut seeds = vec![seed];
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/xtask/models");
    if let Ok(entries) = std::fs::read_dir(&models) {
        for e in entries.flatten() {
            if let Ok(m) =
                pb::ModelProto::decode(std::fs::read(e.path()).unwrap_or_default().as_slice())
            {
                seeds.push(m);
            }
        }
    }
    let mut rng = SplitMix64::new(0x1A9017);
    let (start, mut tried) = (Instant::now(), 0u64);
    let mut found = Vec::new();
    while start.elapsed() < Duration::from_secs(seconds) {
        for s in &seeds {
            let mut m = s.clone();
            for _ in 0..1 + rng.next_u64() % 3 {
                mutate_model(&mut rng, &mut m);
            }
            let mut bytes = m.encode_to_vec();
            if rng.next_u64().is_multiple_of(3) {
                bytes = bytes::mutate(&mut rng, &bytes);
            }
            if panics(&path, &bytes) {
                let keep = dir.join(format!("panic-{}.onnx", found.len()));
                std::fs::write(&keep, &bytes).unwrap();
                found.push(keep.display().to_string());
            }
            tried += 1;
        }
    }
    println!(
        "fuzz import: {tried} mutated ONNX files, {} seeds, {} panics",
        seeds.len(),
        found.len()
    );
    assert!(found.is_empty(), "the importer panicked on: {found:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
