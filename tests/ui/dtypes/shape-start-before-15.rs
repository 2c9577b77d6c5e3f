tinyonnx::onnx_model! {
    model M {
        opset = 14;
        input x: f32[2, 5, 7];
        output y = Shape(x, start = 1);
    }
}

fn main() {}
