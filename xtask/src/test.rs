//! `cargo xtask test`: set-up, then every check the project has.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::setup::{self, cargo, run};

/// Whether this machine has an NVIDIA GPU the CUDA provider could use.
fn gpu_present() -> bool {
    Path::new("/dev/nvidiactl").exists()
        || Command::new("nvidia-smi")
            .arg("-L")
            .output()
            .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
}

/// Each step run so far: its name, seconds and whether it passed, for the summary at the
/// end of the run (the 90-minute budget is watched from it).
static TIMES: Mutex<Vec<(String, f32, bool)>> = Mutex::new(Vec::new());

fn step(name: &str, f: impl FnOnce() -> Result<()>) -> Result<()> {
    println!("\n=== {name}");
    let t = Instant::now();
    let r = f();
    let secs = t.elapsed().as_secs_f32();
    match &r {
        Ok(()) => println!("=== {name}: ok ({secs:.1} s)"),
        Err(e) => println!("=== {name}: FAILED ({secs:.1} s): {e:#}"),
    }
    if let Ok(mut times) = TIMES.lock() {
        times.push((name.to_string(), secs, r.is_ok()));
    }
    r.with_context(|| format!("step `{name}` failed"))
}

/// The steps' times, slowest first, and their total.
fn print_times() {
    let Ok(mut times) = TIMES.lock() else {
        return;
    };
    times.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("\n=== step times");
    for (name, secs, ok) in times.iter() {
        let state = if *ok { "ok" } else { "FAILED" };
        println!("{secs:>8.1} s  {state:<6}  {name}");
    }
    let total: f32 = times.iter().map(|t| t.1).sum();
    println!("{total:>8.1} s  total");
}

/// `cargo fmt --check` and `cargo clippy -D warnings` of a crate outside the workspace
/// that shares its target directory.
fn fmt_and_clippy(root: &Path, manifest: &Path) -> Result<()> {
    run(cargo()
        .current_dir(root)
        .arg("fmt")
        .arg("--manifest-path")
        .arg(manifest)
        .args(["--", "--check"]))?;
    run(cargo()
        .current_dir(root)
        .arg("clippy")
        .arg("--manifest-path")
        .arg(manifest)
        .args([
            "--all-targets",
            "--target-dir",
            "target",
            "--",
            "-D",
            "warnings",
        ]))
}

/// Every operator's dtype and attribute rules against the onnx package's schemas.
pub fn check_dtypes(root: &Path, python: &Path) -> Result<()> {
    let out = root.join("target/onnx");
    std::fs::create_dir_all(&out)?;
    let json = out.join("registry-dtypes.json");
    crate::codegen::write_registry_dtypes(&json)?;
    run(Command::new(python)
        .arg(root.join("xtask/py/check_dtypes.py"))
        .arg(&json))
}

/// Runs every check; `cuda` runs the ONNX Runtime cross-check on the CUDA provider. Ends
/// with the steps' times, whether the run passed or not.
pub fn run_all(root: &Path, cuda: bool) -> Result<()> {
    let r = run_steps(root, cuda);
    print_times();
    r
}

