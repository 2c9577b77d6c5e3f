tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3, 4];
        output y = Transpose(x, perm = [0, 2, 2]);
    }
}

fn main() {}
