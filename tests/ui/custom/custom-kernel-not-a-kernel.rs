struct NotAKernel;

tinyonnx::onnx_model! {
    model M {
        custom Twice(x) -> y {
            domain = "com.example";
            kernel = NotAKernel;
            y = x;
        }
        input x: f32[3];
        output y = Twice(x);
    }
}

fn main() {}
