tinyonnx::onnx_model! {
    model M {
        opset = 18;
        input x: f32[2, 3];
        output y = Pad(x, [0, 1, 0, 1], mode = "wrap");
    }
}

fn main() {}
