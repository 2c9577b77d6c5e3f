tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 10, 64];
        weight s: f32[32] = ones;
        output y = LayerNormalization(x, s);
    }
}

fn main() {}
