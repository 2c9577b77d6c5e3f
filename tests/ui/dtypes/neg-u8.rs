tinyonnx::onnx_model! {
    model M {
        input x: u8[4];
        output y = Neg(x);
    }
}

fn main() {}
