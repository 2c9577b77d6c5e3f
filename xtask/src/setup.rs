//! Idempotent set-up of what the tests need on a fresh machine: rustup targets, a
//! project-local Python venv with the ONNX oracle, and the ONNX Runtime library from
//! the PyPI wheel.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Embedded targets the facade and the examples must build for.
pub const TARGETS: &[&str] = &[
    "thumbv7em-none-eabihf",
    "thumbv7m-none-eabi",
    "riscv32imc-unknown-none-elf",
    "thumbv8m.main-none-eabihf",
    "riscv32imafc-unknown-none-elf",
];
/// The ONNX Runtime release the cross-checks use (the `ort` crate's API level).
pub const ORT_VERSION: &str = "1.31.1";
/// The onnx package used as the checker oracle.
pub const ONNX_VERSION: &str = "1.23.2";
/// onnx's narrow types come from ml_dtypes, which onnx does not pin: its 0.7.0 casts an
/// out-of-range float to 0 in int4, uint4, int2 and uint2 where 0.6.0 wraps as ONNX's
/// Cast does, and the node cases' expected outputs of 24 such casts changed with it.
pub const ML_DTYPES_VERSION: &str = "0.6.0";

/// Paths of the installed tools.
#[derive(Debug, Clone)]
pub struct Tools {
    pub python: PathBuf,
    pub ort_dylib: PathBuf,
}

/// Runs a command, failing with its name and status.
pub fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// Runs `cmd` and returns its standard output; an error with its standard error if it
/// fails.
pub fn output(cmd: &mut Command) -> Result<String> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .with_context(|| format!("cannot start {shown}"))?;
    if !out.status.success() {
        bail!(
            "{shown} failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The cargo that runs the xtask (`CARGO`), or the one on the path.
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Adds the missing rustup targets.
pub fn targets() -> Result<()> {
    let installed = output(Command::new("rustup").args(["target", "list", "--installed"]))
        .context("rustup is needed to add the embedded targets")?;
    let missing: Vec<&str> = TARGETS
        .iter()
        .copied()
        .filter(|t| !installed.lines().any(|l| l.trim() == *t))
        .collect();
    if !missing.is_empty() {
        println!("setup: rustup target add {}", missing.join(" "));
        run(Command::new("rustup")
            .args(["target", "add"])
            .args(&missing))?;
    }
    Ok(())
}

/// Creates the venv and installs the oracle packages when they are missing.
pub fn python(root: &Path) -> Result<PathBuf> {
    let venv = root.join("target/xtask/venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        println!("setup: creating {}", venv.display());
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))
            .context("python3 with the venv module is needed for the ONNX checker")?;
    }
    let probe = format!(
        "import onnx, numpy, ml_dtypes, sys; sys.exit(0 if onnx.__version__ == '{ONNX_VERSION}' \
         and ml_dtypes.__version__ == '{ML_DTYPES_VERSION}' else 1)"
    );
    let ready = Command::new(&python)
        .args(["-c", &probe])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ready {
        println!("setup: pip install onnx=={ONNX_VERSION} ml_dtypes=={ML_DTYPES_VERSION} numpy");
        run(Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            &format!("onnx=={ONNX_VERSION}"),
            &format!("ml_dtypes=={ML_DTYPES_VERSION}"),
            "numpy",
        ]))?;
    }
    Ok(python)
}

/// Downloads the ONNX Runtime wheel and extracts its shared library, once.
pub fn onnxruntime(root: &Path, python: &Path) -> Result<PathBuf> {
    let dir = root.join("target/xtask/onnxruntime");
    let lib = dir.join(format!("libonnxruntime.so.{ORT_VERSION}"));
    if lib.exists() {
        return Ok(lib);
    }
    std::fs::create_dir_all(&dir)?;
    let wheels = root.join("target/xtask/wheels");
    println!("setup: downloading the onnxruntime=={ORT_VERSION} wheel from PyPI");
    pip_download(python, &format!("onnxruntime=={ORT_VERSION}"), &wheels)?;
    let script = format!(
        r#"
import glob, sys, zipfile
wheels = glob.glob(sys.argv[1] + "/onnxruntime-{ORT_VERSION}-*.whl")
if not wheels:
    sys.exit("no onnxruntime wheel was downloaded")
with zipfile.ZipFile(wheels[0]) as z:
    name = "onnxruntime/capi/libonnxruntime.so.{ORT_VERSION}"
    with z.open(name) as src, open(sys.argv[2], "wb") as dst:
        dst.write(src.read())
"#
    );
    let partial = dir.join("libonnxruntime.so.partial");
    run(Command::new(python)
        .args(["-c", &script])
        .arg(&wheels)
        .arg(&partial))
    .context("cannot extract libonnxruntime from the wheel")?;
    std::fs::rename(&partial, &lib)?;
    Ok(lib)
}

