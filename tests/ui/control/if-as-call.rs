tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        input c: bool[];
        output o = If(c, x);
    }
}

fn main() {}
