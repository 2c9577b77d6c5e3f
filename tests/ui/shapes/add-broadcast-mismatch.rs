tinyonnx::onnx_model! {
    model M {
        input a: f32[2, 3];
        input b: f32[4];
        output y = Add(a, b);
    }
}

fn main() {}
