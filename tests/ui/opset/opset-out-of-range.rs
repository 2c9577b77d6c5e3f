tinyonnx::onnx_model! {
    model M {
        opset = 9;
        input x: f32[1, 4];
        output y = Relu(x);
    }
}

fn main() {}
