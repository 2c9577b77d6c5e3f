tinyonnx::onnx_model! {
    model A {
        input x: f32[4];
        output y = Relu(x);
    }
}

tinyonnx::onnx_model! {
    model C = compose(A, Missing, map = [("y", "u")]);
}

fn main() {}
