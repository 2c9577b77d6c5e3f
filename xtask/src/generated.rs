//! What the operator registry generates: `SUPPORTED_OPS.md` and the cross-check cases
//! `tests/src/cases.rs` (written by `cargo xtask codegen`; the tests below fail when the
//! checked-in files are stale). Tools, not part of the compiler the macro ships.

use tinyonnx_core::ops::{AttrDefault, InTy, MAX_OPSET, MIN_OPSET, OpSchema, REGISTRY};

/// `SUPPORTED_OPS.md`: every operator of [`REGISTRY`](tinyonnx_core::ops::REGISTRY), its opsets, dtypes, inputs and
/// attributes, generated so the list cannot drift from the code (`cargo xtask codegen`
/// writes it; a test fails when the checked-in file is stale).
pub fn supported_ops_markdown() -> String {
    let mut s = String::from(
        "# Supported operators\n\n\
         Generated from the operator registry (`core/src/ops/`) by `cargo xtask codegen`; \
         a test fails when this file is stale.\n\n\
         Opsets: the default domain, versions \
         accepted by a model (`opset = N;`, 13 to 23). Element types: what the forward pass \
         computes; inputs marked (i64, const) are int64 and must be known at compile time (shapes, axes). \
         Inputs in brackets are optional (`_` omits one), `...` repeats.\n\n\
         | operator | opsets | dtypes | inputs | outputs | attributes (default) |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut ops: Vec<&OpSchema> = REGISTRY.to_vec();
    ops.sort_by_key(|op| op.op_type);
    for op in ops {
        let inputs: Vec<String> = op
            .inputs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut name = spec.name.to_string();
                match spec.ty {
                    InTy::I64Const => name.push_str(" (i64, const)"),
                    InTy::Const => name.push_str(" (const)"),
                    InTy::Bool => name.push_str(" (bool)"),
                    InTy::T | InTy::Any => {}
                }
                if op.variadic && i + 1 == op.inputs.len() {
                    name.push_str("...");
                }
                if spec.optional {
                    format!("[{name}]")
                } else {
                    name
                }
            })
            .collect();
        let outputs: Vec<String> = (0..op.outputs)
            .map(|i| op.output_name(i).to_string())
            .collect();
        let attrs: Vec<String> = op
            .attrs
            .iter()
            .map(|a| {
                let mut text = match a.default {
                    AttrDefault::Required => format!("{} (required)", a.name),
                    AttrDefault::Absent => a.name.to_string(),
                    AttrDefault::Int(v) => format!("{} ({v})", a.name),
                    AttrDefault::Float(v) => format!("{} ({v})", a.name),
                    AttrDefault::Str(v) => format!("{} (\"{v}\")", a.name),
                };
                if a.since > MIN_OPSET {
                    text.push_str(&format!(" from {}", a.since));
                }
                if a.until < MIN_OPSET {
                    text.push_str(" (an input instead)");
                } else if a.until < MAX_OPSET {
                    text.push_str(&format!(" until {}", a.until));
                }
                text
            })
            .collect();
        let dtypes: Vec<String> = op
            .dtypes
            .iter()
            .map(|d| match op.dtype_since.iter().find(|(x, _)| x == d) {
                Some((_, v)) => format!("{d} (from {v})"),
                None => d.name().to_string(),
            })
            .collect();
        s.push_str(&format!(
            "| {} | {}-{MAX_OPSET} | {} | {} | {} | {} |\n",
            op.op_type,
            op.since_opset,
            dtypes.join(", "),
            if inputs.is_empty() {
                "-".to_string()
            } else {
                inputs.join(", ")
            },
            outputs.join(", "),
            if attrs.is_empty() {
                "-".to_string()
            } else {
                attrs.join(", ")
            }
        ));
    }
    s.push_str(&format!("\n{} operators.\n", REGISTRY.len()));
    s.push_str(
        "\n## Control flow\n\n\
         Written as statements (see the README), not calls; every dtype above in their \
         values; opsets 13-23.\n\n\
         | operator | DSL | inputs | attributes |\n\
         |---|---|---|---|\n\
         | If | `let (a, b) = if c { ...; return (x, y); } else { ...; return (u, v); };` | cond (bool, one element) | then_branch, else_branch (graphs; equal output types and shapes) |\n\
         | Loop | `let (h, hs) = for i in 0..n with (h = h0) { ...; return (h2, y); };` | M (the literal n, i64 initializer), cond omitted, carried initial values | body (graph: iteration number, condition, carried values -> condition, carried values, per-step outputs) |\n\
         | Scan | `let (h, ys) = for (a_t, b_t) in (a, b) with (h = h0) { ...; return (h2, y); };` | carried initial values, scanned tensors (fixed first dimension) | body (graph), num_scan_inputs; axes 0, forward directions (the defaults) |\n",
    );
    s.push_str(
        "\n## Evaluated or rewritten by the importer\n\n\
         `import(...)` also takes these operators of a file. The first are evaluated at \
         compile time, so their inputs must be known then (initializers, or computed \
         from the dims `dims(...)`/`shapes(...)` fix); the others become registered \
         operators.\n\n\
         | operator | how | result |\n|---|---|---|\n",
    );
    for (op, what) in tinyonnx_core::import::EVALUATED {
        s.push_str(&format!("| {op} | evaluated at compile time | {what} |\n"));
    }
    for (op, what) in tinyonnx_core::import::REWRITTEN {
        s.push_str(&format!("| {op} | rewritten | {what} |\n"));
    }
    s.push_str(&node_suite_markdown());
    s
}

