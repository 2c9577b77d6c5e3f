tinyonnx::onnx_model! {
    pub struct M {
        input x: f32[1, 4];
    }
}

fn main() {}
