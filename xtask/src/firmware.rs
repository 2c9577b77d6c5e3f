//! `cargo xtask firmware [--board B] [--json FILE] [--model M]... [--opt-level s|z]`:
//! builds the test firmware of every example model that fits each board (or of the
//! models named), runs it in QEMU with the instruction-count plugin, and compares its
//! outputs with the host forward pass and with ONNX Runtime.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use tinyonnx::ModelInfo;
use tinyonnx_tests::{
    Provider, Values, compare_values, run_ort_values, seeded_values, session, tolerance,
};

use crate::setup::{self, run};

/// One emulated board.
#[derive(Debug, Clone, Copy)]
pub struct Board {
    pub name: &'static str,
    dir: &'static str,
    pub(crate) target: &'static str,
    bin: &'static str,
    qemu: &'static [&'static str],
    /// The plugin's cycle model for this core (`cycles=<model>`), where one is published.
    cycles: Option<&'static str>,
    /// Bytes of flash and RAM, and what the firmware keeps for code and stack: the same
    /// numbers as the board's `src/main.rs`, whose compile-time fit check is the authority.
    flash: usize,
    ram: usize,
    code: usize,
    stack: usize,
}

/// Every board crate has a second binary, `size`, that only runs the model (no printing,
/// a panic handler that halts): its flash minus the weights is the code size of the
/// forward pass.
const BARE_BIN: &str = "size";

/// The boards of the test suite.
pub const BOARDS: &[Board] = &[
    Board {
        name: "cortex-m4f",
        dir: "examples/firmware/cortex-m4f",
        target: "thumbv7em-none-eabihf",
        bin: "tinyonnx-firmware-m4f",
        qemu: &[
            "qemu-system-arm",
            "-machine",
            "mps2-an386",
            "-cpu",
            "cortex-m4",
        ],
        cycles: Some("armv7m"),
        flash: 4 << 20,
        ram: 4 << 20,
        code: 64 << 10,
        stack: 64 << 10,
    },
    Board {
        name: "cortex-m3",
        dir: "examples/firmware/cortex-m3",
        target: "thumbv7m-none-eabi",
        bin: "tinyonnx-firmware-m3",
        qemu: &[
            "qemu-system-arm",
            "-machine",
            "lm3s6965evb",
            "-cpu",
            "cortex-m3",
        ],
        cycles: Some("armv7m"),
        flash: 256 << 10,
        ram: 64 << 10,
        code: 32 << 10,
        stack: 8 << 10,
    },
    Board {
        name: "riscv32",
        dir: "examples/firmware/riscv32",
        target: "riscv32imc-unknown-none-elf",
        bin: "tinyonnx-firmware-riscv32",
        qemu: &["qemu-system-riscv32", "-machine", "virt", "-bios", "none"],
        cycles: Some("cv32e40p"),
        flash: 4 << 20,
        ram: 400 << 10,
        code: 64 << 10,
        stack: 32 << 10,
    },
    Board {
        name: "cortex-m33",
        dir: "examples/firmware/cortex-m33",
        target: "thumbv8m.main-none-eabihf",
        bin: "tinyonnx-firmware-m33",
        qemu: &[
            "qemu-system-arm",
            "-machine",
            "mps2-an505",
            "-cpu",
            "cortex-m33",
        ],
        cycles: Some("armv7m"),
        flash: 4 << 20,
        ram: 4 << 20,
        code: 64 << 10,
        stack: 64 << 10,
    },
    Board {
        name: "riscv32f",
        dir: "examples/firmware/riscv32f",
        target: "riscv32imafc-unknown-none-elf",
        bin: "tinyonnx-firmware-riscv32f",
        qemu: &["qemu-system-riscv32", "-machine", "virt", "-bios", "none"],
        cycles: Some("cv32e40p"),
        flash: 4 << 20,
        ram: 768 << 10,
        code: 64 << 10,
        stack: 32 << 10,
    },
];

impl Board {
    /// Whether a model fits, by the rule of the firmware's compile-time check.
    pub fn fits(&self, info: &ModelInfo) -> bool {
        let io = 8 * (info.input_words() + info.output_words());
        // The firmware's runner has room for 48 inputs and 48 outputs (`MAX_PORTS`).
        info.inputs.len() <= 48
            && info.outputs.len() <= 48
            && info.flash_weight_bytes() <= self.flash - self.code
            && info.arena_bytes + io <= self.ram - self.stack
    }
}

/// One row of the firmware report (also the JSON schema).
#[derive(Debug, Serialize)]
pub struct Row {
    pub board: String,
    pub model: String,
    pub passed: bool,
    pub flash_bytes: u64,
    pub weights_bytes: usize,
    /// Flash the model's transformed weight copies take beyond `weights_bytes`, where
    /// it asked for them (`INFO.transformed_bytes`: Winograd's kernels).
    pub transformed_bytes: usize,
    /// Flash of the bare binary (no printing) minus the weights and their transformed
    /// copies: code, constants, the vector table and the padding of packed weight panels.
    pub bare_code_bytes: u64,
    pub ram_bytes: u64,
    pub arena_bytes: usize,
    pub stack_bytes: u64,
    /// The stack budget the model states (`INFO.stack_bytes`); above it the row fails.
    pub stack_budget: usize,
    pub instructions: u64,
    pub macs: u64,
    pub instructions_per_mac: f64,
    /// Estimated core cycles of the inference (the plugin's model of the core's
    /// published timings, no wait states); `None` where the board has no model.
    pub cycles: Option<u64>,
    pub max_abs_diff: f32,
    pub max_abs_diff_vs_host: f32,
}

impl Row {
    /// The row of one run: its sizes (flash, RAM), the report, and the largest scaled
    /// differences from ONNX Runtime and from the host. A run that failed is named here
    /// with what its firmware printed.
    fn new(
        board: &Board,
        info: &ModelInfo,
        passed: bool,
        run: &Run,
        (vs_ort, vs_host): (f32, f32),
    ) -> Row {
        let report = &run.report;
        if !passed {
            println!(
                "FAILED {} on {}; the firmware printed:\n{}",
                info.name, board.name, report.lines
            );
        }
        Row {
            board: board.name.to_string(),
            model: info.name.to_string(),
            passed,
            flash_bytes: run.flash,
            weights_bytes: info.weights_bytes,
            transformed_bytes: info.transformed_bytes,
            bare_code_bytes: run.bare_code,
            ram_bytes: run.ram,
            arena_bytes: info.arena_bytes,
            stack_bytes: report.stack,
            stack_budget: info.stack_bytes,
            instructions: report.instructions,
            macs: info.macs,
            instructions_per_mac: report.instructions as f64 / info.macs.max(1) as f64,
            cycles: report.cycles,
            max_abs_diff: vs_ort,
            max_abs_diff_vs_host: vs_host,
        }
    }
}

