tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        input s: i64[2];
        output y = Reshape(x, s);
    }
}

fn main() {}
