tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        weight w: f32[2, 4] = zeros;
        output y = Gemm(x, w, transb = 1);
    }
}

fn main() {}