/// Installs QEMU (Debian's 7.2) and llvm's binutils when they are missing. Debian's QEMU conflicts with a newer
/// qemu-utils some images carry: that one is removed and Debian's reinstalled.
pub fn qemu() -> Result<()> {
    let have = |bin: &str| {
        Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("llvm-objdump") || !have("llvm-nm") {
        println!("setup: installing llvm (llvm-objdump, llvm-nm) from Debian");
        run(Command::new("apt-get").args(["update", "-qq"]))?;
        run(Command::new("apt-get")
            .args(["install", "-y", "-qq", "llvm"])
            .env("DEBIAN_FRONTEND", "noninteractive"))
        .context("llvm-objdump and llvm-nm are needed for the size report")?;
    }
    if have("qemu-system-arm") && have("qemu-system-riscv32") {
        return Ok(());
    }
    println!("setup: installing QEMU (qemu-system-arm, qemu-system-misc) from Debian");
    let apt = |args: &[&str]| {
        run(Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive"))
    };
    apt(&["update", "-qq"]).context("apt-get update failed (QEMU comes from Debian's packages)")?;
    apt(&[
        "install",
        "-y",
        "-qq",
        "qemu-system-arm",
        "qemu-system-misc",
        "qemu-utils-",
    ])?;
    apt(&["install", "-y", "-qq", "qemu-utils"])?;
    if !(have("qemu-system-arm") && have("qemu-system-riscv32")) {
        bail!("QEMU was installed but qemu-system-arm or qemu-system-riscv32 does not run");
    }
    Ok(())
}

/// Builds the instruction-count plugin when its source is newer than the library.
pub fn plugin(root: &Path) -> Result<PathBuf> {
    let src = root.join("xtask/qemu-plugin/icount.c");
    let lib = root.join("target/xtask/libicount.so");
    let stale = match (std::fs::metadata(&src), std::fs::metadata(&lib)) {
        (Ok(s), Ok(l)) => s.modified()? > l.modified()?,
        _ => true,
    };
    if stale {
        std::fs::create_dir_all(lib.parent().expect("has a parent"))?;
        run(Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o"])
            .arg(&lib)
            .arg(&src))
        .context("cannot build the QEMU instruction-count plugin with gcc")?;
    }
    Ok(lib)
}

/// The sections of an ELF (`llvm-objdump -h`): (flash, ram) in bytes.
fn sizes(elf: &Path) -> Result<(u64, u64)> {
    // Flash: every section the image carries (objdump's TEXT and DATA types), whatever its
    // name, so a section a linker script leaves in place (RISC-V's `.eh_frame`, riscv-rt's
    // `.init.rust`) is counted. RAM: the initialized and zeroed data, not the stack.
    let text = setup::output(Command::new("llvm-objdump").arg("-h").arg(elf))
        .context("llvm-objdump (Debian's llvm) is needed for the size report")?;
    let (mut flash, mut ram) = (0, 0);
    for line in text.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        // Idx, name, size, VMA, then the LMA where it differs (initialized data), the type.
        let [_, name, size, _, .., kind] = cols[..] else {
            continue;
        };
        let Ok(size) = u64::from_str_radix(size, 16) else {
            continue;
        };
        if kind == "TEXT" || kind == "DATA" {
            flash += size;
        }
        match name {
            ".data" | ".sdata" | ".bss" | ".sbss" | ".uninit" => ram += size,
            _ => {}
        }
    }
    Ok((flash, ram))
}

/// The address of `tinyonnx_mark` (Thumb bit cleared).
fn mark_address(elf: &Path) -> Result<u64> {
    let text = setup::output(Command::new("llvm-nm").arg(elf))?;
    let line = text
        .lines()
        .find(|l| l.ends_with(" tinyonnx_mark"))
        .context("the firmware has no tinyonnx_mark symbol")?;
    let addr = u64::from_str_radix(line.split(' ').next().unwrap_or(""), 16)?;
    Ok(addr & !1)
}

/// What one QEMU run reported.
#[derive(Debug, Default)]
struct Report {
    outputs: Vec<Values>,
    stack: u64,
    instructions: u64,
    cycles: Option<u64>,
    ok: bool,
    lines: String,
}

fn run_qemu(board: &Board, elf: &Path, plugin: &Path, info: &ModelInfo) -> Result<Report> {
    let mark = mark_address(elf)?;
    let mut cmd = Command::new("timeout");
    cmd.arg("300")
        .args(board.qemu)
        .args([
            "-nographic",
            "-semihosting-config",
            "enable=on,target=native",
            "-d",
            "plugin",
        ])
        .arg("-plugin")
        .arg(match board.cycles {
            Some(model) => format!("{},mark=0x{mark:x},cycles={model}", plugin.display()),
            None => format!("{},mark=0x{mark:x}", plugin.display()),
        })
        .arg("-kernel")
        .arg(elf);
    let out = cmd
        .output()
        .with_context(|| format!("cannot start {}", board.qemu[0]))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut r = Report {
        outputs: info
            .outputs
            .iter()
            .map(|t| Values::zeros(t.dtype, 0))
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)?,
        lines: format!("{stdout}{stderr}"),
        ..Report::default()
    };
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("out") => {
                let k: usize = words.next().unwrap_or("").parse()?;
                let out = r
                    .outputs
                    .get_mut(k)
                    .context("the firmware printed an output the model does not have")?;
                for w in words {
                    push_token(out, w).with_context(|| format!("output {k}: cannot read `{w}`"))?;
                }
            }
            Some("stack") => r.stack = words.next().unwrap_or("0").parse()?,
            Some("result") => r.ok = words.next() == Some("ok"),
            _ => {}
        }
    }
    if let Some(line) = stderr.lines().find(|l| l.starts_with("icount ")) {
        // "icount total=N marks=A,B[ cycles=C,D]": the differences of the first two.
        let between = |key: &str| {
            let list = line.split(key).nth(1)?.split(' ').next()?;
            let marks: Vec<u64> = list
                .split(',')
                .filter_map(|m| m.trim().parse().ok())
                .collect();
            marks.get(1)?.checked_sub(marks[0])
        };
        r.instructions = between("marks=").unwrap_or(0);
        r.cycles = between("cycles=");
    }
    r.ok &= out.status.success();
    Ok(r)
}

/// Appends one printed value (see the firmware's line protocol) to `out`.
fn push_token(out: &mut Values, w: &str) -> Result<()> {
    match out {
        Values::F32(v) => v.push(f32::from_bits(u32::from_str_radix(w, 16)?)),
        Values::F64(v) => v.push(f64::from_bits(u64::from_str_radix(w, 16)?)),
        Values::I64(v) => v.push(w.parse()?),
        Values::I32(v) => v.push(w.parse()?),
        Values::I8(v) => v.push(w.parse()?),
        Values::U8(v) => v.push(w.parse()?),
        Values::Bool(v) => v.push(w.parse::<u8>()? != 0),
        Values::I16(v) => v.push(w.parse()?),
        Values::U16(v) => v.push(w.parse()?),
        Values::U32(v) => v.push(w.parse()?),
        Values::U64(v) => v.push(w.parse()?),
    }
    Ok(())
}

