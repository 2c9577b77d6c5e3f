//! `cargo xtask bench [--json FILE]`: host latency of our forward pass against ONNX Runtime
//! (CPU, graph optimizations on, one intra-op thread) on the same ONNX bytes and inputs,
//! measured in one process and run. Batch as declared for the device (1 unless a model
//! says otherwise). Writes target/bench/bench.json and target/bench/ratios.svg.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use tinyonnx_tests::timing::{Paired, paired_median_ns};
use tinyonnx_tests::{
    Oracle, Provider, Values, as_bytes, run_ort, run_ort_only, run_ort_values_only, seeded_inputs,
    seeded_values, session_for,
};

use crate::setup;

/// One row of the benchmark (also the JSON schema).
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct Row {
    pub model: String,
    /// `portable` (no target features beyond the target's baseline) or `native`
    /// (`-C target-cpu=native`).
    pub build: String,
    pub ours_ns: f64,
    pub ort_ns: f64,
    /// The median of the per-sample ratios ours / ORT (samples alternate).
    pub ratio: f64,
    /// Our fastest sample over ORT's fastest: what the two reach when the machine is
    /// quiet (on a shared VM the medians also measure the neighbours).
    pub min_ratio: f64,
    pub macs: u64,
    pub ours_gflops: f64,
    pub ort_gflops: f64,
}

/// Bars of the ratios (ours / ORT), with the 1.0 line.
fn svg(rows: &[Row]) -> String {
    let (w, bar, gap, left) = (820.0, 22.0, 8.0, 230.0);
    let h = 60.0 + rows.len() as f64 * (bar + gap);
    let max = rows.iter().map(|r| r.ratio).fold(1.5f64, f64::max);
    let x = |v: f64| left + (w - left - 40.0) * v / max;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <text x=\"10\" y=\"20\" font-size=\"14\">tinyonnx / ONNX Runtime latency (lower is better), batch 1, one thread, release builds</text>\n"
    );
    for (i, r) in rows.iter().enumerate() {
        let y = 40.0 + i as f64 * (bar + gap);
        let color = if r.ratio <= 1.0 { "#3a7" } else { "#c54" };
        s.push_str(&format!(
            "<text x=\"10\" y=\"{:.1}\">{} ({})</text><rect x=\"{left}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar}\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\">{:.2}</text>\n",
            y + 15.0,
            r.model,
            r.build,
            x(r.ratio) - left,
            x(r.ratio) + 4.0,
            y + 15.0,
            r.ratio
        ));
    }
    s.push_str(&format!(
        "<line x1=\"{0:.1}\" y1=\"30\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n</svg>\n",
        x(1.0),
        h - 10.0
    ));
    s
}

/// The builds `cargo xtask bench` measures: a label, extra `RUSTFLAGS` and the target
/// directory (the native build gets its own so the two do not rebuild each other).
const BUILDS: [(&str, &str, &str); 2] = [
    ("portable", "", "target"),
    ("native", "-C target-cpu=native", "target/bench-native"),
];

/// `cargo xtask bench [--json FILE] [--model NAME]...`: runs one pass per build in a
/// release build of xtask, then prints and writes both.
pub fn run(root: &Path, json: Option<PathBuf>, only: &[String]) -> Result<()> {
    check_names(only)?;
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    // The macro's phases, timed in this unoptimized build: cargo compiles proc macros
    // without optimization unless a profile's build-override says otherwise. Runs first,
    // while this process has one thread (the weight loader reads CARGO_MANIFEST_DIR).
    println!(
        "== compile-time cost of onnx_model! (ms, unoptimized build as cargo runs proc macros) =="
    );
    // Safety: no other thread exists yet in this process.
    unsafe { std::env::set_var("CARGO_MANIFEST_DIR", root.join("examples")) };
    let costs = crate::compile_cost::run(root)?;
    std::fs::write(
        dir.join("compile.json"),
        serde_json::to_string_pretty(&costs)? + "\n",
    )?;
    println!("== compile time as the graph grows: chains of 3x3 convolutions (ms) ==");
    let chains = crate::compile_cost::chains()?;
    std::fs::write(
        dir.join("compile-chains.json"),
        serde_json::to_string_pretty(&chains)? + "\n",
    )?;
    // Set-up (ONNX Runtime download) once, before the children need it.
    setup::onnxruntime(root, &setup::python(root)?)?;
    let mut rows: Vec<Row> = Vec::new();
    for (build, flags, target_dir) in BUILDS {
        let out = dir.join(format!("{build}.json"));
        println!("== {build} build (RUSTFLAGS=\"{flags}\", release) ==");
        let mut cmd = std::process::Command::new(env!("CARGO"));
        cmd.current_dir(root)
            .args([
                "run",
                "--release",
                "--quiet",
                "--package",
                "xtask",
                "--",
                "bench-run",
            ])
            .arg("--out")
            .arg(&out)
            .args(["--build", build])
            .env("CARGO_TARGET_DIR", root.join(target_dir))
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        for m in only {
            cmd.args(["--model", m]);
        }
        if flags.is_empty() {
            cmd.env_remove("RUSTFLAGS");
        } else {
            cmd.env("RUSTFLAGS", flags);
        }
        let status = cmd
            .status()
            .context("cannot run cargo for the benchmark build")?;
        anyhow::ensure!(
            status.success(),
            "the {build} benchmark pass failed ({status})"
        );
        let text = std::fs::read_to_string(&out)
            .with_context(|| format!("cannot read {}", out.display()))?;
        rows.extend(serde_json::from_str::<Vec<Row>>(&text)?);
    }
    if only.is_empty() {
        quantized(root, &dir.join("quantized.json"))?;
    }
    let text = serde_json::to_string_pretty(&rows)? + "\n";
    std::fs::write(dir.join("bench.json"), &text)?;
    std::fs::write(dir.join("ratios.svg"), svg(&rows))?;
    println!(
        "wrote {} and {}",
        dir.join("bench.json").display(),
        dir.join("ratios.svg").display()
    );
    if let Some(json) = json {
        std::fs::write(&json, text).with_context(|| format!("cannot write {}", json.display()))?;
        println!("wrote {}", json.display());
    }
    Ok(())
}

