tinyonnx::onnx_model! {
    model M {
        input x: f32[5, 1, 4];
        let (y, h) = lstm(x, 3);
        output y;
    }
}

fn main() {}
