//! `cargo xtask node-suite`: the ONNX backend node test suite through the importer.
//!
//! Every case (`xtask/py/node_cases.py` writes them in set-up) is sorted into one of:
//! - `unlisted`: it uses an operator SUPPORTED_OPS.md does not list;
//! - `refused`: its operators are listed but the importer or the checker refuses the
//!   model (the first error is the reason);
//! - `pass` or `wrong`: it imported, and `tests/node-suite` ran it on every data set
//!   against the suite's stored outputs;
//! - `disputed`: wrong by that comparison, but listed in [`DISPUTED`] with the evidence
//!   that the stored output is the inexact one (counted apart, never as a pass).
//!
//! `tests/node_suite.tsv` holds the expected status of every case. The run fails when a
//! case expected to pass does not, or when any case gives a wrong answer that the file
//! does not list; a case that passes unexpectedly is reported so the file is updated
//! (`--bless` rewrites it).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

use anyhow::{Context, Result, bail};
use tinyonnx_proto::Message;

/// Where set-up writes the cases.
pub fn cases_dir(root: &Path) -> PathBuf {
    root.join("target/xtask/node-cases")
}

/// The checked-in expectations.
pub fn expect_file(root: &Path) -> PathBuf {
    root.join("tests/node_suite.tsv")
}

/// Writes the node cases with the venv's onnx, once per onnx and ml_dtypes version
/// (set-up): the expected outputs of the narrow integer casts come from ml_dtypes.
pub fn generate(root: &Path, python: &Path) -> Result<()> {
    let dir = cases_dir(root);
    let stamp = format!(
        "# onnx {} ml_dtypes {}:",
        crate::setup::ONNX_VERSION,
        crate::setup::ML_DTYPES_VERSION
    );
    let index = std::fs::read_to_string(dir.join("index.tsv")).unwrap_or_default();
    if index.starts_with(&stamp) {
        return Ok(());
    }
    crate::setup::run(
        Command::new(python)
            .arg(root.join("xtask/py/node_cases.py"))
            .arg(&dir),
    )
}

/// Where the node suite's runner writes each case's emitted ONNX.
fn emitted_dir(root: &Path) -> PathBuf {
    root.join("target/xtask/node-suite/emitted")
}

/// Passing cases whose emitted ONNX does not give the stored outputs in ONNX Runtime
/// (or, one, fails onnx's own check) for a reason outside tinyonnx, with the evidence.
/// A passing case not listed here whose file fails either check fails the run.
const ORT_EXCEPTIONS: &[(&str, &str)] = &[
    (
        "test_cast_FLOAT_to_FLOAT4E2M1",
        "ONNX Runtime 1.31 has no Cast to FLOAT4E2M1",
    ),
    (
        "test_cast_FLOAT16_to_FLOAT4E2M1",
        "ONNX Runtime 1.31 has no Cast to FLOAT4E2M1",
    ),
    (
        "test_castlike_FLOAT_to_FLOAT4E2M1",
        "ONNX Runtime 1.31 has no Cast to FLOAT4E2M1",
    ),
    (
        "test_castlike_FLOAT_to_FLOAT4E2M1_expanded",
        "ONNX Runtime 1.31 has no Cast to FLOAT4E2M1",
    ),
    (
        "test_castlike_FLOAT16_to_FLOAT4E2M1",
        "ONNX Runtime 1.31 has no Cast to FLOAT4E2M1",
    ),
    (
        "test_castlike_FLOAT16_to_FLOAT4E2M1_expanded",
        "ONNX Runtime 1.31 has no Cast to FLOAT4E2M1",
    ),
    (
        "test_quantizelinear_float4e2m1",
        "ONNX Runtime 1.31 has no Cast to FLOAT4E2M1",
    ),
    (
        "test_onehot_with_axis",
        "ONNX Runtime 1.31 has no OneHot of float indices and int64 depth (nor loads the original file)",
    ),
    (
        "test_onehot_with_negative_axis",
        "ONNX Runtime 1.31 has no OneHot of float indices and int64 depth (nor loads the original file)",
    ),
    (
        "test_onehot_without_axis",
        "ONNX Runtime 1.31 has no OneHot of float indices and int64 depth (nor loads the original file)",
    ),
    (
        "test_convinteger_with_padding",
        "ONNX Runtime 1.31's ConvInteger refuses a per-channel weight zero point (the original file too)",
    ),
    (
        "test_mvn",
        "onnx 1.23's checker refuses the operator's own function body at opset 13 (the original file too)",
    ),
    (
        "test_dft",
        "ONNX Runtime's FFT leaves imaginary parts up to 1.1e-4 where the reference has 0 (the original file too)",
    ),
    ("test_dft_opset19", "as test_dft"),
    ("test_dft_axis", "as test_dft"),
    ("test_dft_axis_opset19", "as test_dft"),
    ("test_dft_rfft", "as test_dft"),
    ("test_dft_rfft_opset19", "as test_dft"),
    (
        "test_dft_irfft",
        "as test_dft: 1.1e-5 where the reference has 0",
    ),
    ("test_dft_irfft_opset19", "as test_dft_irfft"),
    (
        "test_stft",
        "as test_dft (ONNX Runtime's STFT, the original file too)",
    ),
    ("test_stft_with_window", "as test_stft"),
    (
        "test_maxunpool_export_with_output_shape",
        "ONNX Runtime 1.31 places 8 of 25 values elsewhere than the reference (the original file too)",
    ),
    (
        "test_resize_downsample_scales_cubic_align_corners",
        "ONNX Runtime 1.31 differs from the reference on downsampling with align_corners (the original file too)",
    ),
    (
        "test_resize_downsample_scales_linear_align_corners",
        "as test_resize_downsample_scales_cubic_align_corners",
    ),
    (
        "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal",
        "ONNX Runtime 1.31's qk_matmul_output puts -inf elsewhere than the reference (the original file too)",
    ),
    (
        "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal",
        "as test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal",
    ),
];

