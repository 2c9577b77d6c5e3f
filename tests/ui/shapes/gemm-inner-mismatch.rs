tinyonnx::onnx_model! {
    model M {
        input x: f32[batch, 100];
        weight w: f32[784, 256] = zeros;
        output y = Gemm(x, w);
    }
}

fn main() {}
