tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = Gather(x, [0, 3], axis = 1);
    }
}

fn main() {}
