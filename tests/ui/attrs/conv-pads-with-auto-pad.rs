tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 3, 8, 8];
        weight w: f32[8, 3, 3, 3] = zeros;
        output y = Conv(x, w, auto_pad = "SAME_UPPER", pads = [1, 1, 1, 1]);
    }
}

fn main() {}
