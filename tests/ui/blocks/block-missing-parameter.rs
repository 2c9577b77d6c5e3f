tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        block conv_relu(x, ch) {
            return Relu(conv2d(x, ch, 3, pad = 1));
        }
        output y = conv_relu(x);
    }
}

fn main() {}
