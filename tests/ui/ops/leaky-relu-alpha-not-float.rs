tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = LeakyRelu(x, alpha = "big");
    }
}

fn main() {}
