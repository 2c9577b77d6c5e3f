tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        weight s: f32[4] = ones;
        weight b: f32[3] = zeros;
        output y = BatchNormalization(x, s, b, b, s);
    }
}

fn main() {}
