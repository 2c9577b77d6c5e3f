tinyonnx::onnx_model! {
    model M {
        input x: f32[5, 1, 3];
        weight w: f32[1, 12, 3] = zeros;
        weight r: f32[1, 12, 4] = zeros;
        let (y, _) = GRU(x, w, r);
        output y;
    }
}

fn main() {}
