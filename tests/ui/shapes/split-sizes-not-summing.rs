tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 6];
        let (a, b) = Split(x, [2, 3], axis = 1);
        output a;
        output b;
    }
}

fn main() {}
