use tinyonnx::onnx_model;

onnx_model! {
    /// A bidirectional LSTM whose weights come from a PyTorch `nn.LSTM` state dict
    /// (safetensors, gate order i, f, g, o), converted at compile time to ONNX's W, R, B
    /// (gate order i, o, f, c). examples/train/torch_lstm_reference.py wrote the file and
    /// the expected final states, computed with NumPy from PyTorch's equations.
    pub model TorchLstm {
        opset = 17;
        dim batch = 2;
        input x: f32[7, batch, 5];
        let (_, h_n, _) = lstm(x, 6, direction = "bidirectional", weights = "data/torch_lstm/lstm.safetensors", layout = "pytorch", name = "rnn");
        output h_n;
    }
}
