tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        output y = conv2d(x, 8, 3, padding = 1);
    }
}

fn main() {}
