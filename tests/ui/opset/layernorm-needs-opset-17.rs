tinyonnx::onnx_model! {
    model M {
        opset = 15;
        input x: f32[2, 64];
        weight s: f32[64] = ones;
        output y = LayerNormalization(x, s);
    }
}

fn main() {}
