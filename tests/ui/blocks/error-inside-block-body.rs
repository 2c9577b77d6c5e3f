tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        block unit(x, ch) {
            let c = conv2d(x, ch, 3, pad = 1);
            return Relu(Add(c, x));
        }
        output y = unit(x, 8);
    }
}

fn main() {}