/// Runs every passing case's emitted ONNX through `xtask/py/node_suite_ort.py`; the
/// failures, by case.
fn emitted_in_ort(
    root: &Path,
    python: &Path,
    passing: &[&str],
) -> Result<BTreeMap<String, String>> {
    use std::io::Write as _;
    let mut child = Command::new(python)
        .arg(root.join("xtask/py/node_suite_ort.py"))
        .arg(cases_dir(root))
        .arg(emitted_dir(root))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .context("cannot run the Python oracle")?;
    child
        .stdin
        .take()
        .context("no stdin")?
        .write_all(passing.join("\n").as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!("xtask/py/node_suite_ort.py failed ({})", output.status);
    }
    let mut failed = BTreeMap::new();
    let mut seen = 0;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        seen += 1;
        match line.splitn(3, '\t').collect::<Vec<_>>().as_slice() {
            [_, "ok"] => {}
            [name, "fail", why] => {
                failed.insert(name.to_string(), why.to_string());
            }
            _ => bail!("xtask/py/node_suite_ort.py printed `{line}`"),
        }
    }
    if seen != passing.len() {
        bail!(
            "xtask/py/node_suite_ort.py checked {seen} of {} cases",
            passing.len()
        );
    }
    Ok(failed)
}

/// The emitted ONNX of every passing case against onnx's checker and ONNX Runtime;
/// what fails that [`ORT_EXCEPTIONS`] does not list, and exceptions that no longer fail.
fn check_emitted(
    root: &Path,
    python: &Path,
    status: &BTreeMap<String, Status>,
) -> Result<Vec<String>> {
    let passing: Vec<&str> = status
        .iter()
        .filter(|(_, s)| matches!(s, Status::Pass(_)))
        .map(|(n, _)| n.as_str())
        .collect();
    let failed = emitted_in_ort(root, python, &passing)?;
    let listed = |n: &str| ORT_EXCEPTIONS.iter().any(|(e, _)| *e == n);
    println!(
        "emitted ONNX of the {} passing cases: {} pass onnx's full check and give the stored outputs in ONNX Runtime, {} are listed exceptions",
        passing.len(),
        passing.len() - failed.len(),
        failed.keys().filter(|n| listed(n)).count()
    );
    let mut out: Vec<String> = failed
        .iter()
        .filter(|(n, _)| !listed(n))
        .map(|(n, why)| format!("{n}: its emitted ONNX: {why}"))
        .collect();
    for (n, _) in ORT_EXCEPTIONS {
        if passing.contains(n) && !failed.contains_key(*n) {
            out.push(format!(
                "{n}: listed in ORT_EXCEPTIONS, but its emitted ONNX now passes: remove it"
            ));
        }
    }
    Ok(out)
}

