tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        block b(x) {
            input z: f32[1, 4];
            return Add(x, z);
        }
        output y = b(x);
    }
}

fn main() {}
