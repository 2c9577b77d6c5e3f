//! A QDQ `Add` of two 8-bit tensors against ONNX Runtime on every pair of 8-bit values:
//! the plan runs it as ONNX Runtime's `QLinearAdd` (`plan::qdq`), whose fused
//! multiply-adds round differently from dequantizing, adding and quantizing. The scales
//! and zero points are ones where the two differ (15 and 17 of the 65,536 pairs; found
//! with ONNX Runtime and NumPy): the outputs must be equal on all of them, also where a
//! row repeats down a matrix on either side of the Add.

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

onnx_model! {
    /// A row repeated down a matrix, on either side: `a` along the rows, `v` along the
    /// columns, every pair again.
    model AddRow {
        input a: i8[256, 256];
        input v: i8[256];
        let fa = DequantizeLinear(a, Constant(value_float = 0.01397), Cast(Constant(value_int = 15), to = i8));
        let fv = DequantizeLinear(v, Constant(value_float = 0.00515), Cast(Constant(value_int = 6), to = i8));
        output y = QuantizeLinear(Add(fa, fv), Constant(value_float = 0.01124), Cast(Constant(value_int = 14), to = i8));
        output z = QuantizeLinear(Add(fv, fa), Constant(value_float = 0.01124), Cast(Constant(value_int = 14), to = i8));
    }
}

/// Value `i` of a column-major grid of every pair: `k = 0` the column, else the row.
fn grid(k: usize, i: usize) -> u8 {
    (if k == 0 { i % 256 } else { i / 256 }) as u8
}

#[test]
fn a_qdq_add_gives_onnx_runtimes_bytes_for_every_pair() {
    let provider = Provider::from_env().unwrap();
    let signed = |k| Values::I8((0..65536).map(|i| grid(k, i) as i8).collect());
    let unsigned = |k| Values::U8((0..65536).map(|i| grid(k, i)).collect());
    let cases = [
        (
            tinyonnx_examples::example::<AddI8>(),
            [signed(0), signed(1)],
        ),
        (
            tinyonnx_examples::example::<AddU8>(),
            [unsigned(0), unsigned(1)],
        ),
        (
            tinyonnx_examples::example::<AddRow>(),
            [
                signed(1),
                Values::I8((0..256).map(|i| i as u8 as i8).collect()),
            ],
        ),
    ];
    for (example, inputs) in cases {
        let info = &example.info;
        let mut sess = session(example.onnx, provider).unwrap();
        let expected = run_ort_values(&mut sess, info, &inputs).unwrap();
        let ours = tinyonnx_tests::run_ours(&example, &inputs).unwrap();
        for (k, (ours, expected)) in ours.iter().zip(&expected).enumerate() {
            let differ = match (ours, expected) {
                (Values::I8(x), Values::I8(y)) => x.iter().zip(y).filter(|(a, b)| a != b).count(),
                (Values::U8(x), Values::U8(y)) => x.iter().zip(y).filter(|(a, b)| a != b).count(),
                _ => panic!("{}: unexpected output types", info.name),
            };
            let name = info.outputs[k].name;
            println!(
                "{} `{name}`: {differ} of 65536 sums differ from ONNX Runtime's",
                info.name
            );
            assert_eq!(differ, 0, "{} `{name}`", info.name);
        }
    }
}
