tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        weight m: bool[4] = zeros;
        output y = Relu(x);
    }
}

fn main() {}
