tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        weight w: f32[4, 2] = zeros;
        weight b: f32[2] = zeros;
        output y = Gemm(x, w, b, b);
    }
}

fn main() {}
