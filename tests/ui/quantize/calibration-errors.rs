// Calibration inputs that cannot calibrate the model: a missing file, samples of the
// wrong shape, an operator the float run does not evaluate, and more samples than the
// compiler spends time on (refused before any is run).

tinyonnx::onnx_model! {
    model Missing {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/no_such_file.npy");
        input x: f32[1, 64];
        output y = linear(x, 10);
    }
}

tinyonnx::onnx_model! {
    model WrongShape {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy");
        input x: f32[1, 32];
        output y = linear(x, 10);
    }
}

tinyonnx::onnx_model! {
    model NotEvaluated {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy");
        input x: f32[1, 64];
        output y = linear(Erf(x), 10);
    }
}

tinyonnx::onnx_model! {
    model TooMuchWork {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy");
        input x: f32[1, 64];
        weight w: f32[4096, 1, 8, 8] = uniform(low = -0.1, high = 0.1, seed = 1);
        output y = Conv(Reshape(x, [1, 1, 8, 8]), w, pads = [7, 7, 7, 7]);
    }
}

fn main() {}
