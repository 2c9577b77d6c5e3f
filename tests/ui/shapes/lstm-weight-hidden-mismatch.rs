tinyonnx::onnx_model! {
    model M {
        input x: f32[20, 1, 16];
        weight w: f32[1, 128, 16] = zeros;
        weight r: f32[1, 128, 32] = zeros;
        let (y, h, c) = LSTM(x, w, r, hidden_size = 16);
        output y;
    }
}

fn main() {}
