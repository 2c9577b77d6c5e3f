use tinyonnx::onnx_model;

onnx_model! {
    /// A Transformer encoder block on `[batch, 10, 64]`, 4 heads of 16, written with raw
    /// ONNX operators: self-attention, residual Add, LayerNormalization, feed-forward
    /// 64 -> 256 -> Relu -> 64, residual Add, LayerNormalization.
    pub model TransformerBlock {
        opset = 17;
        input x: f32[batch, 10, 64];
        weight wq: f32[64, 64] = glorot_uniform(seed = 1);
        weight bq: f32[64] = uniform(low = -0.1, high = 0.1, seed = 2);
        weight wk: f32[64, 64] = glorot_uniform(seed = 3);
        weight bk: f32[64] = uniform(low = -0.1, high = 0.1, seed = 4);
        weight wv: f32[64, 64] = glorot_uniform(seed = 5);
        weight bv: f32[64] = uniform(low = -0.1, high = 0.1, seed = 6);
        weight wo: f32[64, 64] = glorot_uniform(seed = 7);
        weight bo: f32[64] = uniform(low = -0.1, high = 0.1, seed = 8);
        weight ln1_scale: f32[64] = uniform(low = 0.8, high = 1.2, seed = 9);
        weight ln1_bias: f32[64] = uniform(low = -0.1, high = 0.1, seed = 10);
        weight w1: f32[64, 256] = he_uniform(seed = 11);
        weight b1: f32[256] = zeros;
        weight w2: f32[256, 64] = glorot_uniform(seed = 12);
        weight b2: f32[64] = zeros;
        weight ln2_scale: f32[64] = ones;
        weight ln2_bias: f32[64] = zeros;

        let q = Add(MatMul(x, wq), bq);
        let k = Add(MatMul(x, wk), bk);
        let v = Add(MatMul(x, wv), bv);
        let qh = Transpose(Reshape(q, [-1, 10, 4, 16]), perm = [0, 2, 1, 3]);
        let kt = Transpose(Reshape(k, [-1, 10, 4, 16]), perm = [0, 2, 3, 1]);
        let vh = Transpose(Reshape(v, [-1, 10, 4, 16]), perm = [0, 2, 1, 3]);
        let scores = Mul(MatMul(qh, kt), 0.25);
        let attn = Softmax(scores, axis = -1);
        let context = Transpose(MatMul(attn, vh), perm = [0, 2, 1, 3]);
        let merged = Reshape(context, [-1, 10, 64]);
        let projected = Add(MatMul(merged, wo), bo);
        let norm1 = LayerNormalization(Add(x, projected), ln1_scale, ln1_bias, axis = -1, epsilon = 0.000001);
        let hidden = Relu(Add(MatMul(norm1, w1), b1));
        let ff = Add(MatMul(hidden, w2), b2);
        output y = LayerNormalization(Add(norm1, ff), ln2_scale, ln2_bias, axis = -1, epsilon = 0.000001);
    }
}

onnx_model! {
    /// The same encoder block with layer sugar: `multi_head_attention` lowers to the
    /// node sequence written out in [`TransformerBlock`], `layer_norm` to
    /// LayerNormalization.
    pub model TransformerSugar {
        opset = 17;
        input x: f32[batch, 10, 64];
        weight w1: f32[64, 256] = he_uniform(seed = 11);
        weight b1: f32[256] = zeros;
        weight w2: f32[256, 64] = glorot_uniform(seed = 12);
        weight b2: f32[64] = zeros;
        let attn = multi_head_attention(x, 4, bias_init = uniform(low = -0.1, high = 0.1, seed = 2));
        let norm1 = layer_norm(Add(x, attn), epsilon = 0.000001);
        let ff = Add(MatMul(Relu(Add(MatMul(norm1, w1), b1)), w2), b2);
        output y = layer_norm(Add(norm1, ff), epsilon = 0.000001);
    }
}
