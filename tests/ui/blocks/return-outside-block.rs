tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        return Relu(x);
    }
}

fn main() {}
