tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = Reshape(x, [4, 2]);
    }
}

fn main() {}
