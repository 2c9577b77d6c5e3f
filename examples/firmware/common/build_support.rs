// Shared by the board crates' build scripts (each includes this file): selects the model
// from TINYONNX_MODEL and puts the board's memory layout where the linker script finds it.

use std::path::PathBuf;

/// Writes `model.rs` (`type M = tinyonnx_examples::<TINYONNX_MODEL>;`) and copies
/// `memory_file` to `memory.x` in OUT_DIR, which goes on the linker search path. The
/// board's file has its own name on purpose: a `memory.x` in the package root would win.
fn configure(memory_file: &str) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let model = std::env::var("TINYONNX_MODEL").unwrap_or_else(|_| "LinearRegression".into());
    if model.is_empty() || !model.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        panic!("TINYONNX_MODEL must be the name of an example model, got {model:?}");
    }
    // TINYONNX_MODEL_CRATE: `tinyonnx_imported` for the imported real models (built with
    // the `imported` feature); the examples otherwise.
    let krate = std::env::var("TINYONNX_MODEL_CRATE").unwrap_or_else(|_| "tinyonnx_examples".into());
    if !["tinyonnx_examples", "tinyonnx_imported"].contains(&krate.as_str()) {
        panic!("TINYONNX_MODEL_CRATE must be tinyonnx_examples or tinyonnx_imported, got {krate:?}");
    }
    println!("cargo:rerun-if-env-changed=TINYONNX_MODEL_CRATE");
    std::fs::write(
        out.join("model.rs"),
        format!("/// The model this firmware runs.\ntype M = {krate}::{model};\n"),
    )
    .expect("cannot write model.rs");
    // TINYONNX_DATASET: a .npy of f32 inputs (relative to examples/) to classify instead of
    // running the seeded input once.
    let dataset = match std::env::var("TINYONNX_DATASET") {
        Ok(rel) if !rel.is_empty() => {
            let path = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"))
                .join("../..")
                .join(&rel);
            let path = path.canonicalize().unwrap_or_else(|e| panic!("TINYONNX_DATASET {rel}: {e}"));
            println!("cargo:rerun-if-changed={}", path.display());
            format!("Some(include_bytes!({:?}))", path.display().to_string())
        }
        _ => "None".to_string(),
    };
    std::fs::write(
        out.join("dataset.rs"),
        format!("/// Inputs to classify (a .npy of f32), when the firmware was built with a dataset.\nconst DATASET: Option<&[u8]> = {dataset};\n"),
    )
    .expect("cannot write dataset.rs");
    println!("cargo:rerun-if-env-changed=TINYONNX_DATASET");
    std::fs::copy(memory_file, out.join("memory.x")).expect("cannot copy the memory layout");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-env-changed=TINYONNX_MODEL");
    println!("cargo:rerun-if-changed={memory_file}");
}

/// For a Cortex-M board: `configure`, then the number of interrupt lines of the emulated
/// board's NVIC for `arm_vectors.rs` (`irqs.rs`), and the `device.x` that cortex-m-rt's
/// `device` feature includes (empty: every entry of the table is the default handler).
#[allow(dead_code)] // the RISC-V boards have no NVIC
fn configure_arm(memory_file: &str, irqs: usize) {
    configure(memory_file);
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(
        out.join("irqs.rs"),
        format!("/// Interrupt lines of the board's NVIC.\nconst IRQS: usize = {irqs};\n"),
    )
    .expect("cannot write irqs.rs");
    std::fs::write(out.join("device.x"), "/* every interrupt: DefaultHandler */\n")
        .expect("cannot write device.x");
}
