tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        output y = Conv2d(x, 8, 3);
    }
}

fn main() {}
