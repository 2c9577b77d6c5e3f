tinyonnx::onnx_model! {
    model M {
        opset = 18;
        input x: f32[2, 3];
        output y = ReduceMean(x, axes = [1]);
    }
}

fn main() {}
