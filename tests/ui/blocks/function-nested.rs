tinyonnx::onnx_model! {
    model M {
        input x: f32[4];
        block outer(x) {
            function inner(x) {
                return Relu(x);
            }
            return Relu(x);
        }
        output y = outer(x);
    }
}

fn main() {}
