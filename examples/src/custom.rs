//! Custom operators: the kernels `CustomZoo` names, and the model.

use tinyonnx::{CustomKernel, TensorMut, TensorRef, onnx_model};

/// `y = x / (1 + |x|)` on f32.
#[derive(Debug)]
pub struct Softsign;

impl CustomKernel for Softsign {
    fn run(inputs: &[TensorRef<'_>], outputs: &mut [TensorMut<'_>]) {
        if let (TensorRef::F32(x), TensorMut::F32(y)) = (&inputs[0], &mut outputs[0]) {
            for (o, &v) in y.iter_mut().zip(x.iter()) {
                *o = v / (1.0 + v.abs());
            }
        }
    }
}

/// `s = a + b` (f32) and `n` = how many elements of `a` exceed `b` (an i64 scalar).
#[derive(Debug)]
pub struct SumAndCount;

impl CustomKernel for SumAndCount {
    fn run(inputs: &[TensorRef<'_>], outputs: &mut [TensorMut<'_>]) {
        let (TensorRef::F32(a), TensorRef::F32(b)) = (&inputs[0], &inputs[1]) else {
            return;
        };
        let (s, n) = outputs.split_at_mut(1);
        if let (TensorMut::F32(s), TensorMut::I64(n)) = (&mut s[0], &mut n[0]) {
            for ((o, &x), &y) in s.iter_mut().zip(a.iter()).zip(b.iter()) {
                *o = x + y;
            }
            n[0] = a.iter().zip(b.iter()).filter(|(x, y)| x > y).count() as i64;
        }
    }
}

onnx_model! {
    /// Two custom operators of the domain `org.tinyonnx.examples` (version 2), run by the
    /// kernels above between standard nodes. ONNX Runtime has no kernels for them, so the
    /// cross-check skips this model; `tests/tests/custom_ops.rs` checks the values.
    pub model CustomZoo {
        opset = 17;
        /// Softsign as a custom operator.
        custom Softsign2(x) -> y {
            domain = "org.tinyonnx.examples";
            version = 2;
            kernel = Softsign;
            y = x;
        }
        custom SumAndCount(a, b) -> (s, n) {
            domain = "org.tinyonnx.examples";
            version = 2;
            kernel = SumAndCount;
            s = a;
            n: i64[];
        }
        input x: f32[2, 3];
        input z: f32[2, 3];
        output y = Relu(Softsign2(Mul(x, 3.0)));
        let (s, n) = SumAndCount(x, z);
        output s;
        output n;
    }
}
