tinyonnx::onnx_model! {
    model M {
        opset = 13;
        input x: i8[2, 3];
        input z: i8[3];
        output y = Add(x, z);
    }
}

fn main() {}
