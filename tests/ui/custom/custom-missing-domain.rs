struct K;
impl tinyonnx::CustomKernel for K {
    fn run(_: &[tinyonnx::TensorRef<'_>], _: &mut [tinyonnx::TensorMut<'_>]) {}
}

tinyonnx::onnx_model! {
    model M {
        custom Twice(x) -> (y, z) {
            kernel = K;
            y = w;
        }
        input x: f32[3];
        output y = Twice(x);
    }
}

fn main() {}
