tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        weight w: f32[4, 2];
        output y = MatMul(x, w);
    }
}

fn main() {}