/// Downloads the wheel `spec` (no dependencies, binary only) into `dir`.
fn pip_download(python: &Path, spec: &str, dir: &Path) -> Result<()> {
    run(Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            spec,
            "-d",
        ])
        .arg(dir))
}

/// Bytes a full `cargo xtask test` from nothing writes under `target/` (about 20 GB:
/// the workspace's debug and release builds, Miri's, one firmware target directory per
/// board, the board templates).
const FULL_RUN_BYTES: u64 = 22 << 30;

/// Warns when the disk holding `target/` has less room than a full run needs, so that
/// a build failing later for want of space has its cause on the first page.
fn check_disk(root: &Path) {
    let target = root.join("target");
    let dir = if target.exists() {
        target
    } else {
        root.to_path_buf()
    };
    let Ok(out) = output(Command::new("df").args(["-Pk"]).arg(&dir)) else {
        return;
    };
    // `df -P`: a header, then "filesystem blocks used available capacity mount".
    let free_kb = out
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<u64>().ok());
    let used = output(Command::new("du").args(["-sk"]).arg(root.join("target")))
        .ok()
        .and_then(|o| o.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb << 10);
    if let Some(free) = free_kb.map(|kb| kb << 10)
        && free + used < FULL_RUN_BYTES
    {
        println!(
            "setup: warning: {:.1} GB free on the disk of target/ ({:.1} GB already there); \
             a full run from nothing needs about {} GB, builds may fail with \
             \"No space left on device\"",
            free as f64 / 1e9,
            used as f64 / 1e9,
            FULL_RUN_BYTES >> 30
        );
    }
}

/// Everything, in order.
pub fn all(root: &Path) -> Result<Tools> {
    check_disk(root);
    targets()?;
    let python = python(root)?;
    let ort_dylib = onnxruntime(root, &python)?;
    real_models(root, &python)?;
    crate::node_suite::generate(root, &python)?;
    Ok(Tools { python, ort_dylib })
}

/// Real exported models the import tests read: `(PyPI package, version, file in the
/// wheel, SHA-256 of the file)`. Fetched from the registry, not kept in the repository.
pub const REAL_MODELS: &[(&str, &str, &str, &str)] = &[
    (
        "rapidocr-onnxruntime",
        "1.4.4",
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
    ),
    (
        "silero-vad",
        "6.2.3",
        "silero_vad/data/silero_vad_16k_sequence.onnx",
        "9ccdacc4719d8aa7e45a77536bfabec45a03ba1f2fad5e241ab4060b24238a85",
    ),
    (
        "silero-vad",
        "6.2.3",
        "silero_vad/data/silero_vad_16k_op15.onnx",
        "7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49",
    ),
    (
        "silero-vad",
        "6.2.3",
        "silero_vad/data/silero_vad_openvino_16k.onnx",
        "7776b81ad1b0350c15d7f1555943b9232eb53e9ca5d989c6d0cea9ebc8664d87",
    ),
];

/// scikit-learn and skl2onnx, pinned: `xtask/py/sklearn_models.py` converts with them
/// (and quantizes with the Python package of the ONNX Runtime the tests run,
/// [`ORT_VERSION`]).
pub const SKLEARN: &[&str] = &["scikit-learn==1.9.1", "skl2onnx==1.20.0"];

/// The models `xtask/py/sklearn_models.py` writes.
pub const SKLEARN_MODELS: &[&str] = &[
    "sklearn_breast_cancer_mlp.onnx",
    "sklearn_digits_mlp.onnx",
    "sklearn_digits_mlp_qdq.onnx",
    "sklearn_digits_mlp_qdq_pc.onnx",
    "sklearn_digits_mlp_dynamic.onnx",
    "mlp_784_256_128_10_qdq.onnx",
    "mlp_784_256_128_10_qop.onnx",
    "cnn_28x28.onnx",
    "cnn_28x28_qdq.onnx",
    "cnn_28x28_qop.onnx",
    "qop_blocks.onnx",
    "qop_head.onnx",
    "qop_where.onnx",
    "cnn_28x28_dynamic.onnx",
    "control_flow.onnx",
    "while_loops.onnx",
];

