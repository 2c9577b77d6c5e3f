tinyonnx::onnx_model! {
    model M {
        input x: i64[1, 4];
        output y = Relu(x);
    }
}

fn main() {}