/// The imported real models of `tests/imported` (its `src/lib.rs` is the authority; a
/// test below checks that this list matches it): the model's name, the file from the
/// workspace root and the arguments after the path.
pub const IMPORTED: &[(&str, &str, &str)] = &[
    (
        "PaddleOcrCls",
        "target/xtask/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "shapes(x = [1, 3, 48, 192])",
    ),
    (
        "PaddleOcrClsSmall",
        "target/xtask/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "shapes(x = [1, 3, 48, 192]), optimize(size)",
    ),
    (
        "SileroVadSequence",
        "target/xtask/models/silero_vad_16k_sequence.onnx",
        "dims(sequence_length = 1)",
    ),
    (
        "SileroVadOp15",
        "target/xtask/models/silero_vad_16k_op15.onnx",
        "dims(batch = 1, sequence = 576)",
    ),
    (
        "SileroVadOpenVino",
        "target/xtask/models/silero_vad_openvino_16k.onnx",
        "",
    ),
    (
        "SklearnBreastCancer",
        "target/xtask/models/sklearn_breast_cancer_mlp.onnx",
        "shapes(X = [1, 30])",
    ),
    (
        "SklearnDigits",
        "target/xtask/models/sklearn_digits_mlp.onnx",
        "shapes(X = [1, 64])",
    ),
    (
        "SklearnDigitsQdq",
        "target/xtask/models/sklearn_digits_mlp_qdq.onnx",
        "shapes(X = [1, 64])",
    ),
    (
        "SklearnDigitsQdqPerChannel",
        "target/xtask/models/sklearn_digits_mlp_qdq_pc.onnx",
        "shapes(X = [1, 64])",
    ),
    (
        "SklearnDigitsDynamic",
        "target/xtask/models/sklearn_digits_mlp_dynamic.onnx",
        "shapes(X = [1, 64])",
    ),
    (
        "MlpQdq",
        "target/xtask/models/mlp_784_256_128_10_qdq.onnx",
        "",
    ),
    ("Cnn28", "target/xtask/models/cnn_28x28.onnx", ""),
    ("CnnQdq", "target/xtask/models/cnn_28x28_qdq.onnx", ""),
    (
        "MlpQop",
        "target/xtask/models/mlp_784_256_128_10_qop.onnx",
        "",
    ),
    ("CnnQop", "target/xtask/models/cnn_28x28_qop.onnx", ""),
    ("QopBlocks", "target/xtask/models/qop_blocks.onnx", ""),
    ("QopHead", "target/xtask/models/qop_head.onnx", ""),
    ("QopWhere", "target/xtask/models/qop_where.onnx", ""),
    (
        "CnnDynamic",
        "target/xtask/models/cnn_28x28_dynamic.onnx",
        "",
    ),
    ("ControlFlow", "target/xtask/models/control_flow.onnx", ""),
    ("WhileLoops", "target/xtask/models/while_loops.onnx", ""),
];

/// What the firmware of an imported model is compared with: its `ModelInfo` (made
/// from the compiler's record, as the macro's `INFO` is) and the original file.
struct ImportedModel {
    info: ModelInfo,
    file: PathBuf,
}

/// Compiles an imported model as the macro would, for its `ModelInfo`.
fn imported_model(root: &Path, (name, file, args): (&str, &str, &str)) -> Result<ImportedModel> {
    use std::str::FromStr;
    let file = root.join(file);
    let sep = if args.is_empty() { "" } else { ", " };
    let src = format!(
        "pub model {name} = import({:?}{sep}{args});",
        file.display().to_string()
    );
    let tokens = proc_macro2::TokenStream::from_str(&src).map_err(|e| anyhow::anyhow!("{e}"))?;
    let c = tinyonnx_core::driver::compile(tokens).map_err(|f| {
        let errs: Vec<String> = f.errors.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("{name}: {}", errs.join("; "))
    })?;
    let info = tinyonnx_tests::info_of(&c);
    Ok(ImportedModel { info, file })
}

/// What every board's run reads and none writes, made once before the boards run side
/// by side: the plugin, the imported models, and the node-suite samples' sources.
struct Shared {
    /// The release profile's `opt-level` when not its own 3 (`"s"` or `"z"`).
    opt_level: Option<&'static str>,
    plugin: PathBuf,
    imported: Vec<ImportedModel>,
    /// Each stride of `node_sample::SAMPLE_BOARDS` the boards use: (stride, the sample's
    /// source, its cases in the order the firmware runs them).
    samples: Vec<(usize, PathBuf, Vec<String>)>,
}

