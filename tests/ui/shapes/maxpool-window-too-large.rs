tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 4, 4];
        output y = MaxPool(x, kernel_shape = [5, 5]);
    }
}

fn main() {}
