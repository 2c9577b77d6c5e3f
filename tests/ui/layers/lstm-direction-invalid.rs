tinyonnx::onnx_model! {
    model M {
        input x: f32[5, 1, 4];
        let (y, h, c) = lstm(x, 3, direction = "both");
        output y;
    }
}

fn main() {}
