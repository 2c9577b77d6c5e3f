tinyonnx::onnx_model! {
    model M {
        input x: bool[2];
        weight w: bool[2] = [true, 2];
        output y = And(x, w);
    }
}

fn main() {}
