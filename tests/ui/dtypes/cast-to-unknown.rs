tinyonnx::onnx_model! {
    model M {
        input x: f32[4];
        output y = Cast(x, to = 8);
    }
}

fn main() {}
