tinyonnx::onnx_model! {
    model M {
        input x: f32;
        output y = Relu(x);
    }
}

fn main() {}
