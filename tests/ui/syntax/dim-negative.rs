tinyonnx::onnx_model! {
    model M {
        input x: f32[-1, 4];
        output y = Relu(x);
    }
}

fn main() {}
