//! The compile-time cost of the macro: every `onnx_model!` in the example sources run
//! through the compiler in this process, each phase timed (the median of several runs).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

/// Milliseconds per phase for one model.
#[derive(Debug, Serialize)]
pub struct Cost {
    pub model: String,
    pub nodes: usize,
    pub params: usize,
    pub parse_ms: f64,
    pub check_ms: f64,
    pub plan_ms: f64,
    pub emit_onnx_ms: f64,
    pub emit_rust_ms: f64,
    pub total_ms: f64,
}

/// Runs of each model; the median is reported.
const RUNS: usize = 5;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The token streams of every `onnx_model! { ... }` item in `file`.
fn invocations(file: &Path) -> Result<Vec<proc_macro2::TokenStream>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let ast = syn::parse_file(&text).with_context(|| format!("cannot parse {}", file.display()))?;
    Ok(ast
        .items
        .into_iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("onnx_model") => Some(m.mac.tokens),
            _ => None,
        })
        .collect())
}

/// Times every example model; prints a table with the largest model (most parameters)
/// first and returns the rows.
pub fn run(root: &Path) -> Result<Vec<Cost>> {
    let dir = root.join("examples/src");
    let mut files: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    let mut costs = Vec::new();
    for file in files {
        for tokens in invocations(&file)? {
            // A composition (`model C = compose(A, B, ...)`) needs its parts' source
            // macros; its cost is theirs plus a merge.
            if tinyonnx_core::syntax::parse_compose(tokens.clone()).is_some() {
                continue;
            }
            let mut runs = Vec::new();
            for _ in 0..RUNS {
                let (compiled, t) = tinyonnx_core::compile_timed(tokens.clone()).map_err(|f| {
                    anyhow::anyhow!(
                        "{}: the model does not compile: {}",
                        file.display(),
                        f.errors.first().map(|e| e.to_string()).unwrap_or_default()
                    )
                })?;
                let start = Instant::now();
                let code = compiled.emit();
                let emit = start.elapsed();
                std::hint::black_box(code);
                runs.push((
                    compiled.planned.graph.name.clone(),
                    compiled.planned.graph.nodes.len(),
                    compiled.planned.graph.params(),
                    t,
                    emit,
                ));
            }
            let total = |r: &(String, usize, usize, tinyonnx_core::Timings, Duration)| {
                r.3.parse + r.3.check + r.3.plan + r.3.emit_onnx + r.4
            };
            runs.sort_by_key(total);
            let (name, nodes, params, t, emit) = &runs[RUNS / 2];
            costs.push(Cost {
                model: name.clone(),
                nodes: *nodes,
                params: *params,
                parse_ms: ms(t.parse),
                check_ms: ms(t.check),
                plan_ms: ms(t.plan),
                emit_onnx_ms: ms(t.emit_onnx),
                emit_rust_ms: ms(*emit),
                total_ms: ms(t.parse + t.check + t.plan + t.emit_onnx + *emit),
            });
        }
    }
    costs.sort_by_key(|c| std::cmp::Reverse(c.params));
    println!(
        "{:<18} {:>6} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "model", "nodes", "params", "parse", "check", "plan", "ONNX", "Rust", "total ms"
    );
    for c in &costs {
        println!(
            "{:<18} {:>6} {:>9} {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>9.2} {:>9.2}",
            c.model,
            c.nodes,
            c.params,
            c.parse_ms,
            c.check_ms,
            c.plan_ms,
            c.emit_onnx_ms,
            c.emit_rust_ms,
            c.total_ms
        );
    }
    Ok(costs)
}

/// Compile time of one synthetic chain of convolutions.
#[derive(Debug, Serialize)]
pub struct ChainCost {
    /// `narrow`: 16 channels over 8x8 throughout, where no Winograd scratch fits the
    /// arena; `wide`: behind a 64-channel 64x64 tensor that sets the arena, where every
    /// one fits.
    pub chain: &'static str,
    pub convolutions: usize,
    pub check_ms: f64,
    pub plan_ms: f64,
    pub total_ms: f64,
}

/// A model of `n` chained 16-channel 3x3 convolutions (one shared weight); `wide` puts
/// a large tensor in front that leaves room for every Winograd scratch.
fn conv_chain(n: usize, wide: bool) -> Result<proc_macro2::TokenStream> {
    use std::fmt::Write;
    let mut s = String::from("model Chain { weight w: f32[16, 16, 3, 3] = he_normal(seed = 1);\n");
    if wide {
        s += "input x: f32[1, 16, 64, 64];\n\
              weight w1: f32[64, 16, 1, 1] = he_normal(seed = 2);\n\
              weight w2: f32[16, 64, 1, 1] = he_normal(seed = 3);\n\
              let pooled = MaxPool(Conv(x, w1), kernel_shape = [4, 4], strides = [4, 4]);\n\
              let h0 = Conv(Conv(pooled, w2), w, pads = [1, 1, 1, 1]);\n";
    } else {
        s += "input x: f32[1, 16, 8, 8];\nlet h0 = Conv(x, w, pads = [1, 1, 1, 1]);\n";
    }
    for i in 1..n {
        writeln!(s, "let h{i} = Conv(h{}, w, pads = [1, 1, 1, 1]);", i - 1)?;
    }
    writeln!(s, "output y = Relu(h{}); }}", n - 1)?;
    s.parse()
        .map_err(|e| anyhow::anyhow!("the chain does not tokenize: {e}"))
}

/// Times chains of 500, 1,000 and 2,000 convolutions (the median of three runs each):
/// how the compiler's time grows with the graph. Prints a table and returns the rows.
pub fn chains() -> Result<Vec<ChainCost>> {
    let mut rows = Vec::new();
    println!(
        "{:<8} {:>6} {:>9} {:>9} {:>9} {:>11}",
        "chain", "convs", "check", "plan", "total ms", "x previous"
    );
    for (chain, wide) in [("narrow", false), ("wide", true)] {
        let mut previous: Option<f64> = None;
        for n in [500, 1000, 2000] {
            let tokens = conv_chain(n, wide)?;
            let mut runs = Vec::new();
            for _ in 0..3 {
                let start = Instant::now();
                let (compiled, t) = tinyonnx_core::compile_timed(tokens.clone()).map_err(|f| {
                    anyhow::anyhow!(
                        "the {chain} chain does not compile: {}",
                        f.errors.first().map(|e| e.to_string()).unwrap_or_default()
                    )
                })?;
                std::hint::black_box(compiled.emit());
                runs.push((t, start.elapsed()));
            }
            runs.sort_by_key(|r| r.1);
            let (t, total) = runs[1];
            let row = ChainCost {
                chain,
                convolutions: n,
                check_ms: ms(t.check),
                plan_ms: ms(t.plan),
                total_ms: ms(total),
            };
            let growth = previous.map_or(String::new(), |p| format!("{:.2}", row.total_ms / p));
            println!(
                "{:<8} {:>6} {:>9.1} {:>9.1} {:>9.1} {:>11}",
                chain, n, row.check_ms, row.plan_ms, row.total_ms, growth
            );
            previous = Some(row.total_ms);
            rows.push(row);
        }
    }
    Ok(rows)
}
