tinyonnx::onnx_model! {
    model M {
        input a: f32[batch, 2];
        let ys = for a_t in a {
            return Relu(a_t);
        };
        output o = Identity(ys);
    }
}

fn main() {}