/// The ONNX backend node test suite's results per operator, from the checked-in
/// expectations `tests/node_suite.tsv` (which `cargo xtask test` holds the code to).
fn node_suite_markdown() -> String {
    use std::collections::BTreeMap;
    let tsv = include_str!("../../tests/node_suite.tsv");
    // operator -> (cases, pass, refused, wrong, disputed)
    let mut per_op: BTreeMap<&str, [usize; 5]> = BTreeMap::new();
    let mut totals = [0usize; 6];
    for line in tsv.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let (ops, status) = (
            f.get(1).copied().unwrap_or(""),
            f.get(3).copied().unwrap_or(""),
        );
        let k = match status {
            "pass" => 1,
            "refused" => 2,
            "wrong" => 3,
            "disputed" => 4,
            _ => {
                totals[5] += 1;
                continue;
            }
        };
        totals[0] += 1;
        totals[k] += 1;
        for op in ops.split(',').filter(|o| !o.is_empty()) {
            let row = per_op.entry(op).or_default();
            row[0] += 1;
            row[k] += 1;
        }
    }
    let mut s = format!(
        "\n## ONNX backend node tests\n\n\
         `cargo xtask node-suite` (part of `cargo xtask test`) imports every case of the ONNX \
         backend node test suite (onnx 1.23.2) whose operators are all listed here, at the \
         case's own opset, and compares every output with the suite's stored one (rtol 1e-3, \
         atol 1e-7; integers and bools exactly). Per case, status and reason: \
         `tests/node_suite.tsv`. Of {} cases using only listed operators: {} pass, {} are \
         refused with a reason, {} give a wrong answer, {} are disputed (wrong by that \
         tolerance, where the stored output is the inexact one: the reason in the file) \
         ({} more cases use operators not listed).\n\n\
         | operator | cases | pass | refused | wrong | disputed |\n|---|---:|---:|---:|---:|---:|\n",
        totals[0], totals[1], totals[2], totals[3], totals[4], totals[5]
    );
    for (op, [n, pass, refused, wrong, disputed]) in per_op {
        s.push_str(&format!(
            "| {op} | {n} | {pass} | {refused} | {wrong} | {disputed} |\n"
        ));
    }
    s
}

/// The opset a case runs at when its body does not set one: 18, or the operator's first
/// opset when that is later.
pub fn case_opset(op: &OpSchema) -> i64 {
    op.since_opset.max(18)
}

