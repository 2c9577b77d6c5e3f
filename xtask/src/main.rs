//! Project automation for tinyonnx. Run `cargo xtask --help`.

mod bench;
mod codegen;
mod compile_cost;
mod export;
mod firmware;
mod generated;
mod miri;
mod setup;
mod test;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "cargo xtask", about = "tinyonnx project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write every example model as .onnx and print a summary table.
    Export {
        /// Directory for the .onnx files.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Also write the summary as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also write each model with every intermediate as an output (`<model>.all.onnx`)
        /// and compare it layer by layer with ONNX Runtime, naming the first tensor that
        /// diverges.
        #[arg(long)]
        all_outputs: bool,
        /// Keep initializers of at least --threshold bytes in `<model>.onnx.data` beside
        /// each model (the ONNX external-data convention).
        #[arg(long)]
        external_data: bool,
        /// The smallest initializer moved to external data, in bytes.
        #[arg(
            long,
            value_name = "BYTES",
            default_value_t = 1024,
            requires = "external_data"
        )]
        threshold: usize,
    },
    /// Set up (targets, Python oracle, ONNX Runtime) and run every check.
    Test {
        /// Cross-check against ONNX Runtime's CUDA provider (needs an NVIDIA GPU).
        #[arg(long)]
        cuda: bool,
    },
    /// Fuzz the macro front end (parse, check, plan, emit) for a time budget.
    Fuzz {
        /// How long to fuzz.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
    },
    /// Build and run the test firmware of every model that fits each board in QEMU.
    Firmware {
        /// Only this board (cortex-m4f, cortex-m3, riscv32).
        #[arg(long)]
        board: Option<String>,
        /// Also write the report as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Host latency of our forward pass against ONNX Runtime, per example model.
    Bench {
        /// Also write the results as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Only these models (by name; repeatable). Default: every example model.
        #[arg(long = "model", value_name = "NAME")]
        models: Vec<String>,
    },
    /// (Internal) one benchmark pass in the current build; `bench` runs it twice.
    #[command(hide = true)]
    BenchRun {
        /// Where to write the rows (JSON).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The build's label (portable, native).
        #[arg(long)]
        build: String,
        #[arg(long = "model", value_name = "NAME")]
        models: Vec<String>,
    },
    /// Undefined-behaviour checks: the runtime's soundness tests, some unit tests and a
    /// few small models' forward passes under Miri (installs a pinned nightly once).
    Miri,
    /// Only the idempotent set-up step of `test`.
    Setup,
    /// Regenerate the prost code of tinyonnx-proto from proto/proto/onnx.proto.
    Codegen,
}

/// The workspace root (the parent of this crate's manifest directory).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let root = workspace_root();
    match cli.command {
        Command::Export {
            out,
            json,
            all_outputs,
            external_data,
            threshold,
        } => {
            let weights = if external_data {
                export::Weights::External { threshold }
            } else {
                export::Weights::Inline
            };
            export::run(&root, out, json, all_outputs, weights).map(drop)
        }
        Command::Test { cuda } => test::run_all(&root, cuda),
        Command::Setup => {
            let tools = setup::all(&root)?;
            println!("python: {}", tools.python.display());
            println!("ONNX Runtime: {}", tools.ort_dylib.display());
            Ok(())
        }
        Command::Codegen => codegen::run(&root),
        Command::Miri => miri::run_all(&root),
        Command::Fuzz { seconds } => test::fuzz(&root, seconds),
        Command::Bench { json, models } => bench::run(&root, json, &models),
        Command::BenchRun { out, build, models } => bench::run_pass(&root, &out, &build, &models),
        Command::Firmware { board, json } => firmware::run_cli(&root, board, json),
    }
}
