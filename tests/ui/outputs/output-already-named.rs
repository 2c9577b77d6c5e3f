tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        let h = Relu(x);
        output y = h;
    }
}

fn main() {}
