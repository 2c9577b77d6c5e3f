tinyonnx::onnx_model! {
    model M {
        input x: i8[3];
        weight w: i8[3] = [1, 200, -3];
        output y = Add(x, w);
    }
}

fn main() {}
