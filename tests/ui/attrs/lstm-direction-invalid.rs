tinyonnx::onnx_model! {
    model M {
        input x: f32[5, 1, 4];
        weight w: f32[1, 12, 4] = zeros;
        weight r: f32[1, 12, 3] = zeros;
        let (y, h, c) = LSTM(x, w, r, hidden_size = 3, direction = "backward");
        output y;
    }
}

fn main() {}
