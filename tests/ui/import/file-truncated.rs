// Paths are relative to the compiled crate's Cargo.toml (for this test, trybuild's
// project under target/tests/trybuild/).
tinyonnx::onnx_model! {
    pub model Net = import("../../../../tests/ui/import/truncated.onnx");
}

fn main() {}
