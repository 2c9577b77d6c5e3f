// Layers that cannot be quantized as asked: `keep` naming no layer (with the nearest
// name), a Gemm whose A is transposed, and nothing left to quantize.

tinyonnx::onnx_model! {
    model KeepUnknown {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy", keep = ["fc3"]);
        input x: f32[1, 64];
        output y = linear(relu(linear(x, 16, name = "fc1")), 10, name = "fc2");
    }
}

tinyonnx::onnx_model! {
    model Transposed {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy");
        input x: f32[1, 64];
        weight w: f32[64, 10] = uniform(low = -0.1, high = 0.1, seed = 1);
        output y = Gemm(Transpose(x), w, transA = 1);
    }
}

tinyonnx::onnx_model! {
    model NothingLeft {
        opset = 17;
        quantize = int8(calibration = "../../../../examples/data/digits/x_calib.npy", keep = ["fc1"]);
        input x: f32[1, 64];
        output y = Softmax(linear(x, 10, name = "fc1"));
    }
}

fn main() {}
