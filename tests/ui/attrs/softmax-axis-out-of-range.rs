tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        output y = Softmax(x, axis = 2);
    }
}

fn main() {}