/// Set-up (targets, QEMU, the plugin, ONNX Runtime, the imported models' files) and the
/// shared inputs of the runs on `boards` at `opt_level`; `checks` also writes the
/// node-suite samples.
fn prepare(
    root: &Path,
    boards: &[Board],
    only: &[String],
    (checks, opt_level): (bool, Option<&'static str>),
) -> Result<Shared> {
    setup::targets()?;
    qemu()?;
    let plugin = plugin(root)?;
    let python = setup::python(root)?;
    let ort_lib = setup::onnxruntime(root, &python)?;
    tinyonnx_tests::use_ort_library(ort_lib);
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    // The imported models' files: a fresh machine has none until they are fetched.
    if IMPORTED.iter().any(|(name, ..)| wanted(name)) {
        setup::real_models(root, &python)?;
    }
    let imported = IMPORTED
        .iter()
        .filter(|(name, ..)| wanted(name))
        .map(|&m| imported_model(root, m))
        .collect::<Result<_>>()?;
    let mut samples: Vec<(usize, PathBuf, Vec<String>)> = Vec::new();
    if checks {
        for every in boards
            .iter()
            .filter_map(|b| crate::node_sample::stride_of(b.name))
        {
            if !samples.iter().any(|s| s.0 == every) {
                let (file, names) = crate::node_sample::write_sample(root, every)?;
                samples.push((every, file, names));
            }
        }
    }
    Ok(Shared {
        opt_level,
        plugin,
        imported,
        samples,
    })
}

/// Runs `job` on every item (a board, a crate), as many at once as the machine has
/// cores: each item builds in its own target directory, and a build there (one crate
/// at the end, one codegen unit) or a QEMU run keeps about one core busy. The results
/// come in the items' order.
fn side_by_side<T: Sync, R: Send>(items: &[T], job: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(k) else { break };
                    let r = job(item);
                    done.lock().unwrap_or_else(|e| e.into_inner()).push((k, r));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// Builds and runs every fitting model on `board` (those of `only`, if any); returns
/// its rows, each also printed as it comes.
fn board_rows(root: &Path, shared: &Shared, board: &Board, only: &[String]) -> Result<Vec<Row>> {
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    let mut rows = Vec::new();
    let dir = root.join(board.dir);
    // Builds at another opt-level in a directory of their own, so that neither evicts
    // the other's.
    let target_dir = match shared.opt_level {
        None => root.join("target/firmware").join(board.name),
        Some(o) => root
            .join(format!("target/firmware-opt-{o}"))
            .join(board.name),
    };
    let build = (dir.as_path(), target_dir.as_path(), shared.opt_level);
    for m in &shared.imported {
        if board.fits(&m.info) {
            rows.push(run_imported(board, build, &shared.plugin, m)?);
            print_row(rows.last().expect("just pushed"));
        }
    }
    for example in tinyonnx_examples::MODELS {
        let info = &example.info;
        if !board.fits(info) || !wanted(info.name) {
            continue;
        }
        let run = build_and_run(board, build, &shared.plugin, info, false)?;
        let report = &run.report;

        // The same seeded inputs on the host: our forward pass and ONNX Runtime.
        let inputs = seeded_values(info, 1, 1.0).map_err(anyhow::Error::msg)?;
        let host = tinyonnx_tests::run_ours(example, &inputs)
            .map_err(|e| anyhow::anyhow!("host run: {e}"))?;
        // Models with custom operators: compared with the host only (ONNX Runtime has
        // no kernels for them); the max-diff column is then against the host.
        let ort = match tinyonnx_tests::ort_skip_reason(example) {
            Some(_) => host.clone(),
            None => {
                let mut sess = session(example.onnx, Provider::Cpu).map_err(anyhow::Error::msg)?;
                run_ort_values(&mut sess, info, &inputs).map_err(anyhow::Error::msg)?
            }
        };

        let mut vs_ort = 0f32;
        let mut vs_host = 0f32;
        let mut complete = report.ok;
        let mut within = true;
        for k in 0..info.outputs.len() {
            let got = &report.outputs[k];
            if got.to_f64().len() != info.outputs[k].numel() {
                complete = false;
                continue;
            }
            let (o, h) = (
                compare_values(got, &ort[k]).max_scaled,
                compare_values(got, &host[k]).max_scaled,
            );
            within &= o <= tolerance(got) && h <= tolerance(got);
            vs_ort = vs_ort.max(o);
            vs_host = vs_host.max(h);
        }
        let passed = complete && within && within_stack(report, info);
        rows.push(Row::new(board, info, passed, &run, (vs_ort, vs_host)));
        print_row(rows.last().expect("just pushed"));
    }
    Ok(rows)
}

/// The checks beyond the table that `board` has, each printing what it found: the
/// digits test split (Cortex-M4F), the node-suite sample, `forward`'s call overhead and
/// NaN and infinity (the boards with an FPU).
fn board_checks(root: &Path, shared: &Shared, b: &Board) -> Result<()> {
    if b.name == BOARDS[0].name {
        digits_check(root)?;
    }
    if let Some(every) = crate::node_sample::stride_of(b.name) {
        let (_, file, names) = shared
            .samples
            .iter()
            .find(|s| s.0 == every)
            .context("the node-suite sample was not written")?;
        let s = crate::node_sample::run_on(root, b, file, names)?;
        println!(
            "node suite sample on {}: {} cases of one in {every} passing ({} more do not fit its test buffers), {} output values, all equal to the stored outputs within the suite's tolerance",
            b.name, s.cases, s.too_large, s.values
        );
    }
    if FPU_BOARDS.contains(&b.name) {
        let n = forward_on(root, b, &shared.plugin)?;
        println!(
            "LinearRegression through forward on {}: {n} instructions (ceiling {FORWARD_CEILING}), output equal to the host's",
            b.name
        );
        let s = specials_on(root, b)?;
        println!(
            "NaN and infinity on {}: {} operator cases with NaN, +inf and -inf in their float inputs, all equal to the host ({} more do not fit its test buffers); {} equal to ONNX Runtime, the rest differ as on the host ({}) or have no ONNX Runtime kernel",
            b.name,
            s.cases,
            s.too_large,
            s.equal_to_ort,
            s.known.join(", ")
        );
    }
    Ok(())
}

/// A model's firmware, built and run: its flash and RAM, the bare binary's code beside
/// the weights, and what it printed.
struct Run {
    flash: u64,
    ram: u64,
    bare_code: u64,
    report: Report,
}

/// Where and how a model's firmware builds: the board's crate, its target directory and
/// the release profile's opt-level if not its own.
type BuildIn<'a> = (&'a Path, &'a Path, Option<&'static str>);

/// Builds the firmware of `info` (an example, or an imported model with `imported`) as
/// `build_in` says and runs it in QEMU with `plugin`.
fn build_and_run(
    board: &Board,
    build_in: BuildIn<'_>,
    plugin: &Path,
    info: &ModelInfo,
    imported: bool,
) -> Result<Run> {
    let (_, target_dir, _) = build_in;
    let elf = build(board, build_in, info.name, imported)?;
    let (flash, ram) = sizes(&elf)?;
    Ok(Run {
        flash,
        ram,
        bare_code: bare_code(board, target_dir, info)?,
        report: run_qemu(board, &elf, plugin, info)?,
    })
}

/// Builds the firmware of `model` (an example, or an imported model with `imported`);
/// returns its ELF.
fn build(
    board: &Board,
    (dir, target_dir, opt_level): BuildIn<'_>,
    model: &str,
    imported: bool,
) -> Result<PathBuf> {
    let mut cmd = setup::cargo();
    cmd.current_dir(dir)
        .env("TINYONNX_MODEL", model)
        .env("CARGO_TARGET_DIR", target_dir)
        .args(["build", "--release", "--quiet"]);
    if let Some(o) = opt_level {
        cmd.env("CARGO_PROFILE_RELEASE_OPT_LEVEL", o);
    }
    if imported {
        cmd.env("TINYONNX_MODEL_CRATE", "tinyonnx_imported")
            .args(["--features", "imported"]);
    }
    run(&mut cmd).with_context(|| format!("building {model} for {}", board.name))?;
    Ok(target_dir
        .join(board.target)
        .join("release")
        .join(board.bin))
}

/// The flash of the bare binary [`build`] built beside the model's firmware, minus the
/// model's weights and the transformed copies it asked for.
fn bare_code(board: &Board, target_dir: &Path, info: &ModelInfo) -> Result<u64> {
    let bare = target_dir.join(board.target).join("release").join(BARE_BIN);
    Ok(sizes(&bare)?
        .0
        .saturating_sub(info.flash_weight_bytes() as u64))
}

/// Whether the inference kept to the stack budget its model states, saying so if not.
fn within_stack(report: &Report, info: &ModelInfo) -> bool {
    let ok = report.stack <= info.stack_bytes as u64;
    if !ok {
        println!(
            "{}: {} bytes of stack, above the {} its INFO.stack_bytes states",
            info.name, report.stack, info.stack_bytes
        );
    }
    ok
}

/// Builds and runs the firmware of an imported model; its outputs are compared with
/// ONNX Runtime on the original file (the host forward pass is the tests' business).
fn run_imported(
    board: &Board,
    build_in: BuildIn<'_>,
    plugin: &Path,
    m: &ImportedModel,
) -> Result<Row> {
    let info = &m.info;
    let run = build_and_run(board, build_in, plugin, info, true)?;
    let report = &run.report;
    let mut inputs = seeded_values(info, 1, 1.0).map_err(anyhow::Error::msg)?;
    // The firmware's seeded `sr` is unused (the fixed dims pick 16 kHz); the original
    // file reads it.
    tinyonnx_tests::silero_sample_rate(info, &mut inputs);
    let mut sess =
        tinyonnx_tests::session_from_file(&m.file, Provider::Cpu).map_err(anyhow::Error::msg)?;
    let ort = run_ort_values(&mut sess, info, &inputs).map_err(anyhow::Error::msg)?;
    let mut vs_ort = 0f32;
    let mut passed = report.ok;
    for ((got, want), port) in report.outputs.iter().zip(&ort).zip(info.outputs) {
        if got.to_f64().len() != port.numel() {
            passed = false;
            continue;
        }
        let d = compare_values(got, want).max_scaled;
        passed &= d <= tolerance(got);
        vs_ort = vs_ort.max(d);
    }
    passed &= within_stack(report, info);
    // Not compared with the host: NaN in that column.
    Ok(Row::new(board, info, passed, &run, (vs_ort, f32::NAN)))
}

/// The board templates of `examples/boards/` (directory, target): firmware crates a user
/// copies and flashes; the tests only build them.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("stm32f4", "thumbv7em-none-eabihf"),
    ("esp32c3", "riscv32imc-unknown-none-elf"),
];

