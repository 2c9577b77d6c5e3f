tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 6];
        output y = Linear(x, 8);
    }
}

fn main() {}
