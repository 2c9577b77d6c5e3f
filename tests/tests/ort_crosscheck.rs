//! Every example model against ONNX Runtime on the same ONNX bytes and inputs.

use tinyonnx_tests::{
    Provider, TOLERANCE, Values, compare, compare_values, run_ort_values, seeded_values, session,
    tolerance,
};

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

#[test]
fn every_example_matches_onnx_runtime() {
    let provider = Provider::from_env().unwrap();
    let mut failures = Vec::new();
    println!(
        "{:<18} {:>6} {:>14} {:>14} {:>12}",
        "model", "inputs", "max abs diff", "max scaled", "min cosine"
    );
    for example in tinyonnx_examples::MODELS {
        let info = &example.info;
        if let Some(why) = tinyonnx_tests::ort_skip_reason(example) {
            println!("{:<18} {why}", info.name);
            continue;
        }
        let mut sess =
            session(example.onnx, provider).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        let (mut max_abs, mut max_scaled, mut min_cos) = (0f32, 0f32, f64::INFINITY);
        for seed in SEEDS {
            let inputs =
                seeded_values(info, seed, 1.0).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let expected = run_ort_values(&mut sess, info, &inputs)
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let ours = tinyonnx_tests::run_ours(example, &inputs).unwrap_or_else(|e| panic!("{e}"));
            for (k, (a, b)) in ours.iter().zip(&expected).enumerate() {
                let d = compare_values(a, b);
                max_abs = max_abs.max(d.max_abs);
                max_scaled = max_scaled.max(d.max_scaled);
                min_cos = min_cos.min(d.cosine);
                if d.max_scaled > tolerance(a) {
                    let exact = if a.is_exact() {
                        " (integer or bool: must be equal)"
                    } else {
                        ""
                    };
                    failures.push(format!(
                        "{} output `{}` seed {seed}: max abs diff {:.3e} (scaled {:.3e}) > {:e}{exact}, cosine {:.9}",
                        info.name, info.outputs[k].name, d.max_abs, d.max_scaled, tolerance(a), d.cosine
                    ));
                }
            }
        }
        println!(
            "{:<18} {:>6} {:>14.3e} {:>14.3e} {:>12.9}",
            info.name,
            SEEDS.len(),
            max_abs,
            max_scaled,
            min_cos
        );
    }
    assert!(
        failures.is_empty(),
        "outside the numerical contract:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_comparison_can_fail() {
    // A perturbation of 1e-4 must be caught by the same measure the cross-check uses.
    let a = [0.25f32, 0.5, 0.25];
    let b = [0.25f32, 0.5001, 0.25];
    assert!(compare(&a, &b).max_scaled > TOLERANCE);
    assert!(compare(&a, &a).max_scaled <= TOLERANCE);
    // Integers and bools must be equal: one step apart fails.
    let (x, y) = (Values::I32(vec![3, 4]), Values::I32(vec![3, 5]));
    assert!(compare_values(&x, &y).max_scaled > TOLERANCE);
    assert!(compare_values(&x, &x).max_scaled <= TOLERANCE);
    let (p, q) = (Values::Bool(vec![true]), Values::Bool(vec![false]));
    assert!(compare_values(&p, &q).max_scaled > TOLERANCE);
}

#[test]
fn every_example_matches_onnx_runtime_layer_by_layer() {
    let provider = Provider::from_env().unwrap();
    let mut failures = Vec::new();
    println!(
        "{:<18} {:>8} {:>14}  first tensor outside the contract",
        "model", "tensors", "max scaled"
    );
    for example in tinyonnx_examples::MODELS {
        let name = example.info.name;
        if let Some(why) = tinyonnx_tests::ort_skip_reason(example) {
            println!("{name:<18} {why}");
            continue;
        }
        let layers = tinyonnx_tests::layer_by_layer(example, provider, 1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let worst = layers
            .iter()
            .map(|l| l.diff.max_scaled)
            .fold(0f32, f32::max);
        let first = tinyonnx_tests::first_divergence(&layers);
        println!(
            "{name:<18} {:>8} {worst:>14.3e}  {}",
            layers.len(),
            first.map_or("-".to_string(), |l| l.name.clone())
        );
        assert!(!layers.is_empty(), "{name}: no tensor was traced");
        if let Some(l) = first {
            failures.push(format!(
                "{name}: `{}` ({}) is the first tensor outside the contract: max abs diff {:.3e}, scaled {:.3e}",
                l.name, l.dtype, l.diff.max_abs, l.diff.max_scaled
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_first_divergence_is_named() {
    let layer = |name: &str, scaled: f32| tinyonnx_tests::LayerDiff {
        name: name.to_string(),
        dtype: "f32",
        diff: tinyonnx_tests::Diff {
            max_abs: scaled,
            max_scaled: scaled,
            cosine: 1.0,
        },
        within: scaled <= TOLERANCE,
    };
    let layers = [layer("a", 0.0), layer("b", 1e-3), layer("c", 1e-2)];
    assert_eq!(
        tinyonnx_tests::first_divergence(&layers).map(|l| l.name.as_str()),
        Some("b")
    );
    assert!(tinyonnx_tests::first_divergence(&layers[..1]).is_none());
}

#[test]
fn every_example_runs_from_external_data() {
    // Initializers of 1 KB or more in a side file (the ONNX external-data convention),
    // loaded by ONNX Runtime from the model's path.
    let provider = Provider::from_env().unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("external-data");
    std::fs::create_dir_all(&dir).unwrap();
    let mut moved = 0;
    for example in tinyonnx_examples::MODELS {
        let info = &example.info;
        if tinyonnx_tests::ort_skip_reason(example).is_some() {
            continue;
        }
        let file = format!("{}.onnx", info.name);
        let location = format!("{file}.data");
        let (model, data) =
            tinyonnx_tests::to_external_data(example.onnx, &location, 1024).unwrap();
        std::fs::write(dir.join(&file), &model).unwrap();
        std::fs::write(dir.join(&location), &data).unwrap();
        moved += usize::from(!data.is_empty());
        let mut sess = tinyonnx_tests::session_from_file(&dir.join(&file), provider)
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        let inputs = seeded_values(info, 1, 1.0).unwrap();
        let expected = run_ort_values(&mut sess, info, &inputs).unwrap();
        let ours = tinyonnx_tests::run_ours(example, &inputs).unwrap();
        for (a, b) in ours.iter().zip(&expected) {
            let d = compare_values(a, b);
            assert!(
                d.max_scaled <= tolerance(a),
                "{} from external data: max abs diff {:.3e}",
                info.name,
                d.max_abs
            );
        }
    }
    assert!(
        moved >= 10,
        "only {moved} models had initializers moved out"
    );
}
