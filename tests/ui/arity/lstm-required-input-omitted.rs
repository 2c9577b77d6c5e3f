tinyonnx::onnx_model! {
    model M {
        input x: f32[5, 1, 4];
        weight r: f32[1, 12, 3] = zeros;
        let (y, h, c) = LSTM(x, _, r, hidden_size = 3);
        output y;
    }
}

fn main() {}
