tinyonnx::onnx_model! {
    model M {
        input x: i32[2, 5];
        output y = ArgMax(x, axis = 2);
    }
}

fn main() {}
