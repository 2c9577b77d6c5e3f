//! `cargo xtask export`: writes every example model as `.onnx` and summarizes them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

/// One row of the export summary (also the JSON schema).
#[derive(Debug, Serialize)]
pub struct Row {
    pub model: String,
    pub onnx_path: String,
    pub params: usize,
    pub nodes: usize,
    pub onnx_bytes: usize,
    pub weights_bytes: usize,
    pub macs: u64,
    pub arena_bytes: usize,
    pub arena_lower_bound_bytes: usize,
}

/// `Mlp` -> `mlp`, `LinearRegression` -> `linear_regression`.
pub fn file_stem(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Where the initializers go: inside the model, or (`--external-data`) those of at least
/// `threshold` bytes in `<model>.onnx.data` beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    Inline,
    External { threshold: usize },
}

/// Writes one model as `path` (and its external data beside it); returns the bytes of
/// the model file.
pub fn write_model(path: &Path, onnx: &[u8], weights: Weights) -> Result<usize> {
    let bytes = match weights {
        Weights::Inline => {
            if onnx.len() > tinyonnx_tests::PROTOBUF_LIMIT {
                anyhow::bail!(
                    "{} would be {} bytes, over protobuf's 2 GB limit: export with --external-data",
                    path.display(),
                    onnx.len()
                );
            }
            onnx.to_vec()
        }
        Weights::External { threshold } => {
            let file = path.file_name().context("a model path has a file name")?;
            let location = format!("{}.data", file.to_string_lossy());
            let (model, data) = tinyonnx_tests::to_external_data(onnx, &location, threshold)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let data_path = path.with_file_name(&location);
            if !data.is_empty() {
                std::fs::write(&data_path, data)
                    .with_context(|| format!("cannot write {}", data_path.display()))?;
            }
            model
        }
    };
    std::fs::write(path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(bytes.len())
}

/// Writes the files and returns the rows.
pub fn export(out: &Path, weights: Weights) -> Result<Vec<Row>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut rows = Vec::new();
    for ex in tinyonnx_examples::MODELS {
        let info = &ex.info;
        let path = out.join(format!("{}.onnx", file_stem(info.name)));
        let onnx_bytes = write_model(&path, ex.onnx, weights)?;
        rows.push(Row {
            model: info.name.to_string(),
            onnx_path: path.display().to_string(),
            params: info.params,
            nodes: info.nodes,
            onnx_bytes,
            weights_bytes: info.weights_bytes,
            macs: info.macs,
            arena_bytes: info.arena_bytes,
            arena_lower_bound_bytes: info.arena_lower_bound_bytes,
        });
    }
    Ok(rows)
}

/// Prints the summary table.
pub fn print_table(rows: &[Row]) {
    println!(
        "{:<18} {:>10} {:>6} {:>11} {:>11} {:>12} {:>12}",
        "model", "params", "nodes", "onnx bytes", "MACs", "arena bytes", "lower bound"
    );
    for r in rows {
        println!(
            "{:<18} {:>10} {:>6} {:>11} {:>11} {:>12} {:>12}",
            r.model,
            r.params,
            r.nodes,
            r.onnx_bytes,
            r.macs,
            r.arena_bytes,
            r.arena_lower_bound_bytes
        );
    }
}

/// `cargo xtask export --all-outputs`: writes `<model>.all.onnx` (every intermediate
/// also a graph output) beside each model, then runs the layer-by-layer comparison with
/// ONNX Runtime on seeded inputs and names, per model, the first tensor outside the
/// contract. Errors when one diverges.
pub fn all_outputs(root: &Path, out: &Path) -> Result<()> {
    let ort_lib = crate::setup::onnxruntime(root, &crate::setup::python(root)?)?;
    tinyonnx_tests::use_ort_library(ort_lib);
    println!(
        "\n{:<18} {:>8} {:>8} {:>12}  first tensor outside the contract",
        "model", "outputs", "traced", "max scaled"
    );
    let mut diverged = Vec::new();
    for ex in tinyonnx_examples::MODELS {
        let name = ex.info.name;
        let all = tinyonnx_tests::with_all_outputs(ex.onnx).map_err(anyhow::Error::msg)?;
        let path = out.join(format!("{}.all.onnx", file_stem(name)));
        std::fs::write(&path, &all).with_context(|| format!("cannot write {}", path.display()))?;
        if let Some(why) = tinyonnx_tests::ort_skip_reason(ex) {
            println!("{name:<18} {why}");
            continue;
        }
        let layers = tinyonnx_tests::layer_by_layer(ex, tinyonnx_tests::Provider::Cpu, 1)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let worst = layers
            .iter()
            .map(|l| l.diff.max_scaled)
            .fold(0f32, f32::max);
        let first = tinyonnx_tests::first_divergence(&layers);
        let outputs = {
            use tinyonnx_proto::Message;
            tinyonnx_proto::ModelProto::decode(&all[..])
                .ok()
                .and_then(|m| m.graph)
                .map_or(0, |g| g.output.len())
        };
        println!(
            "{name:<18} {outputs:>8} {:>8} {worst:>12.3e}  {}",
            layers.len(),
            first.map_or("-".to_string(), |l| format!(
                "{} (max abs diff {:.3e})",
                l.name, l.diff.max_abs
            ))
        );
        if let Some(l) = first {
            diverged.push(format!("{name}: {}", l.name));
        }
    }
    println!(
        "wrote the all-outputs models (<model>.all.onnx) to {}",
        out.display()
    );
    if !diverged.is_empty() {
        anyhow::bail!("tensors outside the contract: {}", diverged.join(", "));
    }
    Ok(())
}

/// `cargo xtask export [--out DIR] [--json FILE] [--all-outputs] [--external-data
/// [--threshold BYTES]]`.
pub fn run(
    root: &Path,
    out: Option<PathBuf>,
    json: Option<PathBuf>,
    all: bool,
    weights: Weights,
) -> Result<Vec<Row>> {
    let out = out.unwrap_or_else(|| root.join("target/onnx"));
    let rows = export(&out, weights)?;
    print_table(&rows);
    println!("wrote {} models to {}", rows.len(), out.display());
    if all {
        all_outputs(root, &out)?;
    }
    if let Some(json) = json {
        let text = serde_json::to_string_pretty(&rows)?;
        std::fs::write(&json, text + "\n")
            .with_context(|| format!("cannot write {}", json.display()))?;
        println!("wrote {}", json.display());
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_are_snake_case() {
        assert_eq!(file_stem("LinearRegression"), "linear_regression");
        assert_eq!(file_stem("Mlp"), "mlp");
    }
}
