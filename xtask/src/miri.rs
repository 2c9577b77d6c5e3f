//! `cargo xtask miri`: Miri, the interpreter that detects undefined behaviour, over the
//! runtime's unit tests, its soundness regression tests and `run`'s refusals, the
//! forward passes of a few small example models and the firmware harness's port views.
//! It interprets for 64-bit RISC-V, where the portable kernels run: the x86-64 paths
//! use `cpuid` and intrinsics Miri does not model in full, and on aarch64 `libm` takes
//! the square root by inline assembly, which Miri cannot run. It needs a nightly toolchain with the
//! `miri` component, which it installs through rustup once.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::setup::run;

/// The nightly Miri runs on: pinned, so a new nightly cannot break the run.
const NIGHTLY: &str = "nightly-2026-10-30";

/// The target Miri interprets.
const TARGET: &str = "riscv64gc-unknown-linux-gnu";

/// Runtime unit tests Miri runs (name filters). The others loop over thousands of
/// shapes or values and would take Miri hours; the same kernels run here through the
/// example models and the soundness tests.
const UNIT_TESTS: &[&str] = &[
    "kernels::packed::tests::wrapping",
    "kernels::packed::tests::overflowing",
    "kernels::num::tests",
    "kernels::pool::tests",
    "kernels::winograd::tests",
];

/// Installs the pinned nightly with Miri and the library sources when missing.
fn setup() -> Result<()> {
    // Fails where the toolchain is missing: then it is installed below.
    let installed = Command::new("rustup")
        .args(["component", "list", "--installed", "--toolchain", NIGHTLY])
        .output()
        .context("rustup is needed to install Miri")?;
    let list = String::from_utf8_lossy(&installed.stdout);
    let ready = installed.status.success()
        && list.lines().any(|l| l.starts_with("miri"))
        && list.lines().any(|l| l.starts_with("rust-src"));
    if !ready {
        println!("setup: rustup toolchain install {NIGHTLY} --component miri,rust-src");
        run(Command::new("rustup").args([
            "toolchain",
            "install",
            NIGHTLY,
            "--profile",
            "minimal",
            "--component",
            "miri,rust-src",
        ]))?;
    }
    Ok(())
}

/// `cargo miri test` of the crate `select` names (`-p` or `--manifest-path`), with `args`.
fn miri_test(root: &Path, select: [&str; 2], args: &[&str]) -> Result<()> {
    run(Command::new("cargo")
        .current_dir(root)
        .env_remove("RUSTC")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO")
        .args([&format!("+{NIGHTLY}"), "miri", "test"])
        .args(select)
        .args(["--target", TARGET, "--target-dir", "target/miri"])
        .args(args))
}

/// Runs everything under Miri; fails on the first undefined behaviour it finds.
pub fn run_all(root: &Path) -> Result<()> {
    setup()?;
    let runtime = ["-p", "tinyonnx"];
    // `run`'s refusals: its test of the zero `Ok` tag reads a byte of a `Result`.
    miri_test(
        root,
        runtime,
        &["--test", "soundness", "--test", "run_errors"],
    )?;
    for filter in UNIT_TESTS {
        miri_test(root, runtime, &["--lib", "--", filter])?;
    }
    miri_test(
        root,
        ["-p", "tinyonnx-examples"],
        &["--test", "arena_independence"],
    )?;
    // The firmware harness's typed port views (outside the workspace).
    miri_test(
        root,
        ["--manifest-path", "examples/firmware/common/Cargo.toml"],
        &["--lib"],
    )
}
