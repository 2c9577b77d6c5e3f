tinyonnx::onnx_model! {
    model M {
        input h0: f32[1, 4];
        weight w: f32[4, 3] = glorot_uniform(seed = 1);
        let (h, hs) = for i in 0..3 with (h = h0) {
            let next = MatMul(h, w);
            return (next, next);
        };
        output o = Identity(hs);
    }
}

fn main() {}
