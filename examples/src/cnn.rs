use tinyonnx::onnx_model;

/// The CNN of this module with a `winograd` setting (`never` stores the weights as
/// declared; `always` trades arena and a transformed kernel for speed).
macro_rules! cnn {
    ($(#[$doc:meta])* $name:ident, $winograd:ident) => {
        onnx_model! {
            $(#[$doc])*
            pub model $name {
                opset = 17;
                winograd = $winograd;
                input x: f32[batch, 3, 32, 32];

                block conv_block(x, ch, seed) {
                    let conv = conv2d(x, ch, 3, pad = 1, init = he_normal(seed = seed));
                    let bn = batch_norm(
                        conv,
                        scale_init = uniform(low = 0.5, high = 1.5, seed = seed),
                        bias_init = uniform(low = -0.2, high = 0.2, seed = seed),
                        mean_init = uniform(low = -0.2, high = 0.2, seed = seed),
                        var_init = uniform(low = 0.5, high = 2.0, seed = seed),
                    );
                    return max_pool2d(Relu(bn), 2);
                }

                let block1 = conv_block(x, 32, 1);
                let block2 = conv_block(block1, 64, 2);
                let block3 = conv_block(block2, 128, 3);
                let features = flatten(block3);
                let fc1 = relu(linear(features, 256, init = he_normal(seed = 4), name = "fc1"));
                output probs = softmax(linear(fc1, 10, init = glorot_uniform(seed = 5), name = "fc2"), axis = -1);
            }
        }
    };
}

cnn!(
    /// CIFAR-style CNN: three blocks Conv 3x3 pad 1 -> BatchNormalization -> Relu ->
    /// MaxPool 2x2 stride 2 (32, 64, 128 channels), then Flatten -> Gemm 2048 -> 256 ->
    /// Relu -> Gemm 256 -> 10 -> Softmax. Its convolutions run as im2col products (the
    /// direct kernel where the CPU has AVX-512), on the weights as declared.
    Cnn,
    never
);

cnn!(
    /// The same CNN with `winograd = always`: its second and third convolutions run as
    /// Winograd F(2x2, 3x3) over all 16 elements at once, for about 3.3 times the
    /// arena.
    CnnWinograd,
    always
);

onnx_model! {
    /// A depthwise 3x3 convolution over 32 channels at 28x28 (stride 1, pad 1), int8 in
    /// and out: one `QLinearConv` with group 32, per-channel weight scales and a bias,
    /// the layer of a MobileNet block and the depthwise case of the int8 issue's
    /// CMSIS-NN comparison.
    pub model DepthwiseInt8 {
        opset = 17;
        input x: i8[1, 32, 28, 28];
        weight w: i8[32, 1, 3, 3] = [-39, 11, -14, -13, 14, -34, 45, 49, -22, 34, 15, 22, -46, 13, -3, 7, 43, 4, -9, 4, 43, 7, -3, 13, -46, 22, 15, 34, -22, 49, 45, -34, 14, -13, -14, 11, -39, 38, 40, -33, 21, 0, 5, 36, -8, -26, -18, 16, -25, -40, -29, 8, -30, -42, -28, 12, -23, -32, -15, 28, -4, -10, 10, -45, 27, 24, 47, -5, -31, -31, -5, 47, 24, 27, -45, 10, -10, -4, 28, -15, -32, -23, 12, -28, -42, -30, 8, -29, -40, -25, 16, -18, -26, -8, 36, 5, 0, 21, -33, 40, 38, -39, 11, -14, -13, 14, -34, 45, 49, -22, 34, 15, 22, -46, 13, -3, 7, 43, 4, -9, 4, 43, 7, -3, 13, -46, 22, 15, 34, -22, 49, 45, -34, 14, -13, -14, 11, -39, 38, 40, -33, 21, 0, 5, 36, -8, -26, -18, 16, -25, -40, -29, 8, -30, -42, -28, 12, -23, -32, -15, 28, -4, -10, 10, -45, 27, 24, 47, -5, -31, -31, -5, 47, 24, 27, -45, 10, -10, -4, 28, -15, -32, -23, 12, -28, -42, -30, 8, -29, -40, -25, 16, -18, -26, -8, 36, 5, 0, 21, -33, 40, 38, -39, 11, -14, -13, 14, -34, 45, 49, -22, 34, 15, 22, -46, 13, -3, 7, 43, 4, -9, 4, 43, 7, -3, 13, -46, 22, 15, 34, -22, 49, 45, -34, 14, -13, -14, 11, -39, 38, 40, -33, 21, 0, 5, 36, -8, -26, -18, 16, -25, -40, -29, 8, -30, -42, -28, 12, -23, -32, -15, 28, -4, -10, 10, -45, 27, 24, 47, -5, -31, -31, -5, 47, 24, 27, -45, 10, -10, -4, 28, -15, -32, -23, 12, -28, -42, -30];
        weight b: i32[32] = [-400, 310, 219, 128, 37, -54, -145, -236, -327, 383, 292, 201, 110, 19, -72, -163, -254, -345, 365, 274, 183, 92, 1, -90, -181, -272, -363, 347, 256, 165, 74, -17];
        output y = QLinearConv(
            x, Constant(value_float = 0.05), Cast(Constant(value_int = -3), to = i8),
            w, Constant(value_floats = [0.004, 0.0066, 0.0058, 0.005, 0.0042, 0.0068, 0.006, 0.0052, 0.0044, 0.007, 0.0062, 0.0054, 0.0046, 0.0072, 0.0064, 0.0056, 0.0048, 0.004, 0.0066, 0.0058, 0.005, 0.0042, 0.0068, 0.006, 0.0052, 0.0044, 0.007, 0.0062, 0.0054, 0.0046, 0.0072, 0.0064]), Cast(Constant(value_ints = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), to = i8),
            Constant(value_float = 0.04), Cast(Constant(value_int = 2), to = i8),
            b, group = 32, pads = [1, 1, 1, 1],
        );
    }
}

/// A model over four channels of uint8 rows of 37 and one depthwise 3x3 kernel, whose
/// outputs are that layer as `QLinearConv`s (pad 1), each with its weight scales and any
/// further attributes: `output: [scales], attribute = value, ...;`.
macro_rules! depthwise_u8 {
    ($(#[$doc:meta])* $name:ident { $($out:ident: [$($scale:tt),*] $(, $attr:ident = $value:tt)*;)* }) => {
        onnx_model! {
            $(#[$doc])*
            pub model $name {
                opset = 17;
                input x: u8[1, 4, 7, 37];
                weight w: i8[4, 1, 3, 3] = [-19, -41, -10, 23, -54, -51, 45, 8, -48, -14, 14, -53, 56, 4, -33, -56, -49, -5, -7, -52, -30, -49, 10, -6, -53, 45, 12, -45, -32, 20, 20, 14, -53, 13, 14, -10];
                weight b: i32[4] = [-799, -448, -805, 240];
                $(
                    output $out = QLinearConv(
                        x, Constant(value_float = 0.03), Cast(Constant(value_int = 131), to = u8),
                        w, Constant(value_floats = [$($scale),*]), Cast(Constant(value_ints = [0, 0, 0, 0]), to = i8),
                        Constant(value_float = 0.02), Cast(Constant(value_int = 119), to = u8),
                        b, group = 4, pads = [1, 1, 1, 1] $(, $attr = $value)*,
                    );
                )*
            }
        }
    };
}

depthwise_u8!(
    /// A depthwise 3x3 convolution with uint8 activations over rows of 37 (stride 1, pad
    /// 1): rows longer than a run of the kernel (32 outputs), an odd count of outputs
    /// inside the image and a zero point the padding reads, the cases the int8
    /// depthwise routines treat apart, checked on every board; then the same layer with
    /// one channel whose requantization multiplier overflows to infinity (`x_scale *
    /// w_scale / y_scale` beyond f32: ONNX Runtime saturates that channel by its sums'
    /// signs).
    DepthwiseU8 {
        y: [0.005, 0.0061, 0.0047, 0.0069];
        overflow: [0.005, 3.0e38, 0.0047, 0.0069];
    }
);

depthwise_u8!(
    /// `DepthwiseU8`'s layer with stride 2: the strided rows of the int8 depthwise
    /// kernel (the DSP cores' strip routine takes unit steps only), with windows above,
    /// below and beside the image and inside it, checked on every board. A model of its
    /// own, so that each of the two stays within the footprint issue's 8 KB of code.
    DepthwiseStrided {
        y: [0.005, 0.0061, 0.0047, 0.0069], strides = [2, 2];
    }
);

onnx_model! {
    /// A pointwise (1x1) int8 convolution, 32 to 64 channels at 14x14: one `QLinearConv`
    /// with per-channel weight scales and a bias, the shape of the int8 issue's CMSIS-NN
    /// 1x1 comparison.
    pub model PointwiseInt8 {
        opset = 17;
        input x: i8[1, 32, 14, 14];
        weight w: i8[64, 32, 1, 1] = load("data/int8conv/pointwise_w.npy");
        weight b: i32[64] = [643, -1755, -961, -1528, 92, 1213, -597, -213, -53, -915, -838, -1679, 1118, 198, -1146, 754, -116, -881, 1914, -536, -360, 386, -1044, 574, 1497, -1423, 1229, -165, 1740, 98, 222, -377, 999, 899, -1206, 477, 479, 145, -64, 245, -1869, 1619, -763, -1011, -1162, 1313, 19, -179, 17, -680, -458, 978, 1700, 1405, -1721, 386, -620, 1713, -33, -1005, 770, -1738, 832, 322];
        output y = QLinearConv(
            x, Constant(value_float = 0.05), Cast(Constant(value_int = 4), to = i8),
            w, Constant(value_floats = [0.00042, 0.00041, 0.00068, 0.00064, 0.00058, 0.00056, 0.00051, 0.00065, 0.00043, 0.00086, 0.00085, 0.00058, 0.00077, 0.00055, 0.00049, 0.00045, 0.00066, 0.00044, 0.00082, 0.00079, 0.00088, 0.00087, 0.00061, 0.0008, 0.00072, 0.0005, 0.00066, 0.00053, 0.00047, 0.00078, 0.00072, 0.00057, 0.0007, 0.00051, 0.00067, 0.00057, 0.00045, 0.00082, 0.00087, 0.00059, 0.00054, 0.00044, 0.00065, 0.00077, 0.00053, 0.00089, 0.00071, 0.00086, 0.00086, 0.00073, 0.00051, 0.00072, 0.00057, 0.00065, 0.0006, 0.00041, 0.0006, 0.00044, 0.00086, 0.00054, 0.00041, 0.00061, 0.00076, 0.00088]), Cast(Constant(value_ints = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), to = i8),
            Constant(value_float = 0.006), Cast(Constant(value_int = -5), to = i8),
            b,
        );
    }
}

onnx_model! {
    /// A 3x3 int8 convolution, 16 to 32 channels at 28x28 (stride 1, pad 1): one
    /// `QLinearConv` with per-channel weight scales and a bias, the shape of the int8
    /// issue's CMSIS-NN 3x3 comparison.
    pub model Conv3x3Int8 {
        opset = 17;
        input x: i8[1, 16, 28, 28];
        weight w: i8[32, 16, 3, 3] = load("data/int8conv/conv3x3_w.npy");
        weight b: i32[32] = [1737, -167, 1647, -1718, -127, 1355, 1313, 1499, -1107, -43, -1753, -723, 751, -1720, 767, 1457, 1230, 1796, 676, 726, -1720, -402, 1404, -1260, -1022, -410, 1117, -1411, 1187, 1738, -1194, -1729];
        output y = QLinearConv(
            x, Constant(value_float = 0.05), Cast(Constant(value_int = -2), to = i8),
            w, Constant(value_floats = [0.00032, 0.00031, 0.00023, 0.0005, 0.00021, 0.00021, 0.0002, 0.00041, 0.00028, 0.00045, 0.00043, 0.00044, 0.00025, 0.0004, 0.00049, 0.00045, 0.00026, 0.00022, 0.00035, 0.00026, 0.00021, 0.00025, 0.00031, 0.0004, 0.00025, 0.00027, 0.00026, 0.00044, 0.00026, 0.00023, 0.00045, 0.00041]), Cast(Constant(value_ints = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), to = i8),
            Constant(value_float = 0.006), Cast(Constant(value_int = 3), to = i8),
            b, pads = [1, 1, 1, 1],
        );
    }
}
