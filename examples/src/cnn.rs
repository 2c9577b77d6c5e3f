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
