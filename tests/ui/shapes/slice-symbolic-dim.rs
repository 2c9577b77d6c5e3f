tinyonnx::onnx_model! {
    model M {
        input x: f32[batch, 3];
        output y = Slice(x, [0], [1]);
    }
}

fn main() {}
