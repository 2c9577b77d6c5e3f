//! A QDQ `Add` of two 8-bit tensors against ONNX Runtime on every pair of 8-bit values:
//! the plan runs it as ONNX Runtime's `QLinearAdd` (`plan::qdq`), whose fused
//! multiply-adds round differently from dequantizing, adding and quantizing. The scales
//! and zero points are ones where the two differ (15 and 17 of the 65,536 pairs; found
//! with ONNX Runtime and NumPy): the outputs must be equal on all of them.

use tinyonnx::onnx_model;
use tinyonnx_tests::{Provider, Values, run_ort_values, session};

onnx_model! {
    /// Signed: every pair of int8 values, `a` along the columns, `b` along the rows.
    model AddI8 {
        input a: i8[256, 256];
        input b: i8[256, 256];
        let fa = DequantizeLinear(a, Constant(value_float = 0.01397), Cast(Constant(value_int = 15), to = i8));
        let fb = DequantizeLinear(b, Constant(value_float = 0.00515), Cast(Constant(value_int = 6), to = i8));
        output y = QuantizeLinear(Add(fa, fb), Constant(value_float = 0.01124), Cast(Constant(value_int = 14), to = i8));
    }
}

onnx_model! {
    /// Unsigned, the same layout.
    model AddU8 {
        input a: u8[256, 256];
        input b: u8[256, 256];
        let fa = DequantizeLinear(a, Constant(value_float = 0.00508), Cast(Constant(value_int = 160), to = u8));
        let fb = DequantizeLinear(b, Constant(value_float = 0.0346), Cast(Constant(value_int = 117), to = u8));
        output y = QuantizeLinear(Add(fa, fb), Constant(value_float = 0.04376), Cast(Constant(value_int = 108), to = u8));
    }
}

#[test]
fn a_qdq_add_gives_onnx_runtimes_bytes_for_every_pair() {
    let provider = Provider::from_env().unwrap();
    let pairs = |v: &dyn Fn(usize) -> Values| [v(0), v(1)];
    let cases = [
        (
            tinyonnx_examples::example::<AddI8>(),
            pairs(&|k| {
                Values::I8(
                    (0..65536)
                        .map(|i| (if k == 0 { i % 256 } else { i / 256 }) as u8 as i8)
                        .collect(),
                )
            }),
        ),
        (
            tinyonnx_examples::example::<AddU8>(),
            pairs(&|k| {
                Values::U8(
                    (0..65536)
                        .map(|i| (if k == 0 { i % 256 } else { i / 256 }) as u8)
                        .collect(),
                )
            }),
        ),
    ];
    for (example, inputs) in cases {
        let info = &example.info;
        let mut sess = session(example.onnx, provider).unwrap();
        let expected = run_ort_values(&mut sess, info, &inputs).unwrap();
        let ours = tinyonnx_tests::run_ours(&example, &inputs).unwrap();
        let differ = match (&ours[0], &expected[0]) {
            (Values::I8(x), Values::I8(y)) => x.iter().zip(y).filter(|(a, b)| a != b).count(),
            (Values::U8(x), Values::U8(y)) => x.iter().zip(y).filter(|(a, b)| a != b).count(),
            _ => panic!("{}: unexpected output types", info.name),
        };
        println!(
            "{}: {differ} of 65536 sums differ from ONNX Runtime's",
            info.name
        );
        assert_eq!(differ, 0, "{}", info.name);
    }
}