/// `cargo fmt --check`, `cargo clippy -D warnings` and a release build of each board
/// template, in its own directory (for its `.cargo/config.toml`); prints each one's flash.
pub fn templates(root: &Path) -> Result<()> {
    setup::targets()?;
    // Side by side, each in its own target directory; a failure names its template.
    let built = side_by_side(TEMPLATES, |&(name, target)| {
        let crate_ = Crate {
            dir: root.join("examples/boards").join(name),
            target_dir: root.join("target/boards").join(name),
            label: format!("board template {name}"),
        };
        crate_.fmt_and_clippy(&[])?;
        crate_.cargo(&["build", "--release", "--quiet"])?;
        let elf = crate_
            .target_dir
            .join(target)
            .join("release")
            .join(format!("tinyonnx-board-{name}"));
        let (flash, ram) = sizes(&elf)?;
        anyhow::Ok(format!(
            "board template {name} ({target}): {flash} bytes of flash, {ram} of static RAM"
        ))
    });
    for line in built {
        println!("{}", line?);
    }
    Ok(())
}

/// `cargo fmt --check` and `cargo clippy -D warnings` of every board's firmware crate
/// (outside the workspace, so not in the workspace's lint step), its binaries for the
/// default model, and of their shared library crate (`common`) on its own, for the host:
/// as a dependency of theirs clippy would not lint it. The shared files each board
/// `include!`s are linted as part of it. The feature-gated binaries need generated data
/// and are left out.
pub fn lint_boards(root: &Path) -> Result<()> {
    setup::targets()?;
    // Each crate with what clippy lints, side by side.
    let mut crates: Vec<(Crate, &str)> = BOARDS
        .iter()
        .map(|b| {
            let c = Crate {
                dir: root.join(b.dir),
                target_dir: root.join("target/firmware").join(b.name),
                label: format!("firmware crate {}", b.name),
            };
            (c, "--bins")
        })
        .collect();
    crates.push((
        Crate {
            dir: root.join("examples/firmware/common"),
            target_dir: root.join("target/firmware/common"),
            label: "firmware library crate common".to_string(),
        },
        "--lib",
    ));
    side_by_side(&crates, |(c, targets)| c.fmt_and_clippy(&[targets]))
        .into_iter()
        .collect()
}

/// A crate outside the workspace, built in its own directory (for its
/// `.cargo/config.toml`) into `target_dir`, for the default model.
struct Crate {
    dir: PathBuf,
    target_dir: PathBuf,
    label: String,
}

impl Crate {
    /// Runs `cargo args`, failing with the crate's label.
    fn cargo(&self, args: &[&str]) -> Result<()> {
        run(setup::cargo()
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .env_remove("TINYONNX_MODEL")
            .args(args))
        .with_context(|| format!("{}: cargo {}", self.label, args.join(" ")))
    }

    /// `cargo fmt --check`, then `cargo clippy --release` of `targets` with warnings
    /// denied.
    fn fmt_and_clippy(&self, targets: &[&str]) -> Result<()> {
        self.cargo(&["fmt", "--check"])?;
        let mut clippy = vec!["clippy", "--release", "--quiet"];
        clippy.extend_from_slice(targets);
        clippy.extend(["--", "-D", "warnings"]);
        self.cargo(&clippy)
    }
}

/// Builds one feature-gated binary of a board's firmware crate (release) into the
/// board's target directory; returns its ELF.
pub(crate) fn build_bin(
    root: &Path,
    board: &Board,
    feature: &str,
    bin: &str,
    envs: &[(&str, String)],
) -> Result<PathBuf> {
    let target_dir = root.join("target/firmware").join(board.name);
    let mut cmd = setup::cargo();
    cmd.current_dir(root.join(board.dir))
        .env("CARGO_TARGET_DIR", &target_dir)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
        .args([
            "build",
            "--release",
            "--quiet",
            "--features",
            feature,
            "--bin",
            bin,
        ]);
    run(&mut cmd)?;
    Ok(target_dir.join(board.target).join("release").join(bin))
}

/// The blocks a firmware printed, one per model: `model <name>` then its lines (`out <k>
/// ...`, `result ...`), until the next model or `done`.
pub(crate) fn printed_blocks(stdout: &str) -> std::collections::HashMap<&str, Vec<&str>> {
    let mut printed: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    let mut current = None;
    for line in stdout.lines() {
        if let Some(name) = line.strip_prefix("model ") {
            current = Some(name);
            printed.entry(name).or_default();
        } else if line == "done" {
            current = None;
        } else if let Some(name) = current {
            printed.entry(name).or_default().push(line);
        }
    }
    printed
}

/// The `out <k> <value>...` lines of a block appended to the outputs they name.
pub(crate) fn parse_outputs(lines: &[&str], got: &mut [Values]) -> Result<()> {
    for line in lines {
        let mut words = line.split_whitespace();
        if words.next() != Some("out") {
            continue;
        }
        let k: usize = words.next().unwrap_or("").parse()?;
        let v = got.get_mut(k).context("an output the case does not have")?;
        for w in words {
            push_token(v, w)?;
        }
    }
    Ok(())
}

/// Runs a firmware in QEMU without the instruction counter, under a timeout in seconds.
pub(crate) fn qemu_plain(board: &Board, elf: &Path, seconds: u32) -> Result<std::process::Output> {
    Command::new("timeout")
        .arg(seconds.to_string())
        .args(board.qemu)
        .args([
            "-nographic",
            "-semihosting-config",
            "enable=on,target=native",
            "-kernel",
        ])
        .arg(elf)
        .output()
        .with_context(|| format!("cannot start {}", board.qemu[0]))
}

/// The digits test split classified by the Cortex-M4F firmware of `model` (`Digits` or
/// `DigitsInt8`): its predictions, one per image.
pub fn digits_on_m4f(root: &Path, model: &str) -> Result<Vec<usize>> {
    let board = BOARDS[0];
    let dir = root.join(board.dir);
    let target_dir = root.join("target/firmware").join(board.name);
    run(setup::cargo()
        .current_dir(&dir)
        .env("TINYONNX_MODEL", model)
        .env("TINYONNX_DATASET", "data/digits/x_test.npy")
        .env("CARGO_TARGET_DIR", &target_dir)
        .args(["build", "--release", "--quiet"]))
    .context("building the digits classifier firmware")?;
    let elf = target_dir
        .join(board.target)
        .join("release")
        .join(board.bin);
    let out = qemu_plain(&board, &elf, 300)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let preds: Vec<usize> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("pred "))
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let labels = digits_file(root, "y_test.npy")?;
    if !out.status.success() || preds.len() != labels.len() {
        bail!(
            "the {model} firmware printed {} predictions for {} images:\n{stdout}",
            preds.len(),
            labels.len()
        );
    }
    Ok(preds)
}

/// The values of a .npy of the digits data (labels, predictions) as indices.
fn digits_file(root: &Path, f: &str) -> Result<Vec<usize>> {
    let bytes = std::fs::read(root.join("examples/data/digits").join(f))?;
    let l = tinyonnx_core::weights::npy(&bytes).map_err(anyhow::Error::msg)?;
    Ok(l.values.iter().map(|&v| v as usize).collect())
}