/// Cases whose stored outputs are less exact than the tolerance the suite compares
/// with, and why we hold ours to be right. A case here that gives a wrong answer is
/// `disputed`; one that passes is a pass.
const DISPUTED: &[(&str, &str)] = &[
    (
        "test_dft_inverse",
        "the stored imaginary parts are float32 rounding (1.9e-7 where numpy's ifft in f64 of the stored input gives 7e-16 and tinyonnx 0); ONNX Runtime 1.31 misses 20 values of this case",
    ),
    (
        "test_dft_inverse_opset19",
        "as test_dft_inverse (same data at opset 19)",
    ),
    (
        "test_attention_3d_causal_bf16",
        "the stored Y is computed in bfloat16 arithmetic, up to 3.6e-3 from the reference's own formula in f64; at the first difference the f64 value is 0.225052, ours (f32, rounded once) the nearest bfloat16 0.224609, the stored 0.225586; one bfloat16 step is 4e-3 relative, above rtol 1e-3",
    ),
    (
        "test_attention_4d_attn_mask_causal_bf16",
        "as test_attention_3d_causal_bf16: stored up to 4.0e-3 from f64; first difference f64 0.401785, ours 0.402344 (nearest), stored 0.400391",
    ),
    (
        "test_attention_4d_causal_bf16",
        "as test_attention_3d_causal_bf16: stored up to 4.4e-3 from f64; first difference f64 0.499396, ours 0.5 (nearest), stored 0.498047",
    ),
    (
        "test_attention_4d_padded_kv_bf16",
        "as test_attention_3d_causal_bf16 (opset 24, with nonpad_kv_seqlen): stored up to 5.0e-3 from the reference evaluated in f64; first difference f64 0.400770, ours 0.400391 (nearest), stored 0.402344",
    ),
    (
        "test_attention_4d_causal_padded_kv_bf16",
        "as test_attention_3d_causal_bf16 (opset 24, with nonpad_kv_seqlen): stored up to 4.9e-3 from the reference evaluated in f64; first difference f64 0.465488, ours 0.464844 (nearest), stored 0.466797",
    ),
    // The expanded graphs store the outputs of their operator's case (same inputs, same
    // Y, checked equal), so a 16-bit case disputed there is disputed here too.
    (
        "test_attention_3d_causal_bf16_expanded",
        "the stored Y is test_attention_3d_causal_bf16's (disputed: bfloat16 arithmetic); tinyonnx computes this graph in f32 with its casts to bfloat16",
    ),
    (
        "test_attention_4d_causal_bf16_expanded",
        "the stored Y is test_attention_4d_causal_bf16's (disputed: bfloat16 arithmetic); tinyonnx computes this graph in f32 with its casts to bfloat16",
    ),
    (
        "test_attention_4d_attn_mask_causal_bf16_expanded",
        "the stored Y is test_attention_4d_attn_mask_causal_bf16's (disputed: bfloat16 arithmetic); tinyonnx computes this graph in f32 with its casts to bfloat16",
    ),
    (
        "test_attention_4d_padded_kv_bf16_expanded",
        "the stored Y is test_attention_4d_padded_kv_bf16's (bfloat16 arithmetic, as test_attention_3d_causal_bf16); tinyonnx computes this graph in f32 with its casts to bfloat16",
    ),
    (
        "test_attention_4d_causal_padded_kv_bf16_expanded",
        "the stored Y is test_attention_4d_causal_padded_kv_bf16's (bfloat16 arithmetic, as test_attention_3d_causal_bf16); tinyonnx computes this graph in f32 with its casts to bfloat16",
    ),
    (
        "test_attention_4d_causal_fp16_expanded",
        "float16 arithmetic: the stored Y (test_attention_4d_causal_fp16's) and ONNX Runtime 1.31 running this graph in float16 differ by up to 9.4e-4 relative; tinyonnx (f32 with the graph's casts to float16) is one float16 step from ONNX Runtime at the first difference: [12] ours 0.468994, ONNX Runtime 0.469238, stored 0.469482",
    ),
];

/// One case of the suite, as `index.tsv` lists it.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    opset: i64,
    ops: Vec<String>,
    tensors_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// With a note: the inputs bound at compile time, if any.
    Pass(String),
    Wrong(String),
    /// Wrong by the comparison, with the reason of [`DISPUTED`].
    Disputed(String),
    Refused(String),
    Unlisted(String),
}

