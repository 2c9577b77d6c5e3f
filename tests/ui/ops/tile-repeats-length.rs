tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = Tile(x, [2]);
    }
}

fn main() {}
