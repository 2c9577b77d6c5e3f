tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        output y = BatchNorm2d(x);
    }
}

fn main() {}
