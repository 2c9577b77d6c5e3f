tinyonnx::onnx_model! {
    model M {
        opset = 18;
        input x: f32[4];
        output y = Cast(x, to = f8e4m3fn);
    }
}

fn main() {}
