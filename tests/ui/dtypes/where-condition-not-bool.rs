tinyonnx::onnx_model! {
    model M {
        input c: f32[2, 3];
        input x: f32[2, 3];
        output y = Where(c, x, x);
    }
}

fn main() {}
