tinyonnx::onnx_model! {
    model M {
        input x: f32[batch, 2];
        weight w: f32[batch, 2] = zeros;
        output y = Add(x, w);
    }
}

fn main() {}
