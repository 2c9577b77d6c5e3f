tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 1, 3];
        weight w: f32[1, 9, 3] = zeros;
        weight r: f32[1, 9, 3] = zeros;
        let (y, _) = GRU(x, w, r, hidden_size = 3, clip = -0.5);
        output y;
    }
}

fn main() {}
