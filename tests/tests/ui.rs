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
}