/// The digits classifiers on the Cortex-M4F: the f32 model's predictions against
/// scikit-learn's, the int8 model's against the host's int8 forward pass (which the
/// tests hold equal to ONNX Runtime's); accuracies printed, any difference an error.
fn digits_check(root: &Path) -> Result<()> {
    let labels = digits_file(root, "y_test.npy")?;
    let acc = |p: &[usize]| {
        100.0 * p.iter().zip(&labels).filter(|(a, b)| a == b).count() as f64 / labels.len() as f64
    };
    let sklearn = digits_file(root, "sklearn_pred.npy")?;
    let fw = digits_on_m4f(root, "Digits")?;
    let differ = fw.iter().zip(&sklearn).filter(|(a, b)| a != b).count();
    println!(
        "digits test split on cortex-m4f: firmware {:.2}%, scikit-learn {:.2}%, predictions differing: {differ}",
        acc(&fw),
        acc(&sklearn)
    );
    if differ != 0 {
        bail!("the firmware's digits predictions differ from scikit-learn's on {differ} images");
    }
    let bytes = std::fs::read(root.join("examples/data/digits/x_test.npy"))?;
    let x = tinyonnx_core::weights::npy(&bytes).map_err(anyhow::Error::msg)?;
    let mut arena = tinyonnx_examples::DigitsInt8::arena();
    let host: Vec<usize> = x
        .values
        .chunks_exact(64)
        .map(|image| {
            let image: &[f32; 64] = image.try_into().expect("chunks of 64");
            let p = tinyonnx_examples::DigitsInt8::forward(&mut arena, image);
            (0..p.len()).fold(0, |best, i| if p[i] > p[best] { i } else { best })
        })
        .collect();
    let fw = digits_on_m4f(root, "DigitsInt8")?;
    let differ = fw.iter().zip(&host).filter(|(a, b)| a != b).count();
    println!(
        "int8 digits (quantized at compile time) on cortex-m4f: firmware {:.2}%, host {:.2}%, predictions differing: {differ}",
        acc(&fw),
        acc(&host)
    );
    if differ != 0 {
        bail!("the int8 digits firmware's predictions differ from the host's on {differ} images");
    }
    Ok(())
}

/// What the NaN and infinity check on a board found.
pub struct Specials {
    /// Cases run (those with a float input that fit the firmware's buffers).
    pub cases: usize,
    /// Cases with a float input that do not fit the firmware's buffers.
    pub too_large: usize,
    /// Cases whose board outputs equal ONNX Runtime's (NaN equal to NaN).
    pub equal_to_ort: usize,
    /// Cases that differ from ONNX Runtime for a reason `SPECIALS_DIFFER` gives (each
    /// still equal to the host), with their operators.
    pub known: Vec<&'static str>,
}

/// The most instructions `LinearRegression::forward` may take on a board with an FPU
/// (the footprint issue's call-overhead target), above which the firmware run fails.
pub const FORWARD_CEILING: u64 = 40;

/// `LinearRegression` through `forward` on `board` (the `forward` firmware): its
/// instructions between the markers, its output checked against the host forward pass
/// on the same seeded input. An error above [`FORWARD_CEILING`].
fn forward_on(root: &Path, board: &Board, plugin: &Path) -> Result<u64> {
    let elf = build_bin(root, board, "forward", "forward", &[])
        .context("building the forward firmware")?;
    let example = tinyonnx_examples::MODELS
        .iter()
        .find(|e| e.info.name == "LinearRegression")
        .context("no LinearRegression example")?;
    let info = &example.info;
    let report = run_qemu(board, &elf, plugin, info)?;
    let inputs = seeded_values(info, 1, 1.0).map_err(anyhow::Error::msg)?;
    let host =
        tinyonnx_tests::run_ours(example, &inputs).map_err(|e| anyhow::anyhow!("host run: {e}"))?;
    let got = report.outputs.first().context("no output printed")?;
    if !report.ok
        || got.to_f64().len() != info.outputs[0].numel()
        || compare_values(got, &host[0]).max_scaled > tolerance(got)
    {
        bail!(
            "LinearRegression through forward on {} differs from the host; the firmware printed:\n{}",
            board.name,
            report.lines
        );
    }
    if report.instructions == 0 || report.instructions > FORWARD_CEILING {
        bail!(
            "LinearRegression through forward on {} took {} instructions (ceiling {FORWARD_CEILING})",
            board.name,
            report.instructions
        );
    }
    Ok(report.instructions)
}

/// The boards with an FPU, which have a `specials` and a `forward` firmware: their
/// compares, conversions and product routines meet NaN and infinity in hardware
/// (Armv7E-M's FPv4, Armv8-M's FPv5 with `VSEL`, RISC-V F with `FMADD.S`), and there
/// the call overhead is what `forward`'s count shows (without one, the software float
/// routines are).
pub const FPU_BOARDS: &[&str] = &["cortex-m4f", "cortex-m33", "riscv32f"];

/// The line a firmware prints for a case larger than its test buffers.
const TOO_LARGE: &str = "result error the model does not fit the test buffers";

/// Every operator case with a float input, run on `board` with NaN, +inf and -inf in its
/// float inputs (the `specials` firmware) and compared, NaN equal to NaN, with the host
/// forward pass and with ONNX Runtime on the same inputs. A case that differs from the
/// host, or from ONNX Runtime for an operator not listed in
/// `tinyonnx_tests::SPECIALS_DIFFER`, is an error; one larger than the firmware's
/// buffers is counted.
pub fn specials_on(root: &Path, board: &Board) -> Result<Specials> {
    let elf = build_bin(root, board, "specials", "specials", &[])
        .context("building the NaN and infinity firmware")?;
    let out = qemu_plain(board, &elf, 600)?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // Its exit status also fails for a case too large for its buffers: the cases are
    // checked one by one below, once it has run them all.
    if !stdout.lines().any(|l| l == "done") {
        bail!(
            "the NaN and infinity firmware failed on {}:\n{stdout}",
            board.name
        );
    }
    let printed = printed_blocks(&stdout);
    let provider = Provider::Cpu;
    let mut found = Specials {
        cases: 0,
        too_large: 0,
        equal_to_ort: 0,
        known: Vec::new(),
    };
    let mut failures = Vec::new();
    for (op, example) in tinyonnx_tests::cases::CASES {
        let info = &example.info;
        if !info.inputs.iter().any(|t| t.dtype.starts_with('f')) {
            continue;
        }
        let lines = printed
            .get(info.name)
            .with_context(|| format!("the board printed nothing for {}", info.name))?;
        if lines.as_slice() == [TOO_LARGE] {
            found.too_large += 1;
            continue;
        }
        found.cases += 1;
        let mut got: Vec<Values> = info
            .outputs
            .iter()
            .map(|t| Values::zeros(t.dtype, 0))
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)?;
        parse_outputs(lines, &mut got)?;
        if lines.last() != Some(&"result ok") {
            let last = lines.last().copied().unwrap_or("nothing");
            failures.push(format!("{}: the board printed `{last}`", info.name));
            continue;
        }
        let mut inputs = seeded_values(info, 1, 1.0).map_err(anyhow::Error::msg)?;
        tinyonnx_tests::with_specials(&mut inputs);
        let host = tinyonnx_tests::run_ours(example, &inputs)
            .map_err(|e| anyhow::anyhow!("{}: host run: {e}", info.name))?;
        let apart = |want: &[Values]| {
            got.iter().zip(want).any(|(g, w)| {
                g.to_f64().len() != w.to_f64().len()
                    || tinyonnx_tests::compare_values_nan(g, w).max_scaled > tolerance(g)
            })
        };
        if apart(&host) {
            failures.push(format!(
                "{} ({op}): the board differs from the host",
                info.name
            ));
            continue;
        }
        let ort = session(example.onnx, provider)
            .ok()
            .and_then(|mut sess| run_ort_values(&mut sess, info, &inputs).ok());
        match ort {
            // ONNX Runtime has no kernel for the case (the host check says which).
            None => {}
            Some(ort) if !apart(&ort) => found.equal_to_ort += 1,
            Some(_) => match tinyonnx_tests::SPECIALS_DIFFER
                .iter()
                .find(|(o, _)| o == op)
            {
                Some((o, _)) => found.known.push(o),
                None => failures.push(format!(
                    "{} ({op}): the board differs from ONNX Runtime",
                    info.name
                )),
            },
        }
    }
    if !failures.is_empty() {
        bail!(
            "NaN and infinity on {}, {} of {} cases wrong:\n{}",
            board.name,
            failures.len(),
            found.cases,
            failures.join("\n")
        );
    }
    found.known.dedup();
    Ok(found)
}

