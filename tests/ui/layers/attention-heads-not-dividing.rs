tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 10, 64];
        output y = multi_head_attention(x, 5);
    }
}

fn main() {}
