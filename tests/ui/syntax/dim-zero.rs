tinyonnx::onnx_model! {
    model M {
        input x: f32[0, 4];
        output y = Softmax(x);
    }
}

fn main() {}
