// Paths are relative to the compiled crate's Cargo.toml (for this test, trybuild's
// project under target/tests/trybuild/).
tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 32];
        weight w: f32[32, 10] = load("../../../../examples/data/digits/fc2.safetensors", name = "fc2.weight");
        output y = MatMul(x, w);
    }
}

fn main() {}
