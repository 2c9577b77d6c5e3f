tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        input c: bool[];
        let y = if c {
            return Relu(x);
        };
        output o = Identity(y);
    }
}

fn main() {}
