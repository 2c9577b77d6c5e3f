tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        block again(x) {
            return again(Relu(x));
        }
        output y = again(x);
    }
}

fn main() {}