fn run_steps(root: &Path, cuda: bool) -> Result<()> {
    if cuda && !gpu_present() {
        bail!(
            "--cuda needs an NVIDIA GPU, and this machine has none (no /dev/nvidiactl, \
             `nvidia-smi -L` lists nothing); run `cargo xtask test` for the CPU provider"
        );
    }
    let mut tools = None;
    step("set-up (targets, Python oracle, ONNX Runtime)", || {
        tools = Some(setup::all(root)?);
        Ok(())
    })?;
    let tools = tools.expect("set by the set-up step");
    step("cargo fmt --check", || {
        run(cargo()
            .current_dir(root)
            .args(["fmt", "--all", "--", "--check"]))
    })?;
    step("cargo clippy", || {
        run(cargo().current_dir(root).args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))
    })?;
    step(
        "cargo test --workspace (ORT cross-check, ui tests, unit tests, 5 s fuzz)",
        || {
            run(cargo()
                .current_dir(root)
                .env("ORT_DYLIB_PATH", &tools.ort_dylib)
                .env("TINYONNX_ORT_PROVIDER", "cpu")
                .args(["test", "--workspace", "--", "--nocapture"]))
        },
    )?;
    step(
        "imported real models (tests/imported): fmt, clippy, forward passes against ONNX Runtime",
        || {
            let manifest = root.join("tests/imported/Cargo.toml");
            fmt_and_clippy(root, &manifest)?;
            run(cargo()
                .current_dir(root)
                .env("ORT_DYLIB_PATH", &tools.ort_dylib)
                .env("TINYONNX_ORT_PROVIDER", "cpu")
                .arg("test")
                .arg("--manifest-path")
                .arg(&manifest)
                .args(["--target-dir", "target", "--", "--nocapture"]))
        },
    )?;
    step(
        "ONNX backend node test suite through the importer (tests/node-suite)",
        || {
            // The suite writes the models the crate includes; fmt and clippy after.
            crate::node_suite::run(root, &tools.python, false)?;
            fmt_and_clippy(root, &root.join("tests/node-suite/Cargo.toml"))
        },
    )?;
    step(
        "fuzz the macro front end, the weight readers and the ONNX importer (a minute of a core each, at once)",
        || fuzz(root, 60),
    )?;
    step(
        "Miri: soundness tests, runtime unit tests, small models' forward passes, firmware port views",
        || crate::miri::run_all(root),
    )?;
    let out = root.join("target/onnx");
    let mut files = Vec::new();
    step(
        "export and check with onnx (checker + strict shape inference)",
        || {
            let rows = crate::export::run(
                root,
                Some(out.clone()),
                None,
                false,
                crate::export::Weights::Inline,
            )?;
            files = rows.iter().map(|r| r.onnx_path.clone()).collect();
            // The same models with their weights in external data files.
            let ext = root.join("target/onnx-external");
            let ext_rows =
                crate::export::export(&ext, crate::export::Weights::External { threshold: 1024 })?;
            files.extend(ext_rows.iter().map(|r| r.onnx_path.clone()));
            run(Command::new(&tools.python)
                .arg(root.join("xtask/py/check_onnx.py"))
                .args(&files))
        },
    )?;
    step(
        "operator dtypes against the ONNX schemas (onnx.defs)",
        || check_dtypes(root, &tools.python),
    )?;
    step(
        "the CUDA cross-check compiles (cargo check --features cuda)",
        || {
            run(cargo().current_dir(root).args([
                "check",
                "-p",
                "tinyonnx-tests",
                "--features",
                "cuda",
                "--tests",
            ]))
        },
    )?;
    if cuda {
        step("ONNX Runtime cross-check on the CUDA provider", || {
            let cuda_tools = setup::onnxruntime_cuda(root)?;
            let mut paths = cuda_tools.lib_dirs.clone();
            if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
                paths.extend(std::env::split_paths(&old));
            }
            run(cargo()
                .current_dir(root)
                .env("ORT_DYLIB_PATH", &cuda_tools.ort_dylib)
                .env("TINYONNX_ORT_PROVIDER", "cuda")
                .env("LD_LIBRARY_PATH", std::env::join_paths(paths)?)
                .args([
                    "test",
                    "-p",
                    "tinyonnx-tests",
                    "--features",
                    "cuda",
                    "--test",
                    "ort_crosscheck",
                    "--",
                    "--nocapture",
                ]))
        })?;
    }
    step(
        "firmware on Cortex-M4F, Cortex-M3, Cortex-M33, RISC-V (imc) and RISC-V (imafc) in QEMU",
        || {
            let json = root.join("target/firmware/report.json");
            crate::firmware::run_cli(root, None, Some(json), &[], None)
        },
    )?;
    // Embedded users often build for size: the stated stack must hold there too.
    step(
        "firmware on the five boards at opt-level \"s\": every model's outputs and stated stack",
        || {
            let json = root.join("target/firmware-opt-s/report.json");
            crate::firmware::run_cli(root, None, Some(json), &[], Some("s".into()))
        },
    )?;
    step("firmware crates (examples/firmware): fmt, clippy", || {
        crate::firmware::lint_boards(root)
    })?;
    step(
        "board templates (examples/boards: STM32F4, ESP32-C3) build",
        || crate::firmware::templates(root),
    )?;
    step("no_std build for thumbv7em-none-eabihf", || {
        run(cargo().current_dir(root).args([
            "build",
            "--release",
            "-p",
            "tinyonnx",
            "-p",
            "tinyonnx-examples",
            "--target",
            "thumbv7em-none-eabihf",
        ]))
    })?;
    println!("\nall checks passed");
    Ok(())
}

