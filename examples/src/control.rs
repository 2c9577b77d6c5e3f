//! Control flow: `if` (ONNX If), `for i in 0..n` (Loop with a static trip count) and
//! `for x_t in xs` (Scan), each emitted as subgraphs and run by the forward pass.

use tinyonnx::onnx_model;

onnx_model! {
    /// A gate chosen at run time: the branch follows the sign of the input's sum. Both
    /// branches read the model's weights and return one type.
    pub model IfGate {
        opset = 17;
        input x: f32[2, 8];
        weight w1: f32[8, 4] = glorot_uniform(seed = 1);
        weight w2: f32[8, 4] = glorot_uniform(seed = 2);
        let positive = Greater(ReduceSum(x, keepdims = 0), 0.0);
        /// Relu of one projection, or the negated other.
        let (y, s) = if positive {
            let h = Relu(MatMul(x, w1));
            return (h, ReduceMean(h, keepdims = 0));
        } else {
            return (Neg(MatMul(x, w2)), ReduceMax(x, keepdims = 0));
        };
        output out = Add(y, 1.0);
        output score = Identity(s);
    }
}

onnx_model! {
    /// A recurrent cell unrolled by a Loop of 5 steps: the carried state is updated and
    /// every step's state is stacked; the iteration number scales a bias.
    pub model LoopCell {
        opset = 17;
        input h0: f32[1, 6];
        weight w: f32[6, 6] = glorot_uniform(seed = 3);
        weight b: f32[1, 6] = uniform(low = -0.5, high = 0.5, seed = 4);
        let (h, hs) = for i in 0..5 with (h = h0) {
            let k = Cast(i, to = f32);
            let next = Tanh(Add(MatMul(h, w), Mul(b, k)));
            return (next, next);
        };
        output last = Identity(h);
        output states = Identity(hs);
    }
}

onnx_model! {
    /// A custom RNN cell written in the DSL, scanned over 7 time steps of a [7, 2, 3]
    /// sequence: the hidden state is carried, each step's output stacked.
    pub model ScanRnn {
        opset = 17;
        input xs: f32[7, 2, 3];
        input h0: f32[2, 4];
        weight wx: f32[3, 4] = glorot_uniform(seed = 5);
        weight wh: f32[4, 4] = glorot_uniform(seed = 6);
        weight bias: f32[4] = zeros();
        let (h, ys) = for x_t in xs with (h = h0) {
            let next = Tanh(Add(Add(MatMul(x_t, wx), MatMul(h, wh)), bias));
            return (next, Sigmoid(next));
        };
        output h_last = Identity(h);
        output y = Identity(ys);
    }
}
