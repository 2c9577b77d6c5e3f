tinyonnx::onnx_model! {
    model M {
        input x: f32[5, 1, 3];
        weight w: f32[1, 8, 3] = zeros;
        weight r: f32[1, 4, 4] = zeros;
        let (y, _) = RNN(x, w, r, hidden_size = 4);
        output y;
    }
}

fn main() {}