impl Status {
    fn word(&self) -> &'static str {
        match self {
            Status::Pass(_) => "pass",
            Status::Wrong(_) => "wrong",
            Status::Disputed(_) => "disputed",
            Status::Refused(_) => "refused",
            Status::Unlisted(_) => "unlisted",
        }
    }

    fn reason(&self) -> &str {
        match self {
            Status::Pass(r)
            | Status::Wrong(r)
            | Status::Disputed(r)
            | Status::Refused(r)
            | Status::Unlisted(r) => r,
        }
    }
}

fn read_index(dir: &Path) -> Result<Vec<Case>> {
    let text = std::fs::read_to_string(dir.join("index.tsv"))
        .with_context(|| format!("{}: run `cargo xtask setup`", dir.display()))?;
    let mut cases = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 4 {
            bail!("index.tsv: bad line `{line}`");
        }
        cases.push(Case {
            name: f[0].to_string(),
            opset: f[1].parse()?,
            ops: f[2]
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            tensors_only: f[3] == "1",
        });
    }
    Ok(cases)
}

/// Operators SUPPORTED_OPS.md lists: the registry, the control flow the DSL writes as
/// statements, and what the importer rewrites into registered operators.
fn listed(op: &str) -> bool {
    use tinyonnx_core::import::{EVALUATED, REWRITTEN};
    tinyonnx_core::ops::lookup(op).is_some()
        || matches!(op, "If" | "Loop" | "Scan")
        || EVALUATED.iter().any(|(o, _)| *o == op)
        || REWRITTEN.iter().any(|(o, _)| *o == op)
}

/// The non-initializer graph inputs of a model, in order.
pub(crate) fn graph_inputs(graph: &tinyonnx_proto::GraphProto) -> Vec<String> {
    let inits: BTreeSet<&str> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    graph
        .input
        .iter()
        .map(|v| v.name.clone().unwrap_or_default())
        .filter(|n| !inits.contains(n.as_str()))
        .collect()
}

/// Input `k` of every data set of a case, as stored.
pub(crate) fn data_sets_of(dir: &Path, k: usize) -> Result<Vec<tinyonnx_proto::TensorProto>> {
    let mut out = Vec::new();
    for set in 0.. {
        let p = dir.join(format!("test_data_set_{set}/input_{k}.pb"));
        let Ok(bytes) = std::fs::read(&p) else {
            break;
        };
        out.push(tinyonnx_proto::TensorProto::decode(bytes.as_slice())?);
    }
    Ok(out)
}