/// Downloads the wheels of [`REAL_MODELS`] and extracts their model files into
/// `target/xtask/models/`, checking each file's SHA-256, and converts the scikit-learn
/// models there (idempotent).
pub fn real_models(root: &Path, python: &Path) -> Result<()> {
    let dir = root.join("target/xtask/models");
    std::fs::create_dir_all(&dir)?;
    // The script that wrote the models, kept beside them: a changed script rewrites them.
    let script = std::fs::read(root.join("xtask/py/sklearn_models.py"))?;
    let stamp = dir.join("sklearn_models.py.done");
    let stale = std::fs::read(&stamp).ok().as_deref() != Some(script.as_slice());
    if stale || SKLEARN_MODELS.iter().any(|m| !dir.join(m).exists()) {
        let probe = format!(
            "import sklearn, skl2onnx, onnxruntime, sys; sys.exit(0 if (sklearn.__version__, skl2onnx.__version__, onnxruntime.__version__) == ('1.9.1', '1.20.0', '{ORT_VERSION}') else 1)"
        );
        let ready = Command::new(python)
            .args(["-c", &probe])
            .output()
            .is_ok_and(|o| o.status.success());
        if !ready {
            println!(
                "setup: pip install {} onnxruntime=={ORT_VERSION}",
                SKLEARN.join(" ")
            );
            run(Command::new(python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(SKLEARN)
                .arg(format!("onnx=={ONNX_VERSION}"))
                .arg(format!("ml_dtypes=={ML_DTYPES_VERSION}"))
                .arg(format!("onnxruntime=={ORT_VERSION}")))?;
        }
        run(Command::new(python)
            .arg(root.join("xtask/py/sklearn_models.py"))
            .arg(&dir))?;
        std::fs::write(&stamp, &script)?;
    }
    let missing: Vec<_> = REAL_MODELS
        .iter()
        .filter(|(_, _, file, _)| !dir.join(file_name(file)).exists())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&dir)?;
    let wheels = root.join("target/xtask/wheels");
    for (package, version, file, sha) in missing {
        println!(
            "setup: {file_name} from the {package}=={version} wheel",
            file_name = file_name(file)
        );
        pip_download(python, &format!("{package}=={version}"), &wheels)?;
        let script = r#"
import glob, hashlib, sys, zipfile
wheels, prefix, member, out, sha = sys.argv[1:]
whl = glob.glob(f"{wheels}/{prefix}-*.whl")[0]
data = zipfile.ZipFile(whl).read(member)
got = hashlib.sha256(data).hexdigest()
if got != sha:
    sys.exit(f"{member} in {whl} has SHA-256 {got}, expected {sha}")
open(out, "wb").write(data)
"#;
        let prefix = format!("{}-{version}", package.replace('-', "_"));
        run(Command::new(python)
            .arg("-c")
            .arg(script)
            .arg(&wheels)
            .arg(prefix)
            .arg(file)
            .arg(dir.join(file_name(file)))
            .arg(sha))?;
    }
    Ok(())
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// What the CUDA cross-check needs: ONNX Runtime's GPU build and the CUDA libraries.
#[derive(Debug, Clone)]
pub struct CudaTools {
    pub ort_dylib: PathBuf,
    /// Directories to put on `LD_LIBRARY_PATH` (the wheel's and NVIDIA's libraries).
    pub lib_dirs: Vec<PathBuf>,
}

/// Installs `onnxruntime-gpu` with its CUDA and cuDNN extras into a venv of its own
/// (about 1.3 GB; only for `cargo xtask test --cuda`).
pub fn onnxruntime_cuda(root: &Path) -> Result<CudaTools> {
    let venv = root.join("target/xtask/venv-cuda");
    let python = venv.join("bin/python");
    if !python.exists() {
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
    }
    let probe = "import onnxruntime, os; print(os.path.dirname(onnxruntime.__file__))";
    let installed = Command::new(&python)
        .args(["-c", probe])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let pkg_dir = match installed {
        Some(o) => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        None => {
            println!("setup: pip install onnxruntime-gpu[cuda,cudnn]=={ORT_VERSION}");
            run(Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                &format!("onnxruntime-gpu[cuda,cudnn]=={ORT_VERSION}"),
            ]))?;
            output(Command::new(&python).args(["-c", probe]))?
                .trim()
                .to_string()
        }
    };
    let capi = PathBuf::from(&pkg_dir).join("capi");
    let ort_dylib = capi.join(format!("libonnxruntime.so.{ORT_VERSION}"));
    if !ort_dylib.exists() {
        bail!("the onnxruntime-gpu wheel has no {}", ort_dylib.display());
    }
    let mut lib_dirs = vec![capi];
    let nvidia = PathBuf::from(&pkg_dir).with_file_name("nvidia");
    if let Ok(entries) = std::fs::read_dir(&nvidia) {
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join("lib")))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        lib_dirs.extend(dirs);
    }
    Ok(CudaTools {
        ort_dylib,
        lib_dirs,
    })
}
