tinyonnx::onnx_model! {
    model M {
        opset = 17;
        input x: f32[2, 3];
        output y = ReduceMax(x, [1]);
    }
}

fn main() {}
