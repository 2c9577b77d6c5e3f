tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        let h = Relu(x);
        let h = Tanh(x);
        output y = Sigmoid(h);
    }
}

fn main() {}
