tinyonnx::onnx_model! {
    model M {
        opset = 18;
        input x: f32[1, 3, 8, 8];
        output y = AveragePool(x, kernel_shape = [2, 2], dilations = [2, 2]);
    }
}

fn main() {}
