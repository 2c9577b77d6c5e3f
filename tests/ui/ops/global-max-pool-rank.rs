tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        output y = GlobalMaxPool(x);
    }
}

fn main() {}