/// The quantized models of `tests/imported` against ONNX Runtime on their original
/// files (portable release build; the 8-bit products pick AVX-512 VNNI at run time
/// where the CPU has it), written to `out`.
fn quantized(root: &Path, out: &Path) -> Result<()> {
    println!(
        "== quantized models (tests/imported, release) against ONNX Runtime on their files =="
    );
    let python = setup::python(root)?;
    setup::real_models(root, &python)?;
    let ort = setup::onnxruntime(root, &python)?;
    let status = std::process::Command::new(env!("CARGO"))
        .current_dir(root.join("tests/imported"))
        .args([
            "run",
            "--release",
            "--quiet",
            "--example",
            "bench_quantized",
            "--",
        ])
        .arg(out)
        .env("ORT_DYLIB_PATH", ort)
        .env("TINYONNX_ORT_PROVIDER", "cpu")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .context("cannot run cargo for the quantized benchmark")?;
    anyhow::ensure!(
        status.success(),
        "the quantized benchmark failed ({status})"
    );
    Ok(())
}

fn check_names(only: &[String]) -> Result<()> {
    let known: Vec<&str> = tinyonnx_examples::MODELS
        .iter()
        .map(|e| e.info.name)
        .collect();
    if let Some(bad) = only.iter().find(|m| !known.contains(&m.as_str())) {
        anyhow::bail!(
            "no example model `{bad}`; the models are {}",
            known.join(", ")
        );
    }
    Ok(())
}

