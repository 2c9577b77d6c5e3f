tinyonnx::onnx_model! {
    model M {
        opset = 20;
        input x: f32[1, 4];
        output y = Gelu(x, approximate = "fast");
    }
}

fn main() {}
