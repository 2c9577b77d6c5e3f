tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        input c: bool[];
        let (y, z) = if c {
            return (Relu(x), x);
        } else {
            return Neg(x);
        };
        output o = Identity(y);
    }
}

fn main() {}
