use tinyonnx::onnx_model;

onnx_model! {
    /// LSTM classifier, time first: `[20, batch, 16]` (batch 4 on the device) -> LSTM
    /// hidden 32 -> Y_h -> Squeeze -> Gemm 32 -> 5 -> Softmax.
    pub model LstmClassifier {
        opset = 17;
        dim batch = 4;
        input x: f32[20, batch, 16];
        let (_, h, _) = lstm(x, 32, name = "lstm");
        let last = Squeeze(h, [0]);
        output probs = softmax(linear(last, 5, name = "fc"), axis = -1);
    }
}

onnx_model! {
    /// The LSTM classifier for batch-first data: a Transpose (perm [1, 0, 2]) in front.
    pub model LstmBatchFirst {
        opset = 17;
        dim batch = 4;
        input x: f32[batch, 20, 16];
        let time_first = Transpose(x, perm = [1, 0, 2]);
        let (_, h, _) = lstm(time_first, 32, name = "lstm");
        let last = Squeeze(h, [0]);
        output probs = softmax(linear(last, 5, name = "fc"), axis = -1);
    }
}

onnx_model! {
    /// GRU classifier, the LSTM classifier's twin: `[20, batch, 16]` (batch 4 on the
    /// device) -> GRU hidden 32 (`linear_before_reset = 1`, as PyTorch and Keras export
    /// theirs) -> Y_h -> Squeeze -> Gemm 32 -> 5 -> Softmax.
    pub model GruClassifier {
        opset = 17;
        dim batch = 4;
        input x: f32[20, batch, 16];
        weight w: f32[1, 96, 16] = uniform(low = -0.18, high = 0.18, seed = 21);
        weight r: f32[1, 96, 32] = uniform(low = -0.18, high = 0.18, seed = 22);
        weight b: f32[1, 192] = uniform(low = -0.18, high = 0.18, seed = 23);
        let (_, h) = GRU(x, w, r, b, hidden_size = 32, linear_before_reset = 1);
        let last = Squeeze(h, [0]);
        output probs = softmax(linear(last, 5, name = "fc"), axis = -1);
    }
}