/// The translation a static compiler needs: graph inputs that feed an operator input
/// tinyonnx requires at compile time (axes, pads, indices, shapes: `i64, const` in
/// SUPPORTED_OPS.md), or the int32/int64 inputs such a value is computed from, become
/// initializers holding the case's data, when every data set holds the same values. Writes `model.bound.onnx`; returns the inputs bound, or the
/// reason it cannot.
fn bind_compile_time_inputs(dir: &Path) -> Result<Result<Vec<String>, String>> {
    use tinyonnx_core::ops::{InTy, lookup};
    let mut model =
        tinyonnx_proto::ModelProto::decode(std::fs::read(dir.join("model.onnx"))?.as_slice())?;
    let graph = model.graph.get_or_insert_with(Default::default);
    let inputs = graph_inputs(graph);
    let mut bind = BTreeSet::new();
    let mut needed = BTreeSet::new();
    for node in &graph.node {
        let op = node.op_type.as_deref().unwrap_or("");
        // Inputs the importer needs known: all of an operator it evaluates, Loop's trip
        // count and condition (they fix its plan), Upsample's scales (Resize's must be),
        // a recurrent operator's sequence lengths.
        let known: Option<Vec<&String>> = if tinyonnx_core::import::EVALUATED
            .iter()
            .any(|(o, _)| *o == op)
        {
            Some(node.input.iter().collect())
        } else if op == "Loop" {
            Some(node.input.iter().take(2).collect())
        } else if op == "Upsample" {
            Some(node.input.iter().skip(1).collect())
        } else if matches!(op, "LSTM" | "GRU" | "RNN") {
            // sequence_lens: the plan runs every sequence for the steps these fix.
            Some(node.input.get(4).into_iter().collect())
        } else {
            None
        };
        if let Some(known) = known {
            for name in known.into_iter().filter(|i| !i.is_empty()) {
                needed.insert(name.clone());
                if inputs.contains(name) {
                    bind.insert(name.clone());
                }
            }
            continue;
        }
        let Some(schema) = lookup(op) else {
            continue;
        };
        for (i, name) in node.input.iter().enumerate() {
            if schema
                .input_spec(i)
                .is_some_and(|s| matches!(s.ty, InTy::I64Const | InTy::Const))
                && !name.is_empty()
            {
                needed.insert(name.clone());
                if inputs.contains(name) {
                    bind.insert(name.clone());
                }
            }
        }
    }
    // And the integer inputs they are computed from (an index derived from a label).
    loop {
        let before = needed.len();
        for node in &graph.node {
            if node.output.iter().any(|o| needed.contains(o)) {
                needed.extend(node.input.iter().filter(|i| !i.is_empty()).cloned());
            }
        }
        if needed.len() == before {
            break;
        }
    }
    for (k, name) in inputs.iter().enumerate() {
        if needed.contains(name)
            && data_sets_of(dir, k)?
                .first()
                .is_some_and(|t| matches!(t.data_type, Some(6 | 7)))
        {
            bind.insert(name.clone());
        }
    }
    if bind.is_empty() {
        return Ok(Ok(Vec::new()));
    }
    for name in &bind {
        let k = inputs
            .iter()
            .position(|n| n == name)
            .expect("a graph input");
        let sets = data_sets_of(dir, k)?;
        let Some(first) = sets.first() else {
            return Ok(Err(format!("no data for input `{name}`")));
        };
        if sets
            .iter()
            .any(|t| t.encode_to_vec() != first.encode_to_vec())
        {
            return Ok(Err(format!(
                "input `{name}` must be known at compile time, and the data sets differ in it"
            )));
        }
        let mut t = first.clone();
        t.name = Some(name.clone());
        graph.initializer.push(t);
    }
    graph
        .input
        .retain(|v| !bind.contains(v.name.as_deref().unwrap_or("")));
    std::fs::write(dir.join("model.bound.onnx"), model.encode_to_vec())?;
    Ok(Ok(bind.into_iter().collect()))
}

/// The source of `import(...)` for a case: the model (with its compile-time inputs
/// bound), and `shapes(...)` from the first data set (node models sometimes leave
/// dims open). Returns it and the inputs bound, or the reason the case is refused.
pub(crate) fn import_source(
    name: &str,
    dir: &Path,
) -> Result<Result<(String, Vec<String>), String>> {
    let bound = match bind_compile_time_inputs(dir)? {
        Ok(b) => b,
        Err(why) => return Ok(Err(why)),
    };
    let file = dir.join(if bound.is_empty() {
        "model.onnx"
    } else {
        "model.bound.onnx"
    });
    let model =
        tinyonnx_proto::ModelProto::decode(std::fs::read(dir.join("model.onnx"))?.as_slice())?;
    let graph = model.graph.unwrap_or_default();
    let mut shapes = Vec::new();
    for (k, input) in graph_inputs(&graph).iter().enumerate() {
        if bound.contains(input) {
            continue;
        }
        if let Some(t) = data_sets_of(dir, k)?.first() {
            let dims: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
            shapes.push(format!("{input:?} = [{}]", dims.join(", ")));
        }
    }
    let shapes = if shapes.is_empty() {
        String::new()
    } else {
        format!(", shapes({})", shapes.join(", "))
    };
    Ok(Ok((
        format!(
            "pub model {name} = import({:?}{shapes});",
            file.display().to_string()
        ),
        bound,
    )))
}

/// The first error of a failed compile, on one line.
fn first_error(f: &tinyonnx_core::Failure) -> String {
    f.errors
        .first()
        .map_or_else(
            || "refused without a message".to_string(),
            ToString::to_string,
        )
        .replace(['\t', '\n'], " ")
}

