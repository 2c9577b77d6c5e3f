tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = Reshape(x, [3.0, 2.0]);
    }
}

fn main() {}
