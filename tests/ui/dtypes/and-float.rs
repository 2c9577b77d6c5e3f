tinyonnx::onnx_model! {
    model M {
        input a: bool[4];
        input b: f32[4];
        output y = And(a, b);
    }
}

fn main() {}