/// Sorts every case, runs the imported ones; returns each case's status.
fn statuses(root: &Path) -> Result<(Vec<Case>, BTreeMap<String, Status>)> {
    let dir = cases_dir(root);
    let cases = read_index(&dir)?;
    let mut status = BTreeMap::new();
    let mut models = String::from(
        "// Generated by `cargo xtask node-suite`; one imported model per node case.\n\n",
    );
    let mut table = String::new();
    let mut imported = 0;
    let mut notes = BTreeMap::new();
    for case in &cases {
        let unlisted: Vec<&str> = case
            .ops
            .iter()
            .map(String::as_str)
            .filter(|op| !listed(op))
            .collect();
        if !unlisted.is_empty() {
            status.insert(case.name.clone(), Status::Unlisted(unlisted.join(",")));
            continue;
        }
        if !case.tensors_only {
            status.insert(
                case.name.clone(),
                Status::Refused("sequence, map or optional values at the model's ports".into()),
            );
            continue;
        }
        let ident = format!("NodeCase{imported}");
        let (src, bound) = match import_source(&ident, &dir.join(&case.name))? {
            Ok(s) => s,
            Err(why) => {
                status.insert(case.name.clone(), Status::Refused(why));
                continue;
            }
        };
        if !bound.is_empty() {
            notes.insert(
                case.name.clone(),
                format!("bound at compile time: {}", bound.join(", ")),
            );
        }
        let tokens = proc_macro2::TokenStream::from_str(&src)
            .map_err(|e| anyhow::anyhow!("{}: {e}", case.name))?;
        // A panic in the compiler is a bug to report, not a refusal.
        let compiled = std::panic::catch_unwind(|| tinyonnx_core::driver::compile(tokens))
            .map_err(|_| anyhow::anyhow!("{}: the compiler panicked on `{src}`", case.name))?;
        match compiled {
            Ok(_) => {
                imported += 1;
                writeln!(models, "tinyonnx::onnx_model! {{ {src} }}")?;
                writeln!(
                    table,
                    "    ({:?}, tinyonnx_examples::example::<{ident}>()),",
                    case.name
                )?;
            }
            Err(f) => {
                let why = first_error(&f).replace(&format!("{}/", dir.display()), "");
                status.insert(case.name.clone(), Status::Refused(why));
            }
        }
    }
    writeln!(
        models,
        "\n/// (case name, model)\npub static CASES: &[(&str, tinyonnx_examples::Example)] = &[\n{table}];"
    )?;
    let out = root.join("target/xtask/node-suite");
    std::fs::create_dir_all(&out)?;
    let file = out.join("models.rs");
    // Rewritten only when it changes, so an unchanged suite is not rebuilt.
    if std::fs::read_to_string(&file).ok().as_deref() != Some(models.as_str()) {
        std::fs::write(&file, &models)?;
    }
    println!(
        "node suite: {} cases, {imported} imported; building and running them",
        cases.len()
    );
    let emitted = emitted_dir(root);
    if emitted.exists() {
        std::fs::remove_dir_all(&emitted)?;
    }
    std::fs::create_dir_all(&emitted)?;
    let manifest = root.join("tests/node-suite/Cargo.toml");
    let output = crate::setup::cargo()
        .current_dir(root)
        .arg("run")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--target-dir", "target", "--"])
        .arg(&dir)
        .env("TINYONNX_NODE_SUITE_EMIT", &emitted)
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("cannot run cargo")?;
    let text = String::from_utf8_lossy(&output.stdout);
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(3, '\t').collect();
        let s = match f.as_slice() {
            [name, "pass"] => Status::Pass(notes.get(*name).cloned().unwrap_or_default()),
            [name, "wrong", why] => match DISPUTED.iter().find(|(n, _)| n == name) {
                Some((_, reason)) => Status::Disputed(format!("{reason}; {why}")),
                None => Status::Wrong(why.to_string()),
            },
            _ => bail!("tests/node-suite printed `{line}`"),
        };
        status.insert(f[0].to_string(), s);
    }
    if !output.status.success() {
        bail!(
            "tests/node-suite failed ({}) after {} cases",
            output.status,
            text.lines().count()
        );
    }
    for case in &cases {
        if !status.contains_key(&case.name) {
            bail!("{}: imported but not run", case.name);
        }
    }
    Ok((cases, status))
}

pub(crate) fn read_expected(path: &Path) -> Result<BTreeMap<String, (String, String)>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(5, '\t').collect();
            (f.len() >= 4).then(|| {
                (
                    f[0].to_string(),
                    (f[3].to_string(), f.get(4).unwrap_or(&"").to_string()),
                )
            })
        })
        .collect())
}

