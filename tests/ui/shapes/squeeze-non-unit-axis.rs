tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4, 1];
        output y = Squeeze(x, [1]);
    }
}

fn main() {}
