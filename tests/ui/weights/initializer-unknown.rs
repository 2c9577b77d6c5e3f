tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 2];
        weight w: f32[2, 2] = xavier(seed = 1);
        output y = MatMul(x, w);
    }
}

fn main() {}