/// The table header.
pub fn print_header() {
    println!(
        "{:<11} {:<18} {:>6} {:>9} {:>9} {:>11} {:>9} {:>8} {:>9} {:>11} {:>11} {:>11} {:>10} {:>8} {:>10}",
        "board",
        "model",
        "passed",
        "flash",
        "weights",
        "transformed",
        "bare code",
        "RAM",
        "arena",
        "stack/budget",
        "instr",
        "cycles~",
        "MACs",
        "instr/MAC",
        "max diff"
    );
}

fn print_row(r: &Row) {
    println!(
        "{:<11} {:<18} {:>6} {:>9} {:>9} {:>11} {:>9} {:>8} {:>9} {:>11} {:>11} {:>11} {:>10} {:>8.2} {:>10.3e}",
        r.board,
        r.model,
        if r.passed { "yes" } else { "NO" },
        r.flash_bytes,
        r.weights_bytes,
        r.transformed_bytes,
        r.bare_code_bytes.to_string(),
        r.ram_bytes,
        r.arena_bytes,
        format!("{}/{}", r.stack_bytes, r.stack_budget),
        r.instructions,
        r.cycles.map_or("-".to_string(), |c| c.to_string()),
        r.macs,
        r.instructions_per_mac,
        r.max_abs_diff
    );
}

/// `cargo xtask firmware [--board B] [--json FILE] [--model M ...]`.
pub fn run_cli(
    root: &Path,
    board: Option<String>,
    json: Option<PathBuf>,
    only: &[String],
    opt_level: Option<String>,
) -> Result<()> {
    // Another opt-level: the table's rows only, each held to its outputs and its stated
    // stack; the speed ceilings and the checks beyond the table are `opt-level = 3`'s.
    let opt_level = match opt_level.as_deref() {
        None | Some("3") => None,
        Some("s") => Some("s"),
        Some("z") => Some("z"),
        Some(other) => bail!("unknown opt-level `{other}`: expected 3, s or z"),
    };
    let boards: Vec<Board> = match &board {
        None => BOARDS.to_vec(),
        Some(name) => {
            let b = BOARDS.iter().find(|b| b.name == name).with_context(|| {
                let names: Vec<&str> = BOARDS.iter().map(|b| b.name).collect();
                format!(
                    "unknown board `{name}`: expected one of {}",
                    names.join(", ")
                )
            })?;
            vec![*b]
        }
    };
    print_header();
    // The checks beyond the table run with the whole set of models only.
    let checks = only.is_empty() && opt_level.is_none();
    let shared = prepare(root, &boards, only, (checks, opt_level))?;
    let runs = side_by_side(&boards, |b| {
        let t = std::time::Instant::now();
        let rows = board_rows(root, &shared, b, only)?;
        let checked = if checks {
            board_checks(root, &shared, b)
        } else {
            Ok(())
        };
        println!("{}: done in {:.0} s", b.name, t.elapsed().as_secs_f32());
        anyhow::Ok((rows, checked))
    });
    let mut rows = Vec::new();
    let mut failed_checks = Vec::new();
    for (b, run) in boards.iter().zip(runs) {
        let (r, checked) = run.with_context(|| format!("firmware on {}", b.name))?;
        rows.extend(r);
        if let Err(e) = checked {
            failed_checks.push(format!("{}: {e:#}", b.name));
        }
    }
    println!();
    print_header();
    for r in &rows {
        print_row(r);
    }
    print_over_footprint(&rows);
    if let Some(json) = json {
        std::fs::write(&json, serde_json::to_string_pretty(&rows)? + "\n")
            .with_context(|| format!("cannot write {}", json.display()))?;
        println!("wrote {}", json.display());
    }
    for f in &failed_checks {
        println!("FAILED {f}");
    }
    fail_on(&rows, opt_level.is_none())?;
    if !failed_checks.is_empty() {
        bail!("firmware checks failed: {}", failed_checks.join("; "));
    }
    Ok(())
}

/// The footprint issue's bound on the code beside the weights, for the examples.
const BARE_CODE_TARGET: u64 = 8 * 1024;

/// Names the examples above [`BARE_CODE_TARGET`] (the imported real models are reported
/// in the table only): a line to read, not a failure.
fn print_over_footprint(rows: &[Row]) {
    let examples: Vec<&Row> = rows
        .iter()
        .filter(|r| !IMPORTED.iter().any(|(n, ..)| *n == r.model))
        .collect();
    let over: Vec<String> = examples
        .iter()
        .filter(|r| r.bare_code_bytes > BARE_CODE_TARGET)
        .map(|r| format!("{} on {} ({} B)", r.model, r.board, r.bare_code_bytes))
        .collect();
    let examples = examples.len();
    if over.is_empty() {
        println!("bare code: every one of the {examples} example runs within {BARE_CODE_TARGET} B");
    } else {
        println!(
            "bare code above {BARE_CODE_TARGET} B: {} of {examples} example runs: {}",
            over.len(),
            over.join(", ")
        );
    }
}

/// An error naming every row that failed, and with `ceilings` every row slower than its
/// ceiling.
fn fail_on(rows: &[Row], ceilings: bool) -> Result<()> {
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.passed)
        .map(|r| format!("{} on {}", r.model, r.board))
        .collect();
    if !failed.is_empty() {
        bail!("firmware runs failed: {}", failed.join(", "));
    }
    if !ceilings {
        return Ok(());
    }
    let slow: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let &(_, _, most) = CEILINGS
                .iter()
                .find(|(b, m, _)| *b == r.board && *m == r.model)?;
            (r.instructions_per_mac > most).then(|| {
                format!(
                    "{} on {}: {:.2} instructions per MAC, above its ceiling {most}",
                    r.model, r.board, r.instructions_per_mac
                )
            })
        })
        .collect();
    if !slow.is_empty() {
        bail!(
            "slower than the ceilings of firmware::CEILINGS: {}",
            slow.join("; ")
        );
    }
    Ok(())
}

