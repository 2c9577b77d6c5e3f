tinyonnx::onnx_model! {
    model A {
        opset = 17;
        optimize = size;
        input x: f32[4];
        output y = Relu(x);
    }
}

tinyonnx::onnx_model! {
    model B {
        opset = 17;
        winograd = always;
        input u: f32[4];
        output v = Tanh(u);
    }
}

tinyonnx::onnx_model! {
    model C = compose(A, B, map = [("y", "u")]);
}

fn main() {}
