//! Project automation for tinyonnx. Run `cargo xtask --help`.

mod bench;
mod codegen;
mod compile_cost;
mod export;
mod firmware;
mod generated;
mod miri;
mod node_sample;
mod node_suite;
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
        /// Seconds of a core for each of the three fuzzers (they run at once).
        #[arg(long, default_value_t = 60)]
        seconds: u64,
    },
    /// Build and run the test firmware of every model that fits each board in QEMU.
    Firmware {
        /// Only this board (cortex-m4f, cortex-m3, cortex-m33, riscv32, riscv32f).
        #[arg(long)]
        board: Option<String>,
        /// Also write the report as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Only these models (by name; repeatable), without the digits accuracy check
        /// and the node-suite sample. Default: every model that fits.
        #[arg(long = "model", value_name = "NAME")]
        models: Vec<String>,
        /// Build at this release opt-level instead (s or z; 3 is the profile's own):
        /// every row is still held to its outputs and its model's stated stack, but not
        /// to the speed ceilings, which are set for 3, and the checks beyond the table
        /// are left out.
        #[arg(long = "opt-level", value_name = "LEVEL")]
        opt_level: Option<String>,
    },
    /// Build the board templates of examples/boards (fmt, clippy, release build; not
    /// flashed) and print their sizes.
    Templates,
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
    /// Eject an .onnx file as an editable model: `<out>/<stem>.rs` (an `onnx_model!` in
    /// the DSL) and `<out>/<stem>.safetensors` (its f32 weights, which the DSL loads).
    Import {
        /// The .onnx file.
        file: PathBuf,
        /// A value for a named dimension of the file's inputs, as `batch=1` (repeatable).
        #[arg(long = "dims", value_name = "NAME=N")]
        dims: Vec<String>,
        /// A whole input shape, as `x=1,3,48,192` (repeatable), for dims without names.
        #[arg(long = "shape", value_name = "INPUT=D,D,...")]
        shapes: Vec<String>,
        /// Directory for the two files.
        #[arg(long, value_name = "DIR", default_value = ".")]
        out: PathBuf,
        /// The model's Rust name.
        #[arg(long, default_value = "Model")]
        name: String,
        /// The weights path the source's `load` calls use (relative to the Cargo.toml of
        /// the crate the source goes into); the weights file's name by default.
        #[arg(long, value_name = "PATH")]
        load_path: Option<String>,
        /// `size` writes the model with `optimize = size;` (convolutions share one
        /// kernel copy sized at run time: less flash, a little slower).
        #[arg(long, default_value = "speed", value_parser = optimize_parser())]
        optimize: Optimize,
    },
    /// The ONNX backend node test suite through the importer, against the expectations
    /// in tests/node_suite.tsv.
    NodeSuite {
        /// Rewrite tests/node_suite.tsv from this run instead of comparing.
        #[arg(long)]
        bless: bool,
    },
    /// (Internal) writes the operator registry's dtype rules as JSON, and checks them
    /// against the onnx package's schemas (a step of `test`).
    #[command(hide = true)]
    CheckDtypes,
    /// Regenerate the prost code of tinyonnx-proto from proto/proto/onnx.proto.
    Codegen,
}

use tinyonnx_core::ir::Optimize;

/// `cargo xtask import --optimize`: the DSL's names of the setting, from the core's
/// `Optimize::CHOICES` (not a second spelling here).
fn optimize_parser() -> impl clap::builder::TypedValueParser<Value = Optimize> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Optimize::CHOICES.iter().map(|(name, _)| *name)).map(
        |name: String| {
            Optimize::CHOICES
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(Optimize::default(), |(_, v)| *v)
        },
    )
}

/// `cargo xtask import`: parses the options, ejects, writes the two files.
fn import_cli(
    file: PathBuf,
    dims: &[String],
    shapes: &[String],
    out: &std::path::Path,
    name: String,
    load_path: Option<String>,
    optimize: Optimize,
) -> Result<()> {
    use anyhow::{Context, bail};
    let split = |s: &str| -> Result<(String, String)> {
        let (k, v) = s
            .split_once('=')
            .with_context(|| format!("`{s}`: expected NAME=VALUE"))?;
        Ok((k.to_string(), v.to_string()))
    };
    let mut req = tinyonnx_core::driver::EjectRequest {
        file: std::fs::canonicalize(&file)
            .with_context(|| format!("cannot open {}", file.display()))?,
        name,
        optimize_size: optimize == Optimize::Size,
        ..Default::default()
    };
    for d in dims {
        let (k, v) = split(d)?;
        req.dims
            .push((k, v.parse().with_context(|| format!("`{d}`: not a dim"))?));
    }
    for s in shapes {
        let (k, v) = split(s)?;
        let dims = v
            .split(',')
            .map(|x| x.trim().parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("`{s}`: expected INPUT=D,D,..."))?;
        req.shapes.push((k, dims));
    }
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .to_string();
    let weights_file = format!("{stem}.safetensors");
    req.weights_path = load_path.unwrap_or_else(|| weights_file.clone());
    let ejected = match tinyonnx_core::driver::eject_file(&req) {
        Ok(e) => e,
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            bail!(
                "{} cannot be imported ({} errors)",
                file.display(),
                errors.len()
            );
        }
    };
    std::fs::create_dir_all(out)?;
    let rs = out.join(format!("{stem}.rs"));
    std::fs::write(&rs, &ejected.source)?;
    std::fs::write(out.join(&weights_file), &ejected.safetensors)?;
    println!(
        "wrote {} and {} ({} bytes of weights)",
        rs.display(),
        out.join(&weights_file).display(),
        ejected.safetensors.len()
    );
    Ok(())
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
        Command::Import {
            file,
            dims,
            shapes,
            out,
            name,
            load_path,
            optimize,
        } => import_cli(file, &dims, &shapes, &out, name, load_path, optimize),
        Command::Miri => miri::run_all(&root),
        Command::CheckDtypes => {
            let tools = setup::all(&root)?;
            test::check_dtypes(&root, &tools.python)
        }
        Command::NodeSuite { bless } => {
            let tools = setup::all(&root)?;
            node_suite::run(&root, &tools.python, bless)
        }
        Command::Fuzz { seconds } => test::fuzz(&root, seconds),
        Command::Bench { json, models } => bench::run(&root, json, &models),
        Command::BenchRun { out, build, models } => bench::run_pass(&root, &out, &build, &models),
        Command::Firmware {
            board,
            json,
            models,
            opt_level,
        } => firmware::run_cli(&root, board, json, &models, opt_level),
        Command::Templates => firmware::templates(&root),
    }
}
