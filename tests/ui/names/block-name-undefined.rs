tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        block scale(x, k) {
            return Mul(x, k2);
        }
        output y = scale(x, 2.0);
    }
}

fn main() {}
