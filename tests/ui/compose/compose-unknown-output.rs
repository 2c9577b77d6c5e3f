tinyonnx::onnx_model! {
    model A {
        input x: f32[4];
        output y = Relu(x);
    }
}

tinyonnx::onnx_model! {
    model B {
        input u: f32[4];
        output v = Tanh(u);
    }
}

tinyonnx::onnx_model! {
    model C = compose(A, B, map = [("z", "u")]);
}

fn main() {}
