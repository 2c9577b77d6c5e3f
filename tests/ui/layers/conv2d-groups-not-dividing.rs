tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 6, 8, 8];
        output y = conv2d(x, 8, 3, groups = 4);
    }
}

fn main() {}