/// One pass over the models in the current build; writes the rows to `out`.
pub fn run_pass(root: &Path, out: &Path, build: &str, only: &[String]) -> Result<()> {
    check_names(only)?;
    if cfg!(debug_assertions) {
        eprintln!("warning: benchmarking a debug build; `cargo xtask bench` uses release");
    }
    let ort_lib = setup::onnxruntime(root, &setup::python(root)?)?;
    tinyonnx_tests::use_ort_library(ort_lib);
    println!(
        "{:<18} {:>12} {:>12} {:>8} {:>9} {:>13} {:>9} {:>9}",
        "model", "ours us", "ORT us", "ratio", "min ratio", "MACs", "ours GF/s", "ORT GF/s"
    );
    let mut rows = Vec::new();
    for ex in tinyonnx_examples::MODELS {
        let info = &ex.info;
        if !only.is_empty() && !only.iter().any(|m| m == info.name) {
            continue;
        }
        if let Some(why) = tinyonnx_tests::ort_skip_reason(ex) {
            println!("{:<18} {why}", info.name);
            continue;
        }
        let mut arena = vec![0u128; info.arena_bytes.div_ceil(16)];
        let mut sess =
            session_for(ex.onnx, Provider::Cpu, Oracle::Timing).map_err(anyhow::Error::msg)?;
        let timing = if ex.is_f32() {
            let inputs = seeded_inputs(info, 1, 1.0);
            let refs: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
            let mut outs: Vec<Vec<f32>> =
                info.outputs.iter().map(|t| vec![0.0; t.numel()]).collect();
            run_ort(&mut sess, info, &inputs).map_err(anyhow::Error::msg)?;
            paired_median_ns(
                || {
                    let mut o: Vec<&mut [f32]> = outs.iter_mut().map(Vec::as_mut_slice).collect();
                    (ex.run)(as_bytes(&mut arena), black_box(&refs), &mut o)
                        .expect("the example runs");
                },
                || {
                    run_ort_only(&mut sess, info, black_box(&inputs))
                        .expect("ONNX Runtime runs the model");
                },
            )
        } else {
            // Other dtypes (the int8 models): typed views both sides, same inputs.
            let inputs = seeded_values(info, 1, 1.0).map_err(anyhow::Error::msg)?;
            let refs: Vec<_> = inputs.iter().map(Values::as_ref).collect();
            let mut outs: Vec<Values> = info
                .outputs
                .iter()
                .map(|t| Values::zeros(t.dtype, t.numel()))
                .collect::<Result<_, _>>()
                .map_err(anyhow::Error::msg)?;
            run_ort_values_only(&mut sess, info, &inputs).map_err(anyhow::Error::msg)?;
            paired_median_ns(
                || {
                    let mut o: Vec<_> = outs.iter_mut().map(Values::as_mut).collect();
                    (ex.run_typed)(as_bytes(&mut arena), black_box(&refs), &mut o)
                        .expect("the example runs");
                },
                || {
                    run_ort_values_only(&mut sess, info, black_box(&inputs))
                        .expect("ONNX Runtime runs the model");
                },
            )
        };
        let gflops = |ns: f64| 2.0 * info.macs as f64 / ns;
        let row = Row {
            model: info.name.to_string(),
            build: build.to_string(),
            ours_ns: timing.a_median,
            ort_ns: timing.b_median,
            ratio: timing.ratio,
            min_ratio: timing.min_ratio,
            macs: info.macs,
            ours_gflops: gflops(timing.a_median),
            ort_gflops: gflops(timing.b_median),
        };
        println!(
            "{:<18} {:>12.2} {:>12.2} {:>8.2} {:>9.2} {:>13} {:>9.2} {:>9.2}",
            row.model,
            row.ours_ns / 1e3,
            row.ort_ns / 1e3,
            row.ratio,
            row.min_ratio,
            row.macs,
            row.ours_gflops,
            row.ort_gflops
        );
        rows.push(row);
    }
    let text = serde_json::to_string_pretty(&rows)? + "\n";
    std::fs::write(out, text).with_context(|| format!("cannot write {}", out.display()))?;
    let nan = nan_cost(build);
    let path = out.with_file_name(format!("nan-{build}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&nan)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// What keeping NaN costs one primitive: ours against the same loop with a comparison
/// that drops NaN (what the kernels did before they followed ONNX Runtime).
#[derive(Debug, Serialize)]
pub struct NanCost {
    pub primitive: String,
    pub build: String,
    pub ours_ns: f64,
    pub dropping_ns: f64,
    /// The median of the per-sample ratios ours / dropping.
    pub ratio: f64,
}

/// The NaN-keeping primitives of the hot kernels, timed in the loops they run in: Relu
/// (the unary kernel and every fused Conv/Gemm/MatMul epilogue) over 64 Ki values, and
/// MaxPool's window max (2x2, stride 2, over a 256 x 256 plane), each against the same
/// loop with a NaN-dropping comparison, on seeded inputs without NaN; and Relu against
/// itself, which shows how far apart two equal loops measure on this machine.
fn nan_cost(build: &str) -> Vec<NanCost> {
    use tinyonnx::kernels::math::{max_nan, relu};
    const N: usize = 1 << 16;
    const S: usize = 256;
    let mut x = vec![0f32; N];
    tinyonnx::testing::fill_uniform(7, &mut x, 1.0);
    let mut y = vec![0f32; N];
    let mut p = vec![0f32; N / 4];
    fn pool(p: &mut [f32], x: &[f32], max: impl Fn(f32, f32) -> f32) {
        for (i, row) in p.chunks_exact_mut(S / 2).enumerate() {
            let (a, b) = (&x[2 * i * S..][..S], &x[(2 * i + 1) * S..][..S]);
            for (j, o) in row.iter_mut().enumerate() {
                *o = max(max(a[2 * j], a[2 * j + 1]), max(b[2 * j], b[2 * j + 1]));
            }
        }
    }
    let relu_drop = |v: f32| if v > 0.0 { v } else { 0.0 };
    let max_drop = |m: f32, v: f32| if v > m { v } else { m };
    let mut rows = Vec::new();
    let mut time = |name: &str, t: Paired| {
        println!(
            "NaN cost, {name:<34} ours {:>9.2} us, NaN-dropping {:>9.2} us, ratio {:.3}",
            t.a_median / 1e3,
            t.b_median / 1e3,
            t.ratio
        );
        rows.push(NanCost {
            primitive: name.to_string(),
            build: build.to_string(),
            ours_ns: t.a_median,
            dropping_ns: t.b_median,
            ratio: t.ratio,
        });
    };
    fn unary(y: &mut [f32], x: &[f32], f: impl Fn(f32) -> f32) {
        for (o, &v) in y.iter_mut().zip(black_box(x)) {
            *o = f(v);
        }
        black_box(y);
    }
    let mut y2 = vec![0f32; N];
    time(
        "Relu (64 Ki values)",
        paired_median_ns(|| unary(&mut y, &x, relu), || unary(&mut y2, &x, relu_drop)),
    );
    // The same loop against itself: how far apart two equal loops measure here.
    time(
        "control: Relu against itself",
        paired_median_ns(|| unary(&mut y, &x, relu), || unary(&mut y2, &x, relu)),
    );
    let mut p2 = vec![0f32; N / 4];
    time(
        "MaxPool 2x2 max (256 x 256 plane)",
        paired_median_ns(
            || {
                pool(&mut p, black_box(&x), max_nan);
                black_box(&p);
            },
            || {
                pool(&mut p2, black_box(&x), max_drop);
                black_box(&p2);
            },
        ),
    );
    rows
}
