tinyonnx::onnx_model! {
    model M {
        input a: f32[2, 3];
        input b: f32[3];
        input c: f32[4];
        output y = Min(a, b, c);
    }
}

fn main() {}
