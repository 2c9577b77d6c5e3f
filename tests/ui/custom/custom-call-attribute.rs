struct K;
impl tinyonnx::CustomKernel for K {
    fn run(_: &[tinyonnx::TensorRef<'_>], _: &mut [tinyonnx::TensorMut<'_>]) {}
}

tinyonnx::onnx_model! {
    model M {
        custom Twice(x) -> y {
            domain = "com.example";
            kernel = K;
            y = x;
        }
        input x: f32[3];
        output y = Twice(x, alpha = 2.0);
    }
}

fn main() {}
