tinyonnx::onnx_model! {
    model M {
        input h0: f32[1, 4];
        input c0: f32[1, 4];
        let (h, c) = for i in 0..3 with (h = h0, c = c0) {
            return Relu(h);
        };
        output o = Identity(h);
    }
}

fn main() {}
