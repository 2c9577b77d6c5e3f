// Paths are relative to the compiled crate's Cargo.toml (for this test, trybuild's
// project under target/tests/trybuild/).
tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        output y = linear(x, 2, weights = "../../../../tests/ui/weights/corrupt.safetensors");
    }
}

fn main() {}
