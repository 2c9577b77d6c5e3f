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

/// Writes the files and returns the rows.
pub fn export(out: &Path) -> Result<Vec<Row>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut rows = Vec::new();
    for ex in tinyonnx_examples::MODELS {
        let info = &ex.info;
        let path = out.join(format!("{}.onnx", file_stem(info.name)));
        std::fs::write(&path, ex.onnx)
            .with_context(|| format!("cannot write {}", path.display()))?;
        rows.push(Row {
            model: info.name.to_string(),
            onnx_path: path.display().to_string(),
            params: info.params,
            nodes: info.nodes,
            onnx_bytes: ex.onnx.len(),
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

/// `cargo xtask export [--out DIR] [--json FILE]`.
pub fn run(root: &Path, out: Option<PathBuf>, json: Option<PathBuf>) -> Result<Vec<Row>> {
    let out = out.unwrap_or_else(|| root.join("target/onnx"));
    let rows = export(&out)?;
    print_table(&rows);
    println!("wrote {} models to {}", rows.len(), out.display());
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
