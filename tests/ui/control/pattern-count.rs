tinyonnx::onnx_model! {
    model M {
        input a: f32[5, 2];
        let (x, y) = for a_t in a {
            return Relu(a_t);
        };
        output o = Identity(x);
    }
}

fn main() {}
