tinyonnx::onnx_model! {
    model M {
        input x: f32[2, 3];
        weight u: f32[1, 2] = zeros;
        output y = ScatterElements(x, [[1, 1]], u, axis = 1);
    }
}

fn main() {}
