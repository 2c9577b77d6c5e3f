// Three independent mistakes: all three are reported in one compile.
tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        weight w: f32[3, 2] = zeros;
        let a = Relu(x, x);
        let b = MatMul(x, w);
        output y = Softmax(x, axes = 1);
    }
}

fn main() {}
