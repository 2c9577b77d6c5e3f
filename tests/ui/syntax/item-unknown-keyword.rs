tinyonnx::onnx_model! {
    model M {
        inptu x: f32[1, 4];
        output y = Relu(x);
    }
}

fn main() {}
