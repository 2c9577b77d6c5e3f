tinyonnx::onnx_model! {
    model M {
        input a: f32[1, 3, 4];
        input b: f32[1, 2, 5];
        output y = Concat(a, b, axis = 1);
    }
}

fn main() {}
