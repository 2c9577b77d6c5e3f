tinyonnx::onnx_model! {
    model M {
        input a: f32[5, 2];
        input b: f32[4, 2];
        let (ys) = for (a_t, b_t) in (a, b) {
            return Add(a_t, b_t);
        };
        output o = Identity(ys);
    }
}

fn main() {}