/// Every cross-check case of the registry as `(operator, model name, model source)`:
/// `<Op>Case<i>`, with `opset = N;` added when the body does not set one.
pub fn all_cases() -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    for op in REGISTRY {
        for (i, body) in (op.cases)(op).into_iter().enumerate() {
            let name = format!("{}Case{i}", op.op_type);
            let body = if body.trim_start().starts_with("opset") {
                body
            } else {
                format!("opset = {}; {body}", case_opset(op))
            };
            out.push((
                op.op_type,
                name.clone(),
                format!("model {name} {{ {body} }}"),
            ));
        }
    }
    out
}

/// `tests/src/cases.rs`: every case as an `onnx_model!` and the `CASES` table the
/// cross-check runs (written by `cargo xtask codegen`; a test fails when it is stale).
pub fn cases_rs() -> String {
    let mut s = String::from(
        "//! Generated by `cargo xtask codegen` from the `cases` of every operator in the\n\
         //! registry (`core/src/ops/`); do not edit. A test fails when this file is stale.\n\n\
         use tinyonnx_examples::{Example, example};\n\n\
         include!(\"case_models.rs\");\n\n",
    );
    s.push_str("/// Every case: the operator it is for, and the model.\npub const CASES: &[(&str, Example)] = &[\n");
    for (op, name, _) in &all_cases() {
        s.push_str(&format!("    (\"{op}\", example::<{name}>()),\n"));
    }
    s.push_str("];\n");
    s
}

/// `tests/src/case_models.rs`: the case models alone, `no_std` code that `cases.rs` and
/// the board firmware's NaN check (`examples/firmware/cortex-m4f/src/bin/specials.rs`)
/// both include, and `every_case!`, which hands a macro every model's name.
pub fn case_models_rs() -> String {
    let mut s = String::from(
        "// Generated by `cargo xtask codegen` from the `cases` of every operator in the\n\
         // registry (`core/src/ops/`); do not edit. A test fails when this file is stale.\n\n",
    );
    let cases = all_cases();
    for (op, _, source) in &cases {
        s.push_str(&format!(
            "::tinyonnx::onnx_model! {{\n    /// A cross-check case of `{op}`.\n    pub {source}\n}}\n\n"
        ));
    }
    s.push_str("/// Calls `$m!` with the names of all case models.\n#[allow(unused_macros)]\nmacro_rules! every_case {\n    ($m:ident) => {\n        $m! {\n");
    for (_, name, _) in &cases {
        s.push_str(&format!("            {name},\n"));
    }
    s.push_str("        }\n    };\n}\n");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn supported_ops_md_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../SUPPORTED_OPS.md");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        let generated = super::supported_ops_markdown();
        assert!(
            on_disk == generated,
            "SUPPORTED_OPS.md is stale: run `cargo xtask codegen` and commit the result"
        );
    }

    #[test]
    fn every_operator_has_cases_that_compile() {
        let cases = super::all_cases();
        for op in tinyonnx_core::ops::REGISTRY {
            assert!(
                cases.iter().any(|(o, _, _)| *o == op.op_type),
                "{} has no cross-check cases",
                op.op_type
            );
        }
        let mut failures = Vec::new();
        for (_, name, source) in &cases {
            let tokens: proc_macro2::TokenStream = source.parse().expect("a case tokenizes");
            match tinyonnx_core::compile(tokens) {
                Err(e) => {
                    let msgs: Vec<String> = e.errors.iter().map(ToString::to_string).collect();
                    failures.push(format!("{name}: {}", msgs.join("; ")));
                }
                Ok(c) if !c.warnings.is_empty() => {
                    failures.push(format!("{name}: warnings {:?}", c.warnings));
                }
                Ok(_) => {}
            }
        }
        assert!(
            failures.is_empty(),
            "cases that do not compile:\n{}",
            failures.join("\n")
        );
    }

    #[test]
    fn generated_cases_are_fresh() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/src/cases.rs");
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == super::cases_rs(),
            "tests/src/cases.rs is stale: run `cargo xtask codegen` and commit the result"
        );
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/src/case_models.rs");
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == super::case_models_rs(),
            "tests/src/case_models.rs is stale: run `cargo xtask codegen` and commit the result"
        );
    }
}
