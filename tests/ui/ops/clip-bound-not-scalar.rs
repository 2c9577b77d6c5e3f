tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        weight lo: f32[3] = zeros;
        output y = Clip(x, lo);
    }
}

fn main() {}
