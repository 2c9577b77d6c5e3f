use tinyonnx::onnx_model;

onnx_model! {
    /// The scikit-learn digits classifier (8x8 images, 64 -> 32 -> 10), trained by
    /// examples/train/train_digits.py. Its first layer comes from a NumPy .npz in ONNX
    /// layout, the second from a safetensors file in PyTorch layout ([out, in], emitted as
    /// Gemm transB = 1): both are read and checked at compile time.
    pub model Digits {
        opset = 17;
        input x: f32[batch, 64];
        let hidden = relu(linear(x, 32, weights = "data/digits/fc1.npz", name = "fc1"));
        output probs = softmax(linear(hidden, 10, weights = "data/digits/fc2.safetensors", name = "fc2", layout = "pytorch"), axis = -1);
    }
}

onnx_model! {
    /// A nearest-neighbour digit classifier: the squared distances from an 8x8 image to
    /// the 360 images of the digits test split (a `.npy` of f32, kept as it is, so the
    /// assembler takes its 92 KB from the file rather than rustc from a literal), and
    /// the index of the nearest.
    pub model DigitsNearest {
        opset = 18;
        input x: f32[1, 64];
        weight samples: f32[360, 64] = load("data/digits/x_test.npy");
        let diff = Sub(x, samples);
        output distances = ReduceSumSquare(diff, [1], keepdims = 0);
        output nearest = ArgMin(distances, axis = 0, keepdims = 0);
    }
}
