tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = Expand(x, [4, 3, 2]);
    }
}

fn main() {}
