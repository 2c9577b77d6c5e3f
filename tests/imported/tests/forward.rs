//! Each imported model's forward pass against ONNX Runtime running the original file,
//! on seeded inputs (the project's contract: scaled difference at most 1e-5).

use std::path::Path;

use tinyonnx_tests::{Provider, Values, compare_values, run_ort_values, seeded_values, tolerance};

#[test]
fn imported_forward_passes_match_onnx_runtime_on_the_original_files() {
    let provider = Provider::from_env().unwrap();
    let mut failures = Vec::new();
    println!(
        "{:<18} {:>8} {:>6} {:>10} {:>10} {:>10} {:>12}",
        "model", "params", "nodes", "MACs", "arena", "lower", "max abs diff"
    );
    for (example, file) in tinyonnx_imported::MODELS {
        let info = &example.info;
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let mut sess = tinyonnx_tests::session_from_file(&path, provider).unwrap();
        let mut max_abs = 0f32;
        for seed in [1, 2, 3, 4, 5] {
            let mut inputs = seeded_values(info, seed, 1.0).unwrap();
            tinyonnx_tests::silero_sample_rate(info, &mut inputs);
            let expected = run_ort_values(&mut sess, info, &inputs)
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let ours = tinyonnx_tests::run_ours(example, &inputs).unwrap();
            for (k, (a, b)) in ours.iter().zip(&expected).enumerate() {
                let d = compare_values(a, b);
                max_abs = max_abs.max(d.max_abs);
                if d.max_scaled > tolerance(a) {
                    failures.push(format!(
                        "{} output `{}` seed {seed}: max abs diff {:.3e} (scaled {:.3e})",
                        info.name, info.outputs[k].name, d.max_abs, d.max_scaled
                    ));
                }
            }
        }
        println!(
            "{:<18} {:>8} {:>6} {:>10} {:>10} {:>10} {:>12.3e}",
            info.name,
            info.params,
            info.nodes,
            info.macs,
            info.arena_bytes,
            info.arena_lower_bound_bytes,
            max_abs
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The composition of the imported classifier and a DSL head: its class is the argmax of
/// what ONNX Runtime computes for the original file.
#[test]
fn an_imported_backbone_composes_with_a_written_head() {
    use tinyonnx_imported::{PaddleOcrCls, PaddleOcrClsWithHead};
    let provider = Provider::from_env().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(tinyonnx_imported::MODELS[0].1);
    let mut sess = tinyonnx_tests::session_from_file(&path, provider).unwrap();
    for seed in [1, 2, 3] {
        let inputs = seeded_values(&PaddleOcrCls::INFO, seed, 1.0).unwrap();
        let probs = run_ort_values(&mut sess, &PaddleOcrCls::INFO, &inputs).unwrap();
        let Values::F32(p) = &probs[0] else {
            panic!("the classifier gives f32")
        };
        let expected = i64::from(p[1] > p[0]);
        let composed = tinyonnx_examples::example::<PaddleOcrClsWithHead>();
        let ours = tinyonnx_tests::run_ours(&composed, &inputs).unwrap();
        assert_eq!(ours[0], Values::I64(vec![expected]), "seed {seed}: {p:?}");
    }
}

/// The while loop of `WhileLoops` ends where the data says: over the seeds its
/// iteration count (computed by ONNX Runtime on the original file, equal to ours by the
/// test above) takes at least three values, one of them 0 (the loop's condition false
/// before the first trip), so both the early exit and the skipped loop are exercised.
#[test]
fn the_while_loop_runs_a_data_dependent_number_of_trips() {
    use tinyonnx::Model;
    let provider = Provider::from_env().unwrap();
    let (example, file) = tinyonnx_imported::MODELS
        .iter()
        .find(|(e, _)| e.info.name == "WhileLoops")
        .unwrap();
    let info = <tinyonnx_imported::WhileLoops as Model>::INFO;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let mut sess = tinyonnx_tests::session_from_file(&path, provider).unwrap();
    let mut rounds = std::collections::BTreeSet::new();
    for seed in 1..=12 {
        let inputs = seeded_values(&info, seed, 1.0).unwrap();
        let ours = tinyonnx_tests::run_ours(example, &inputs).unwrap();
        let expected = run_ort_values(&mut sess, &info, &inputs).unwrap();
        assert_eq!(ours[1], expected[1], "seed {seed}: the trips differ");
        let Values::I64(r) = &expected[1] else {
            panic!("rounds is int64")
        };
        rounds.insert(r[0]);
    }
    assert!(
        rounds.len() >= 3 && rounds.contains(&0),
        "trips over the seeds: {rounds:?}"
    );
}
