tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        weight w: f32[4, 4] = zeros;
        block proj(x) {
            return MatMul(x, w);
        }
        output y = proj(x);
    }
}

fn main() {}
