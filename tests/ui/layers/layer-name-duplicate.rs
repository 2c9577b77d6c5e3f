tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        let a = linear(x, 4, name = "fc");
        output y = linear(a, 2, name = "fc");
    }
}

fn main() {}
