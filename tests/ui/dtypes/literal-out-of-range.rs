tinyonnx::onnx_model! {
    model M {
        input x: i8[3];
        output y = Add(x, [1, 300, 2]);
    }
}

fn main() {}
