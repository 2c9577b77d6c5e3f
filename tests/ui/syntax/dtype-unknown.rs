tinyonnx::onnx_model! {
    model M {
        input x: f23[1, 4];
        output y = Relu(x);
    }
}

fn main() {}
