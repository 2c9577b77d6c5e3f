tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 10, 64];
        weight s: f32[64] = ones;
        output y = LayerNormalization(x, s, axis = 3);
    }
}

fn main() {}
