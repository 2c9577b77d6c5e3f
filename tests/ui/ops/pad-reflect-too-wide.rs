tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = Pad(x, [0, 3, 0, 0], mode = "reflect");
    }
}

fn main() {}
