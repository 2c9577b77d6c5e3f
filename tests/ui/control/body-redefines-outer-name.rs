tinyonnx::onnx_model! {
    model M {
        input h0: f32[1, 4];
        let t = Relu(h0);
        let h = for i in 0..3 with (h = h0) {
            let t = Tanh(h);
            return t;
        };
        output o = Identity(h);
    }
}

fn main() {}