/// `cargo xtask fuzz --seconds N`: the core's fuzz tests with a longer budget each (the
/// macro on mutated models, the weight-file readers on mutated files, the importer on
/// mutated ONNX files), in the debug profile so that arithmetic overflow panics as it
/// would inside rustc. Each fuzzer is one thread; the three run at once, for as long as
/// gives each `seconds` of a core (on two cores, 1.5 x `seconds` of wall time).
pub fn fuzz(root: &Path, seconds: u64) -> Result<()> {
    const FUZZERS: [(&str, &str); 3] = [
        ("fuzz", "mutated_models_never_panic"),
        ("fuzz_readers", "mutated_weight_files_never_panic"),
        ("fuzz_import", "mutated_onnx_files_never_panic"),
    ];
    let exes = test_executables(root, &FUZZERS.map(|f| f.0))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let wall = (seconds * FUZZERS.len() as u64).div_ceil(cores.min(FUZZERS.len() as u64));
    println!("fuzzing {} targets at once for {wall} s", FUZZERS.len());
    let children: Vec<_> = FUZZERS
        .iter()
        .zip(&exes)
        .map(|((_, case), exe)| {
            // Run where `cargo test` runs a test, in its package's directory.
            let mut cmd = Command::new(exe);
            cmd.current_dir(root.join("core"))
                .env("TINYONNX_FUZZ_SECONDS", wall.to_string())
                .args([*case, "--nocapture"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let shown = format!("{cmd:?}");
            cmd.spawn()
                .with_context(|| format!("cannot start {shown}"))
                .map(|child| (shown, child))
        })
        .collect::<Result<_>>()?;
    let mut failed = Vec::new();
    for (shown, child) in children {
        // Each run's output whole, in turn, not interleaved.
        let out = child.wait_with_output()?;
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            failed.push(format!("{shown} failed with {}", out.status));
        }
    }
    if !failed.is_empty() {
        bail!("{}", failed.join("; "));
    }
    Ok(())
}

/// The executables of the workspace's integration tests `names`, in that order, from
/// `cargo test --workspace --no-run`: the build of the workspace test step itself, so
/// nothing is compiled again (`cargo test -p tinyonnx-core --test NAME`, or `--workspace
/// --test NAME`, resolves the dependencies' features differently and rebuilt the core
/// and its dependencies, 30 s in CI).
fn test_executables(root: &Path, names: &[&str]) -> Result<Vec<std::path::PathBuf>> {
    let shown = "cargo test --workspace --no-run --message-format=json";
    let out = setup::output(cargo().current_dir(root).args([
        "test",
        "--workspace",
        "--no-run",
        "--message-format=json",
    ]))?;
    let mut found = vec![None; names.len()];
    for line in out.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let target = &msg["target"];
        let is_test = target["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k == "test"));
        let (Some(name), Some(exe)) = (target["name"].as_str(), msg["executable"].as_str()) else {
            continue;
        };
        if let Some(k) = names.iter().position(|n| *n == name)
            && is_test
        {
            found[k] = Some(std::path::PathBuf::from(exe));
        }
    }
    names
        .iter()
        .zip(found)
        .map(|(name, exe)| exe.with_context(|| format!("{shown} built no test `{name}`")))
        .collect()
}