/// Instructions per multiply-accumulate the kernels keep to on every board: deterministic
/// counts (QEMU's, the same inputs each run), each about 4 % above its measure, so a
/// change that slows a kernel on any core fails the run instead of showing only in a
/// table (as the 8-bit products once did on the Cortex-M4F, 1.47 -> 1.55 and 3.25 -> 5.49
/// unnoticed). On the M4F and M33 the f32 Mlp, Cnn, TransformerBlock, Digits and
/// DigitsConv within the 1.4 and the LSTM and GRU within the 2.0 of the footprint issue
/// (the digits models 8 and 37 instructions under it on the M4F), the int8 MLP within CMSIS-NN's
/// 1.96 and the int8 depthwise convolution within its 8.89, `LinearRegression` through
/// `Model::run` (23 instructions, called with constant views as a caller's arrays are:
/// the bound is 40); on the riscv32f `LinearRegression` (32 through
/// `Model::run`: eight loads of each operand and eight `FMADD.S`, no load-multiple on
/// RISC-V), the f32 models its `FMADD.S` routines run and the int8 ones; on the
/// soft-float cores (M3, riscv32) the models that fit.
pub const CEILINGS: &[(&str, &str, f64)] = &[
    ("cortex-m4f", "LinearRegression", 3.00),
    ("cortex-m4f", "Mlp", 1.17),
    ("cortex-m4f", "Cnn", 1.24),
    ("cortex-m4f", "DigitsConv", 1.40),
    ("cortex-m4f", "Digits", 1.40),
    ("cortex-m4f", "LstmClassifier", 2.00),
    ("cortex-m4f", "GruClassifier", 2.00),
    ("cortex-m4f", "TransformerBlock", 1.40),
    ("cortex-m4f", "MlpQdq", 1.20),
    ("cortex-m4f", "CnnQdq", 2.12),
    ("cortex-m4f", "DigitsInt8", 2.10),
    ("cortex-m4f", "DigitsConvInt8", 2.56),
    ("cortex-m4f", "DepthwiseInt8", 2.80),
    ("cortex-m4f", "PointwiseInt8", 1.58),
    ("cortex-m4f", "Conv3x3Int8", 1.34),
    ("cortex-m33", "LinearRegression", 3.00),
    ("cortex-m33", "Mlp", 1.17),
    ("cortex-m33", "Cnn", 1.24),
    ("cortex-m33", "DigitsConv", 1.40),
    ("cortex-m33", "Digits", 1.40),
    ("cortex-m33", "LstmClassifier", 2.00),
    ("cortex-m33", "GruClassifier", 1.98),
    ("cortex-m33", "TransformerBlock", 1.40),
    ("cortex-m33", "MlpQdq", 1.18),
    ("cortex-m33", "CnnQdq", 2.18),
    ("cortex-m33", "DigitsInt8", 1.92),
    ("cortex-m33", "DigitsConvInt8", 2.53),
    ("cortex-m33", "DepthwiseInt8", 2.80),
    ("cortex-m33", "PointwiseInt8", 1.58),
    ("cortex-m33", "Conv3x3Int8", 1.34),
    ("riscv32f", "LinearRegression", 4.20),
    ("riscv32f", "Mlp", 2.48),
    ("riscv32f", "Cnn", 1.98),
    ("riscv32f", "DigitsConv", 2.24),
    ("riscv32f", "Digits", 3.02),
    ("riscv32f", "LstmClassifier", 2.69),
    ("riscv32f", "GruClassifier", 2.66),
    ("riscv32f", "TransformerBlock", 2.07),
    ("riscv32f", "MlpQdq", 3.72),
    ("riscv32f", "CnnQdq", 5.57),
    ("riscv32f", "DigitsInt8", 4.75),
    ("riscv32f", "DigitsConvInt8", 5.57),
    ("riscv32f", "DepthwiseInt8", 5.00),
    ("riscv32f", "PointwiseInt8", 4.45),
    ("riscv32f", "Conv3x3Int8", 3.88),
    ("cortex-m3", "LstmClassifier", 182.0),
    ("cortex-m3", "GruClassifier", 175.0),
    ("cortex-m3", "TransformerBlock", 128.0),
    ("cortex-m3", "CnnQdq", 8.04),
    ("cortex-m3", "DigitsInt8", 17.04),
    ("cortex-m3", "DigitsConvInt8", 9.12),
    ("cortex-m3", "DepthwiseInt8", 12.25),
    ("cortex-m3", "PointwiseInt8", 6.04),
    ("cortex-m3", "Conv3x3Int8", 3.69),
    ("riscv32", "Mlp", 119.0),
    ("riscv32", "Cnn", 108.5),
    ("riscv32", "LstmClassifier", 163.5),
    ("riscv32", "GruClassifier", 158.8),
    ("riscv32", "TransformerBlock", 115.8),
    ("riscv32", "MlpQdq", 4.45),
    ("riscv32", "CnnQdq", 9.67),
    ("riscv32", "DigitsInt8", 17.39),
    ("riscv32", "DigitsConvInt8", 10.41),
    ("riscv32", "DepthwiseInt8", 15.14),
    ("riscv32", "PointwiseInt8", 7.32),
    ("riscv32", "Conv3x3Int8", 4.50),
];

#[cfg(test)]
mod tests {
    /// Every ceiling names a board and a model the run has (a misspelt one would never
    /// be checked).
    #[test]
    fn every_ceiling_names_a_board_and_a_model() {
        for (board, model, _) in super::CEILINGS {
            assert!(
                super::BOARDS.iter().any(|b| b.name == *board),
                "{board}: no such board"
            );
            let known = tinyonnx_examples::MODELS
                .iter()
                .any(|e| e.info.name == *model)
                || super::IMPORTED.iter().any(|(name, ..)| name == model);
            assert!(known, "{model}: no such model");
        }
    }

    /// `IMPORTED` names the models of `tests/imported/src/lib.rs` with their files and
    /// arguments.
    #[test]
    fn the_imported_list_matches_the_crate() {
        let src =
            std::fs::read_to_string(crate::workspace_root().join("tests/imported/src/lib.rs"))
                .unwrap();
        let squeeze = |s: &str| -> String { s.split_whitespace().collect() };
        let flat = squeeze(&src);
        for (name, file, args) in super::IMPORTED {
            let file = file.trim_start_matches("target/");
            let needle = squeeze(&format!(
                "pub model {name} = import(\"../../target/{file}\""
            ));
            assert!(
                flat.contains(&needle),
                "{name}: no `{needle}` in tests/imported"
            );
            let args = squeeze(args);
            assert!(
                flat.contains(&args),
                "{name}: no `{args}` in tests/imported"
            );
        }
        let count = flat.matches("=import(").count();
        assert_eq!(
            count,
            super::IMPORTED.len(),
            "tests/imported imports {count} models"
        );
    }

    #[test]
    fn side_by_side_runs_every_item_once_and_keeps_their_order() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<usize> = (0..9).collect();
        let calls = AtomicUsize::new(0);
        let got = super::side_by_side(&items, |&k| {
            calls.fetch_add(1, Ordering::Relaxed);
            // Later items finish first where there are several workers.
            std::thread::sleep(std::time::Duration::from_millis(20 - 2 * k as u64));
            k * 10
        });
        assert_eq!(got, (0..9).map(|k| k * 10).collect::<Vec<_>>());
        assert_eq!(calls.load(Ordering::Relaxed), 9);
        assert!(super::side_by_side(&[] as &[usize], |&k| k).is_empty());
    }
}
