tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 2];
        weight w: f32[2, 2] = normal(mean = 0.0, stddev = 1.0, seed = 1);
        output y = MatMul(x, w);
    }
}

fn main() {}
