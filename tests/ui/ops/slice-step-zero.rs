tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = Slice(x, [0], [2], [1], [0]);
    }
}

fn main() {}
