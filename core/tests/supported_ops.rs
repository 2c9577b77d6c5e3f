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
