tinyonnx::onnx_model! {
    model M {
        input h0: f32[1, 4];
        let h = for i in 1..3 with (h = h0) {
            return Relu(h);
        };
        output o = Identity(h);
    }
}

fn main() {}
