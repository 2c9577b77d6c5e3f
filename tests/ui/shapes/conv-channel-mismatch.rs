tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        weight w: f32[16, 4, 3, 3] = zeros;
        output y = Conv(x, w);
    }
}

fn main() {}
