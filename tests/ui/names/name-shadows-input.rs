tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        let x = Relu(x);
        output y = Sigmoid(x);
    }
}

fn main() {}
