tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 6, 8, 8];
        weight w: f32[8, 2, 3, 3] = zeros;
        output y = Conv(x, w, group = 4);
    }
}

fn main() {}
