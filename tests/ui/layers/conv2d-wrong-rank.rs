tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 64];
        output y = conv2d(x, 8, 3);
    }
}

fn main() {}
