//! `SUPPORTED_OPS.md` must be what the registry generates.

#[test]
fn supported_ops_md_is_up_to_date() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../SUPPORTED_OPS.md");
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    let generated = tinyonnx_core::ops::supported_ops_markdown();
    assert!(
        on_disk == generated,
        "SUPPORTED_OPS.md is stale: run `cargo xtask codegen` and commit the result"
    );
}

#[test]
fn every_operator_has_cases_that_compile() {
    let cases = tinyonnx_core::ops::all_cases();
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
        checked_in == tinyonnx_core::ops::cases_rs(),
        "tests/src/cases.rs is stale: run `cargo xtask codegen` and commit the result"
    );
}
