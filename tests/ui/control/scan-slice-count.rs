tinyonnx::onnx_model! {
    model M {
        input a: f32[5, 2];
        input b: f32[5, 2];
        let ys = for a_t in (a, b) {
            return Relu(a_t);
        };
        output o = Identity(ys);
    }
}

fn main() {}
