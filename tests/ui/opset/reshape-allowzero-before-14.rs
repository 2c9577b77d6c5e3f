tinyonnx::onnx_model! {
    model M {
        opset = 13;
        input x: f32[2, 6];
        output y = Reshape(x, [3, 4], allowzero = 1);
    }
}

fn main() {}
