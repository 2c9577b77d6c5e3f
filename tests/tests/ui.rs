//! Compile-error tests: every `tests/ui/<area>/<construct>-<problem>.rs` must fail to
//! compile with exactly the reviewed `.stderr` beside it.

/// The rustc whose diagnostics the `.stderr` files were reviewed with.
const PINNED: &str = "rustc 1.95.";

#[test]
fn ui() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if !version.starts_with(PINNED) {
        println!("skipping the ui tests: their .stderr files are for {PINNED}x, this is {version}");
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*/*.rs");
    drop(t);
    no_diagnostic_points_into_generated_code();
}

/// Errors in generated code are bugs: every reviewed diagnostic must point at the user's
/// tokens, never at tokens `onnx_model!` made up. rustc marks the latter with a note that
/// the error "originates in the macro `onnx_model`".
fn no_diagnostic_points_into_generated_code() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    let mut checked = 0;
    for area in std::fs::read_dir(&dir).unwrap() {
        for case in std::fs::read_dir(area.unwrap().path()).unwrap() {
            let path = case.unwrap().path();
            if path.extension().is_some_and(|e| e == "stderr") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    !text.contains("originates in the macro `onnx_model`")
                        && !text.contains("originates in the macro `tinyonnx::onnx_model`"),
                    "{} has a diagnostic inside the macro's generated code:\n{text}",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 60,
        "expected at least 60 reviewed .stderr files, found {checked}"
    );
}
