use tinyonnx::onnx_model;

onnx_model! {
    /// A small ResNet for 224x224 images: stem Conv 7x7 stride 2 (64) -> BN -> Relu ->
    /// MaxPool 3x3 stride 2 pad 1; basic blocks 64, 64, 128 (stride 2, 1x1 projection
    /// shortcut), 128; GlobalAveragePool -> Flatten -> Gemm 128 -> 10 -> Softmax.
    pub model ResNet {
        opset = 17;
        // Its 3x3 convolutions as Winograd wherever the arena allows: a transformed
        // kernel (16/9 of their weights) for 2.25x fewer products.
        winograd = auto;
        input x: f32[batch, 3, 224, 224];

        block conv_bn(x, ch, k, stride = 1, pad = 0, seed = 0) {
            let conv = conv2d(x, ch, k, stride = stride, pad = pad, bias = false, init = he_normal(seed = seed));
            let bn = batch_norm(
                conv,
                scale_init = uniform(low = 0.5, high = 1.0, seed = seed),
                bias_init = uniform(low = -0.1, high = 0.1, seed = seed),
                mean_init = uniform(low = -0.1, high = 0.1, seed = seed),
                var_init = uniform(low = 1.0, high = 2.0, seed = seed),
            );
            return bn;
        }

        block basic(x, ch, seed) {
            let conv1 = conv_bn(x, ch, 3, pad = 1, seed = seed);
            let conv2 = conv_bn(Relu(conv1), ch, 3, pad = 1, seed = seed);
            return Relu(Add(conv2, x));
        }

        block down(x, ch, seed) {
            let conv1 = conv_bn(x, ch, 3, stride = 2, pad = 1, seed = seed);
            let conv2 = conv_bn(Relu(conv1), ch, 3, pad = 1, seed = seed);
            let shortcut = conv_bn(x, ch, 1, stride = 2, seed = seed);
            return Relu(Add(conv2, shortcut));
        }

        let stem = conv_bn(x, 64, 7, stride = 2, pad = 3, seed = 1);
        let pool = max_pool2d(Relu(stem), 3, stride = 2, pad = 1);
        let layer1 = basic(pool, 64, 2);
        let layer2 = basic(layer1, 64, 3);
        let layer3 = down(layer2, 128, 4);
        let layer4 = basic(layer3, 128, 5);
        let pooled = flatten(global_avg_pool(layer4));
        output probs = softmax(linear(pooled, 10, init = glorot_uniform(seed = 6), name = "fc"), axis = -1);
    }
}
