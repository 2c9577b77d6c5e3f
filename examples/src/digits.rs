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
    /// `Digits` quantized at compile time: int8 weights per output channel, int8
    /// activations whose ranges the float model measured on 128 images of the training
    /// split (`x_calib.npy`); the ONNX is the QDQ graph ONNX Runtime runs, the forward
    /// pass integer products.
    pub model DigitsInt8 {
        opset = 17;
        quantize = int8(calibration = "data/digits/x_calib.npy");
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

/// A small convolutional network over the digits images with a model setting (`opset`
/// alone, or with `quantize`): untrained (seeded initializers), it is the float twin and
/// the int8 model of the convolution, pooling and flatten path of compile-time
/// quantization, whose int8 outputs the tests hold near the float ones.
macro_rules! digits_conv {
    ($(#[$doc:meta])* $name:ident, $($setting:tt)*) => {
        onnx_model! {
            $(#[$doc])*
            pub model $name {
                $($setting)*
                input x: f32[1, 64];
                let image = Reshape(x, [1, 1, 8, 8]);
                let conv1 = conv2d(image, 8, 3, pad = 1, init = he_normal(seed = 1), name = "conv1");
                let c1 = relu(batch_norm(
                    conv1,
                    scale_init = uniform(low = 0.5, high = 1.5, seed = 4),
                    bias_init = uniform(low = -0.2, high = 0.2, seed = 5),
                    mean_init = uniform(low = -0.2, high = 0.2, seed = 6),
                    var_init = uniform(low = 0.5, high = 2.0, seed = 7),
                ));
                let c2 = relu(conv2d(max_pool2d(c1, 2), 16, 3, pad = 1, init = he_normal(seed = 2), name = "conv2"));
                let features = flatten(global_avg_pool(c2));
                output logits = linear(features, 10, init = glorot_uniform(seed = 3), name = "fc");
            }
        }
    };
}

digits_conv!(
    /// Conv 3x3 (8) -> BatchNormalization -> Relu -> MaxPool 2 -> Conv 3x3 (16) -> Relu
    /// -> GlobalAveragePool -> Gemm 16 -> 10, in f32.
    DigitsConv,
    opset = 17;
);

digits_conv!(
    /// `DigitsConv` quantized at compile time on the digits calibration images (its
    /// BatchNormalization folded into the first convolution first).
    DigitsConvInt8,
    opset = 17;
    quantize = int8(calibration = "data/digits/x_calib.npy");
);
