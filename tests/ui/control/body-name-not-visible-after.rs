tinyonnx::onnx_model! {
    model M {
        input h0: f32[1, 4];
        let h = for i in 0..3 with (h = h0) {
            let inner = Tanh(h);
            return inner;
        };
        output o = Add(h, inner);
    }
}

fn main() {}
