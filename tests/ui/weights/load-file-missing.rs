tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 64];
        weight w: f32[64, 32] = load("weights/missing.npz", name = "fc1.weight");
        output y = MatMul(x, w);
    }
}

fn main() {}
