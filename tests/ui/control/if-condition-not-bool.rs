tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        let y = if ReduceSum(x, keepdims = 0) {
            return Relu(x);
        } else {
            return Neg(x);
        };
        output o = Identity(y);
    }
}

fn main() {}
