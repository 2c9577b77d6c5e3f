tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 2, 4, 4];
        weight w: f32[2, 3, 3, 3] = zeros;
        output y = ConvTranspose(x, w, strides = [2, 2], output_padding = [2, 0]);
    }
}

fn main() {}
