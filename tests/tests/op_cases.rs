//! The operator registry's cross-check cases (`tests/src/cases.rs`, generated from each
//! operator's `cases`) against ONNX Runtime: per operator, the number of cases and
//! outputs compared and the worst difference. Integer and bool outputs must be equal.

use std::collections::BTreeMap;

use tinyonnx_tests::cases::CASES;
use tinyonnx_tests::{Provider, compare_values, run_ort_values, seeded_values, session, tolerance};

const SEEDS: [u64; 3] = [1, 2, 3];

#[derive(Default)]
struct Tally {
    cases: usize,
    outputs: usize,
    exact_outputs: usize,
    max_abs: f32,
    max_scaled: f32,
}

#[test]
fn every_operator_case_matches_onnx_runtime() {
    let provider = Provider::from_env().unwrap();
    let mut per_op: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    for (op, example) in CASES {
        let info = &example.info;
        let tally = per_op.entry(op).or_default();
        tally.cases += 1;
        let mut sess = match session(example.onnx, provider) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{}: {e}", info.name));
                continue;
            }
        };
        for seed in SEEDS {
            let inputs = seeded_values(info, seed, 1.0).unwrap();
            let expected = match run_ort_values(&mut sess, info, &inputs) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{} seed {seed}: {e}", info.name));
                    continue;
                }
            };
            let ours = tinyonnx_tests::run_ours(example, &inputs).unwrap_or_else(|e| panic!("{e}"));
            for (k, (a, b)) in ours.iter().zip(&expected).enumerate() {
                let d = compare_values(a, b);
                tally.outputs += 1;
                tally.exact_outputs += usize::from(a.is_exact());
                tally.max_abs = tally.max_abs.max(d.max_abs);
                tally.max_scaled = tally.max_scaled.max(d.max_scaled);
                if d.max_scaled > tolerance(a) {
                    failures.push(format!(
                        "{} output `{}` ({}) seed {seed}: max abs diff {:.3e}, scaled {:.3e}",
                        info.name,
                        info.outputs[k].name,
                        a.dtype(),
                        d.max_abs,
                        d.max_scaled
                    ));
                }
            }
        }
    }
    println!(
        "| operator | cases | outputs compared ({} seeds each) | of them integer or bool (exact) | worst max abs diff | worst scaled |",
        SEEDS.len()
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (op, t) in &per_op {
        println!(
            "| {op} | {} | {} | {} | {:.2e} | {:.2e} |",
            t.cases, t.outputs, t.exact_outputs, t.max_abs, t.max_scaled
        );
    }
    let total: usize = per_op.values().map(|t| t.cases).sum();
    println!("{} operators, {total} cases", per_op.len());
    assert!(
        failures.is_empty(),
        "cases outside the numerical contract:\n{}",
        failures.join("\n")
    );
}

/// NaN and infinities in every float input of every case (`with_specials`): our outputs
/// against ONNX Runtime's, NaN equal to NaN and each infinity to itself. Prints the
/// operators whose special values differ; those not in [`tinyonnx_tests::SPECIALS_DIFFER`] fail.
#[test]
fn nan_and_infinity_as_onnx_runtime() {
    let provider = Provider::from_env().unwrap();
    let mut differ: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut checked = 0;
    for (op, example) in CASES {
        let info = &example.info;
        if !info
            .inputs
            .iter()
            .any(|t| t.dtype == "f32" || t.dtype == "f64")
        {
            continue;
        }
        let Ok(mut sess) = session(example.onnx, provider) else {
            continue;
        };
        let mut inputs = seeded_values(info, 1, 1.0).unwrap();
        tinyonnx_tests::with_specials(&mut inputs);
        let Ok(expected) = run_ort_values(&mut sess, info, &inputs) else {
            continue;
        };
        let ours = tinyonnx_tests::run_ours(example, &inputs).unwrap_or_else(|e| panic!("{e}"));
        checked += 1;
        for (k, (a, b)) in ours.iter().zip(&expected).enumerate() {
            let d = tinyonnx_tests::compare_values_nan(a, b);
            if d.max_scaled > tolerance(a) {
                // The first element that differs.
                let (x, y) = (a.to_f64(), b.to_f64());
                let same = |p: f64, q: f64| {
                    (p.is_nan() && q.is_nan()) || p == q || (p - q).abs() <= 1e-5 * q.abs().max(1.0)
                };
                let at = x.iter().zip(&y).position(|(p, q)| !same(*p, *q));
                let shown = at.map_or(String::new(), |i| {
                    format!(" [{i}] ours {} ORT {}", x[i], y[i])
                });
                differ.entry(op).or_default().push(format!(
                    "{} output `{}`{shown}",
                    info.name, info.outputs[k].name
                ));
            }
        }
    }
    println!("{checked} cases with NaN and infinities in their float inputs");
    let mut unexpected = Vec::new();
    for (op, cases) in &differ {
        match tinyonnx_tests::SPECIALS_DIFFER
            .iter()
            .find(|(o, _)| o == op)
        {
            Some((_, why)) => println!("{op} (known: {why}): {}", cases.join(", ")),
            None => {
                println!("{op}: {}", cases.join(", "));
                unexpected.push(*op);
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "operators that treat NaN or infinity unlike ONNX Runtime: {unexpected:?}"
    );
}
