//! `cargo xtask codegen`: regenerates the prost code of `tinyonnx-proto`, and from the
//! operator registry `SUPPORTED_OPS.md` and the cross-check cases `tests/src/cases.rs` and `tests/src/case_models.rs`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The checked-in generated file.
pub fn checked_in_path(root: &Path) -> PathBuf {
    root.join("proto/src/onnx.rs")
}

/// Generates the Rust code for `proto/proto/onnx.proto` into `out_dir` and returns the file.
pub fn generate_into(root: &Path, out_dir: &Path) -> Result<PathBuf> {
    let protoc = protoc_bin_vendored::protoc_bin_path()
        .context("the vendored protoc binary is not available for this platform")?;
    let proto_dir = root.join("proto/proto");
    prost_build::Config::new()
        .protoc_executable(protoc)
        .out_dir(out_dir)
        .compile_protos(&[proto_dir.join("onnx.proto")], &[proto_dir])
        .context("protoc failed on proto/proto/onnx.proto")?;
    Ok(out_dir.join("onnx.rs"))
}

/// Regenerates `proto/src/onnx.rs` in place.
pub fn run(root: &Path) -> Result<()> {
    let tmp = root.join("target/xtask/codegen");
    std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let generated = generate_into(root, &tmp)?;
    let dest = checked_in_path(root);
    std::fs::copy(&generated, &dest).with_context(|| format!("cannot write {}", dest.display()))?;
    println!("wrote {}", dest.display());
    let ops = root.join("SUPPORTED_OPS.md");
    std::fs::write(&ops, crate::generated::supported_ops_markdown())
        .with_context(|| format!("cannot write {}", ops.display()))?;
    println!("wrote {}", ops.display());
    let cases = root.join("tests/src/cases.rs");
    std::fs::write(&cases, crate::generated::cases_rs())
        .with_context(|| format!("cannot write {}", cases.display()))?;
    println!("wrote {}", cases.display());
    let models = root.join("tests/src/case_models.rs");
    std::fs::write(&models, crate::generated::case_models_rs())
        .with_context(|| format!("cannot write {}", models.display()))?;
    println!("wrote {}", models.display());
    Ok(())
}

/// Writes the operator registry's dtype and attribute rules as JSON for
/// `xtask/py/check_dtypes.py`: per operator its name, lowest opset, dtypes of its `T`
/// inputs, the dtypes a later opset added, the index of its first `T` input (none for `Constant`), and each
/// attribute with the opsets that have it.
pub fn write_registry_dtypes(path: &Path) -> Result<()> {
    use tinyonnx_core::ops::{InTy, REGISTRY};
    let ops: Vec<serde_json::Value> = REGISTRY
        .iter()
        .map(|op| {
            let t_input = op.inputs.iter().position(|i| i.ty == InTy::T);
            let since: serde_json::Map<String, serde_json::Value> = op
                .dtype_since
                .iter()
                .map(|(d, v)| (d.name().to_string(), (*v).into()))
                .collect();
            let attrs: Vec<serde_json::Value> = op
                .attrs
                .iter()
                .map(|a| serde_json::json!({"name": a.name, "since": a.since, "until": a.until}))
                .collect();
            serde_json::json!({
                "op": op.op_type,
                "since": op.since_opset,
                "dtypes": op.dtypes.iter().map(|d| d.name()).collect::<Vec<_>>(),
                "dtype_since": since,
                "t_input": t_input,
                "attrs": attrs,
            })
        })
        .collect();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&ops)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_in_proto_code_is_fresh() {
        let root = crate::workspace_root();
        let tmp = root.join("target/xtask/codegen-check");
        std::fs::create_dir_all(&tmp).unwrap();
        let fresh = std::fs::read_to_string(generate_into(&root, &tmp).unwrap()).unwrap();
        let checked_in = std::fs::read_to_string(checked_in_path(&root)).unwrap();
        assert!(
            fresh == checked_in,
            "proto/src/onnx.rs is stale: run `cargo xtask codegen` and commit the result"
        );
    }
}
