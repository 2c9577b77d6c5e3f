tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = LogSoftmax(x, axis = 2);
    }
}

fn main() {}