fn write_expected(path: &Path, cases: &[Case], status: &BTreeMap<String, Status>) -> Result<()> {
    let mut text = String::from(
        "# The ONNX backend node test suite (onnx 1.23.2) through `import`: case, operators,\n\
         # opset, status (pass, wrong, disputed, refused, unlisted), reason. Written by\n\
         # `cargo xtask node-suite --bless`; `cargo xtask test` fails when a case listed\n\
         # as pass stops passing or a case gives a wrong answer not listed here.\n",
    );
    for c in cases {
        let s = &status[&c.name];
        writeln!(
            text,
            "{}\t{}\t{}\t{}\t{}",
            c.name,
            c.ops.join(","),
            c.opset,
            s.word(),
            s.reason()
        )?;
    }
    std::fs::write(path, text)?;
    Ok(())
}

/// Runs the suite, prints totals and the per-operator table, and compares with the
/// expectations (or rewrites them with `bless`).
pub fn run(root: &Path, python: &Path, bless: bool) -> Result<()> {
    generate(root, python)?;
    let (cases, status) = statuses(root)?;
    let mut totals: BTreeMap<&str, usize> = BTreeMap::new();
    for s in status.values() {
        *totals.entry(s.word()).or_default() += 1;
    }
    let selected = cases.len() - totals.get("unlisted").copied().unwrap_or(0);
    println!(
        "node suite: {} cases; {selected} use only listed operators: {} pass, {} refused, {} wrong, {} disputed",
        cases.len(),
        totals.get("pass").unwrap_or(&0),
        totals.get("refused").unwrap_or(&0),
        totals.get("wrong").unwrap_or(&0),
        totals.get("disputed").unwrap_or(&0)
    );
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for s in status.values() {
        if let Status::Refused(r) = s {
            *reasons.entry(reason_class(r)).or_default() += 1;
        }
    }
    let mut by_count: Vec<_> = reasons.into_iter().collect();
    by_count.sort_by_key(|b| std::cmp::Reverse(b.1));
    for (r, n) in by_count.iter().take(25) {
        println!("  refused {n:>4}: {r}");
    }
    for (name, s) in &status {
        match s {
            Status::Wrong(why) => println!("  WRONG {name}: {why}"),
            Status::Disputed(why) => println!("  disputed {name}: {why}"),
            _ => {}
        }
    }
    let ort_failures = check_emitted(root, python, &status)?;
    let path = expect_file(root);
    if bless {
        write_expected(&path, &cases, &status)?;
        println!("wrote {}", path.display());
        if !ort_failures.is_empty() {
            bail!("node suite:\n{}", ort_failures.join("\n"));
        }
        return Ok(());
    }
    let expected = read_expected(&path)?;
    let mut failures = ort_failures;
    let mut improved = Vec::new();
    for c in &cases {
        let now = &status[&c.name];
        let (was, _) = expected
            .get(&c.name)
            .cloned()
            .unwrap_or_else(|| ("new".into(), String::new()));
        match (was.as_str(), now) {
            ("pass", Status::Pass(_)) => {}
            ("pass", s) => failures.push(format!(
                "{}: passed, now {}: {}",
                c.name,
                s.word(),
                s.reason()
            )),
            ("wrong", Status::Wrong(_)) | ("disputed", Status::Disputed(_)) => {}
            (_, Status::Disputed(why)) => {
                failures.push(format!("{}: newly disputed: {why}", c.name))
            }
            (_, Status::Wrong(why)) => failures.push(format!("{}: wrong answer: {why}", c.name)),
            (_, Status::Pass(_)) => improved.push(c.name.clone()),
            _ => {}
        }
    }
    if !improved.is_empty() {
        println!(
            "{} cases pass that {} does not list as passing (run `cargo xtask node-suite --bless`): {}",
            improved.len(),
            path.display(),
            improved.join(", ")
        );
    }
    if !failures.is_empty() {
        bail!("node suite:\n{}", failures.join("\n"));
    }
    Ok(())
}

/// A refusal's reason without the case's own names and numbers, for the totals.
fn reason_class(r: &str) -> String {
    let r = r
        .split_once("): ")
        .map_or(r, |(_, rest)| rest)
        .trim_start_matches("node `")
        .to_string();
    let mut out = String::new();
    let mut in_tick = false;
    for ch in r.chars() {
        match ch {
            '`' => {
                in_tick = !in_tick;
                out.push_str(if in_tick { "`" } else { "…`" });
            }
            _ if in_tick => {}
            c if c.is_ascii_digit() => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            c => out.push(c),
        }
    }
    out.chars().take(110).collect()
}
