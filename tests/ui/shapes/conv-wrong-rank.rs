tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 64];
        weight w: f32[8, 1, 3, 3] = zeros;
        output y = Conv(x, w);
    }
}

fn main() {}
