tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        input z: f64[1, 4];
        output y = Add(x, z);
    }
}

fn main() {}
