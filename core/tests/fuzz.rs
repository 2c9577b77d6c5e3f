//! A short fuzzing run over the example and ui models, and the regression inputs of
//! earlier runs. `cargo xtask fuzz --seconds N` runs longer.

use std::path::Path;
use std::time::Duration;

#[path = "fuzz/mutator.rs"]
mod fuzz;

fn seeds(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    for dir in ["examples/src", "tests/ui"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    for f in files {
        if let Ok(text) = std::fs::read_to_string(&f) {
            out.extend(fuzz::model_bodies(&text));
        }
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn regression_inputs_do_not_panic() {
    let dir = root().join("core/tests/fuzz-regressions");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let tokens: proc_macro2::TokenStream = text.parse().unwrap();
        if let Err(msg) = fuzz::try_expand(tokens) {
            panic!("{} panics: {msg}", path.display());
        }
        count += 1;
    }
    assert!(count > 0, "no regression inputs found in {}", dir.display());
}

#[test]
fn mutated_models_never_panic() {
    let seconds: u64 = std::env::var("TINYONNX_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let seeds = seeds(&root());
    assert!(
        seeds.len() > 20,
        "expected the example and ui models as seeds, found {}",
        seeds.len()
    );
    let report = fuzz::run(&seeds, Duration::from_secs(seconds), u64::MAX, 0x5EED);
    println!(
        "fuzz: {} inputs from {} seed models in {:.1} s, {} distinct panics",
        report.inputs,
        seeds.len(),
        report.elapsed.as_secs_f64(),
        report.panics.len()
    );
    let saved = root().join("target/fuzz-panics");
    for (k, (input, msg)) in report.panics.iter().enumerate() {
        println!("PANIC: {msg}\nINPUT: {input}\n");
        std::fs::create_dir_all(&saved).unwrap();
        std::fs::write(saved.join(format!("panic-{k}.txt")), input).unwrap();
    }
    if !report.panics.is_empty() {
        println!(
            "the inputs are in {}: fix the panic, then move them to core/tests/fuzz-regressions/",
            saved.display()
        );
    }
    assert!(
        report.panics.is_empty(),
        "the macro panicked on {} inputs (printed above)",
        report.panics.len()
    );
}
