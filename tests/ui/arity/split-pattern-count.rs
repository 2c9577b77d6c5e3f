tinyonnx::onnx_model! {
    model M {
        opset = 18;
        input x: f32[2, 6];
        let (a, b) = Split(x, num_outputs = 3, axis = 1);
        output a;
        output b;
    }
}

fn main() {}
