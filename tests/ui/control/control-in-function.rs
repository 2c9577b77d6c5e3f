tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        input c: bool[];
        function pick(x, c) {
            let y = if c {
                return Relu(x);
            } else {
                return Neg(x);
            };
            return y;
        }
        output o = pick(x, c);
    }
}

fn main() {}
