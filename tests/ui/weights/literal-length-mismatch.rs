tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 2];
        weight w: f32[2, 2] = [[1.0, 2.0], [3.0]];
        output y = MatMul(x, w);
    }
}

fn main() {}
