tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        output y = Softmax(x, axis = 1, axis = -1);
    }
}

fn main() {}
