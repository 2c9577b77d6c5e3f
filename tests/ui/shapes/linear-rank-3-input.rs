tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 10, 64];
        output y = linear(x, 8);
    }
}

fn main() {}
