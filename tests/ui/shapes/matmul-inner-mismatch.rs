tinyonnx::onnx_model! {
    model M {
        input x: f32[batch, 10, 64];
        weight w: f32[32, 64] = zeros;
        output y = MatMul(x, w);
    }
}

fn main() {}
