tinyonnx::onnx_model! {
    model M {
        opset = 18;
        input x: f32[2, 3];
        output y = ReduceSum(x, [2]);
    }
}

fn main() {}
