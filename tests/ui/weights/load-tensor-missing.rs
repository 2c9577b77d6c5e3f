// Paths are relative to the compiled crate's Cargo.toml (for this test, trybuild's
// project under target/tests/trybuild/).
tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 64];
        weight w: f32[64, 32] = load("../../../../examples/data/digits/fc1.npz", name = "fc1.wieght");
        output y = MatMul(x, w);
    }
}

fn main() {}
