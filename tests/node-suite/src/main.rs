//! Runs the ONNX backend node test cases that `cargo xtask node-suite` imported (the
//! models in `target/xtask/node-suite/models.rs`, one `import(...)` each) on every data
//! set of the case, against the outputs the suite itself stores, compared as the ONNX
//! backend test does: `|ours - expected| <= atol + rtol * |expected|` with rtol 1e-3 and
//! atol 1e-7 for floats (NaN equal to NaN), integers and bools exactly, shapes equal.
//!
//! usage: tinyonnx-node-suite CASES_DIR
//! Prints one line per case: `name<TAB>pass` or `name<TAB>wrong<TAB>what differs`.

use std::io::Write;
use std::path::{Path, PathBuf};

use tinyonnx_core::data::Data;
use tinyonnx_core::types::DType;
use tinyonnx_examples::Example;
use tinyonnx_proto::Message;
use tinyonnx_tests::Values;

include!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../target/xtask/node-suite/models.rs"
));

const RTOL: f64 = 1e-3;
const ATOL: f64 = 1e-7;

/// A tensor of a data set: name, dims, values and the 16-bit type it was stored in.
type Tensor = (String, Vec<usize>, Values, Narrow);

/// A tensor file of a data set: its name, dims and values (16-bit floats widened to f32,
/// with [`Narrow`] saying which).
fn read_tensor(path: &Path) -> Result<Tensor, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let t = tinyonnx_proto::TensorProto::decode(bytes.as_slice())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let c = tinyonnx_core::import::proto::tensor(&t)
        .map_err(|e| format!("{}: the tensor {e}", path.display()))?;
    let values = match c.data {
        Data::F32(v) => Values::F32(v),
        Data::I64(v) => Values::I64(v),
        Data::Typed { dtype, values } => match dtype {
            DType::F64 => Values::F64(values),
            DType::I32 => Values::I32(values.iter().map(|&v| v as i32).collect()),
            DType::I8 => Values::I8(values.iter().map(|&v| v as i8).collect()),
            DType::U8 => Values::U8(values.iter().map(|&v| v as u8).collect()),
            DType::Bool => Values::Bool(values.iter().map(|&v| v != 0.0).collect()),
            DType::I16 => Values::I16(values.iter().map(|&v| v as i16).collect()),
            DType::U16 => Values::U16(values.iter().map(|&v| v as u16).collect()),
            DType::U32 => Values::U32(values.iter().map(|&v| v as u32).collect()),
            DType::U64 => Values::U64(values.iter().map(|&v| v as u64).collect()),
            other => return Err(format!("{}: unexpected dtype {other}", path.display())),
        },
    };
    let narrow = match t.data_type {
        Some(10) => Narrow::F16,
        Some(16) => Narrow::Bf16,
        _ => Narrow::No,
    };
    Ok((t.name.unwrap_or_default(), c.dims, values, narrow))
}

/// The 16-bit float type an expected output is stored in: the model computes in f32 after
/// import, and its result is compared once rounded to that type (to nearest, ties to
/// even), which is what a runtime computing in the file's type returns.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Narrow {
    No,
    F16,
    Bf16,
}

impl Narrow {
    fn round(self, v: f64) -> f64 {
        match self {
            Narrow::No => v,
            Narrow::F16 => f64::from(half::f16::from_f64(v)),
            Narrow::Bf16 => f64::from(half::bf16::from_f64(v)),
        }
    }
}

/// The files `input_K.pb` (or `output_K.pb`) of a data set, in order.
fn tensors(dir: &Path, kind: &str) -> Result<Vec<Tensor>, String> {
    let mut out = Vec::new();
    loop {
        let p = dir.join(format!("{kind}_{}.pb", out.len()));
        if !p.exists() {
            return Ok(out);
        }
        out.push(read_tensor(&p)?);
    }
}

/// What differs between our output and the expected one, if anything.
fn differs(ours: &Values, expected: &Values, narrow: Narrow) -> Option<String> {
    if ours.dtype() != expected.dtype() {
        return Some(format!(
            "dtype {} instead of {}",
            ours.dtype(),
            expected.dtype()
        ));
    }
    let (a, b) = (ours.to_f64(), expected.to_f64());
    if a.len() != b.len() {
        return Some(format!("{} values instead of {}", a.len(), b.len()));
    }
    let exact = ours.is_exact();
    let mut worst: Option<(usize, f64, f64)> = None;
    let mut count = 0;
    for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
        let x = narrow.round(x);
        let ok = if exact {
            x == y
        } else if x.is_nan() || y.is_nan() {
            x.is_nan() && y.is_nan()
        } else if x.is_infinite() || y.is_infinite() {
            x == y
        } else {
            (x - y).abs() <= ATOL + RTOL * y.abs()
        };
        if !ok {
            count += 1;
            if worst.is_none() {
                worst = Some((i, x, y));
            }
        }
    }
    worst.map(|(i, x, y)| {
        format!(
            "{count} of {} values differ, first [{i}]: {x} instead of {y}",
            a.len()
        )
    })
}

fn run_case(example: &Example, dir: &Path) -> Result<(), String> {
    let info = &example.info;
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_"))
        })
        .collect();
    sets.sort();
    if sets.is_empty() {
        return Err("no data set".into());
    }
    for set in &sets {
        let given = tensors(set, "input")?;
        let expected = tensors(set, "output")?;
        // By name where the file names the port, else by position.
        let mut inputs = Vec::new();
        for (k, port) in info.inputs.iter().enumerate() {
            let found = given
                .iter()
                .find(|(n, ..)| n == port.name)
                .or_else(|| given.get(k))
                .ok_or_else(|| format!("no data for input `{}`", port.name))?;
            inputs.push(found.2.clone());
        }
        let ours = tinyonnx_tests::run_ours(example, &inputs)?;
        if ours.len() != expected.len() {
            return Err(format!(
                "{} outputs instead of {}",
                ours.len(),
                expected.len()
            ));
        }
        for (k, port) in info.outputs.iter().enumerate() {
            let (_, dims, want, narrow) = expected
                .iter()
                .find(|(n, ..)| n == port.name)
                .unwrap_or(&expected[k]);
            if port.shape != dims.as_slice() {
                return Err(format!(
                    "output `{}` has shape {:?} instead of {dims:?}",
                    port.name, port.shape
                ));
            }
            if let Some(d) = differs(&ours[k], want, *narrow) {
                let set = set.file_name().unwrap_or_default().to_string_lossy();
                return Err(format!("{set} output `{}`: {d}", port.name));
            }
        }
    }
    Ok(())
}

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: tinyonnx-node-suite CASES_DIR");
        std::process::exit(2);
    };
    let root = PathBuf::from(root);
    // Set, every case's emitted ONNX is written there too (to run in ONNX Runtime).
    let emit_dir = std::env::var_os("TINYONNX_NODE_SUITE_EMIT").map(PathBuf::from);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (name, example) in CASES {
        let dir = root.join(name);
        if let Some(e) = &emit_dir {
            let _ = std::fs::write(e.join(format!("{name}.onnx")), example.onnx);
        }
        // A kernel that panics is a wrong answer of that case, not the end of the run.
        let result = std::panic::catch_unwind(|| run_case(example, &dir))
            .unwrap_or_else(|_| Err("panicked".to_string()));
        let line = match result {
            Ok(()) => format!("{name}\tpass"),
            Err(e) => format!("{name}\twrong\t{}", e.replace(['\t', '\n'], " ")),
        };
        // Written as each case ends, so a crash still leaves the cases before it.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
