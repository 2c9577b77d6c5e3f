//! Runs the ONNX backend node test cases that `cargo xtask node-suite` imported (the
//! models in `target/xtask/node-suite/models.rs`, one `import(...)` each) on every data
//! set of the case, against the outputs the suite itself stores, compared as the ONNX
//! backend test does: `|ours - expected| <= atol + rtol * |expected|` with rtol 1e-3 and
//! atol 1e-7 for floats (NaN equal to NaN), integers and bools exactly, shapes equal.
//!
//! usage: tinyonnx-node-suite CASES_DIR
//! Prints one line per case: `name<TAB>pass` or `name<TAB>wrong<TAB>what differs`.

use std::io::Write;
use std::path::{Path, PathBuf};

use tinyonnx_examples::Example;
use tinyonnx_tests::node_data::{differs, tensors};

include!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../target/xtask/node-suite/models.rs"
));

fn run_case(example: &Example, dir: &Path) -> Result<(), String> {
    let info = &example.info;
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_"))
        })
        .collect();
    sets.sort();
    if sets.is_empty() {
        return Err("no data set".into());
    }
    for set in &sets {
        let given = tensors(set, "input")?;
        let expected = tensors(set, "output")?;
        // By name where the file names the port, else by position.
        let mut inputs = Vec::new();
        for (k, port) in info.inputs.iter().enumerate() {
            let found = given
                .iter()
                .find(|t| t.name == port.name)
                .or_else(|| given.get(k))
                .ok_or_else(|| format!("no data for input `{}`", port.name))?;
            inputs.push(found.values.clone());
        }
        let ours = tinyonnx_tests::run_ours(example, &inputs)?;
        if ours.len() != expected.len() {
            return Err(format!(
                "{} outputs instead of {}",
                ours.len(),
                expected.len()
            ));
        }
        for (k, port) in info.outputs.iter().enumerate() {
            let want = expected
                .iter()
                .find(|t| t.name == port.name)
                .unwrap_or(&expected[k]);
            if port.shape != want.dims.as_slice() {
                return Err(format!(
                    "output `{}` has shape {:?} instead of {:?}",
                    port.name, port.shape, want.dims
                ));
            }
            if let Some(d) = differs(&ours[k], &want.values, want.sixteen) {
                let set = set.file_name().unwrap_or_default().to_string_lossy();
                return Err(format!("{set} output `{}`: {d}", port.name));
            }
        }
    }
    Ok(())
}

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: tinyonnx-node-suite CASES_DIR");
        std::process::exit(2);
    };
    let root = PathBuf::from(root);
    // Set, every case's emitted ONNX is written there too (to run in ONNX Runtime).
    let emit_dir = std::env::var_os("TINYONNX_NODE_SUITE_EMIT").map(PathBuf::from);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (name, example) in CASES {
        let dir = root.join(name);
        if let Some(e) = &emit_dir {
            let _ = std::fs::write(e.join(format!("{name}.onnx")), example.onnx);
        }
        // A kernel that panics is a wrong answer of that case, not the end of the run.
        let result = std::panic::catch_unwind(|| run_case(example, &dir))
            .unwrap_or_else(|_| Err("panicked".to_string()));
        let line = match result {
            Ok(()) => format!("{name}\tpass"),
            Err(e) => format!("{name}\twrong\t{}", e.replace(['\t', '\n'], " ")),
        };
        // Written as each case ends, so a crash still leaves the cases before it.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
