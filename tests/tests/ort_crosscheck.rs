//! Every example model against ONNX Runtime on the same ONNX bytes and inputs.

use tinyonnx_tests::{Provider, TOLERANCE, as_bytes, compare, run_ort, seeded_inputs, session};

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
        let mut sess =
            session(example.onnx, provider).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        let (mut max_abs, mut max_scaled, mut min_cos) = (0f32, 0f32, f64::INFINITY);
        let mut arena = vec![0u128; info.arena_bytes.div_ceil(16)];
        for seed in SEEDS {
            let inputs = seeded_inputs(info, seed, 1.0);
            let expected =
                run_ort(&mut sess, info, &inputs).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let mut ours: Vec<Vec<f32>> =
                info.outputs.iter().map(|t| vec![0.0; t.numel()]).collect();
            let input_refs: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
            let mut output_refs: Vec<&mut [f32]> = ours.iter_mut().map(Vec::as_mut_slice).collect();
            (example.run)(as_bytes(&mut arena), &input_refs, &mut output_refs)
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            for (k, (a, b)) in ours.iter().zip(&expected).enumerate() {
                let d = compare(a, b);
                max_abs = max_abs.max(d.max_abs);
                max_scaled = max_scaled.max(d.max_scaled);
                min_cos = min_cos.min(d.cosine);
                if d.max_scaled > TOLERANCE {
                    failures.push(format!(
                        "{} output `{}` seed {seed}: max abs diff {:.3e} (scaled {:.3e}) > {TOLERANCE:e}, cosine {:.9}",
                        info.name, info.outputs[k].name, d.max_abs, d.max_scaled, d.cosine
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
}
