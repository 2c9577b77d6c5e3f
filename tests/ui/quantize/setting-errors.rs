// The `quantize` setting's own mistakes: an unknown scheme, no calibration, a positional
// argument, set twice or in a block.

tinyonnx::onnx_model! {
    model Unknown {
        opset = 17;
        quantize = int4(calibration = "../../../../examples/data/digits/x_calib.npy");
        input x: f32[1, 64];
        output y = linear(x, 10);
    }
}

tinyonnx::onnx_model! {
    model NoCalibration {
        opset = 17;
        quantize = int8(keep = ["fc1"]);
        input x: f32[1, 64];
        output y = linear(x, 10, name = "fc1");
    }
}

tinyonnx::onnx_model! {
    model Positional {
        opset = 17;
        quantize = int8("../../../../examples/data/digits/x_calib.npy");
        input x: f32[1, 64];
        output y = linear(x, 10);
    }
}

tinyonnx::onnx_model! {
    model Twice {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy");
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy");
        input x: f32[1, 64];
        block b(x) {
            quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy");
            return Relu(x);
        }
        output y = linear(b(x), 10);
    }
}

fn main() {}
