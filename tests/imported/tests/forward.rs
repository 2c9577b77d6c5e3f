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
            // Silero's sample rate: the rate its fixed dims select.
            for (t, v) in info.inputs.iter().zip(&mut inputs) {
                if t.name == "sr" {
                    *v = Values::I64(vec![16000]);
                }
            }
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
