//! Custom operators: the user's kernel runs in the forward pass (a counter proves the
//! call), the values are the kernel's, and the ONNX names the custom domain.

use std::sync::atomic::{AtomicUsize, Ordering};

use tinyonnx::{CustomKernel, TensorMut, TensorRef};
use tinyonnx_tests::{Values, seeded_values};

static CALLS: AtomicUsize = AtomicUsize::new(0);

/// `y = x + 1`, counting its calls.
struct AddOne;

impl CustomKernel for AddOne {
    fn run(inputs: &[TensorRef<'_>], outputs: &mut [TensorMut<'_>]) {
        CALLS.fetch_add(1, Ordering::SeqCst);
        if let (TensorRef::F32(x), TensorMut::F32(y)) = (&inputs[0], &mut outputs[0]) {
            for (o, v) in y.iter_mut().zip(x.iter()) {
                *o = v + 1.0;
            }
        }
    }
}

tinyonnx::onnx_model! {
    model Counted {
        custom AddOne(x) -> y { domain = "com.example.test"; kernel = AddOne; y = x; }
        input x: f32[4];
        output y = Relu(AddOne(AddOne(x)));
    }
}

#[test]
fn the_kernel_is_called_once_per_node() {
    let before = CALLS.load(Ordering::SeqCst);
    let mut arena = Counted::arena();
    let y = Counted::forward(&mut arena, &[-3.0, -1.5, 0.0, 2.0]);
    assert_eq!(CALLS.load(Ordering::SeqCst) - before, 2);
    assert_eq!(y, [0.0, 0.5, 2.0, 4.0]);
}

#[test]
fn the_onnx_names_the_custom_domain() {
    assert_eq!(
        tinyonnx_tests::custom_ops(Counted::ONNX),
        ["com.example.test.AddOne"]
    );
    let ex = tinyonnx_examples::example::<Counted>();
    assert!(
        tinyonnx_tests::ort_skip_reason(&ex)
            .unwrap()
            .contains("com.example.test.AddOne")
    );
}

#[test]
fn custom_zoo_runs_its_kernels() {
    // CustomZoo's outputs recomputed here from the seeded inputs, independently of the
    // kernels: y = relu(softsign(3x)), s = x + z, n = #{x > z}.
    let ex = tinyonnx_examples::example::<tinyonnx_examples::CustomZoo>();
    let info = &ex.info;
    let inputs = seeded_values(info, 7, 1.0).unwrap();
    let (Values::F32(x), Values::F32(z)) = (&inputs[0], &inputs[1]) else {
        panic!("f32 inputs");
    };
    let ours = tinyonnx_tests::run_ours(&ex, &inputs).unwrap();
    let y: Vec<f32> = x
        .iter()
        .map(|v| {
            let t = 3.0 * v;
            (t / (1.0 + t.abs())).max(0.0)
        })
        .collect();
    let s: Vec<f32> = x.iter().zip(z).map(|(a, b)| a + b).collect();
    let n = x.iter().zip(z).filter(|(a, b)| a > b).count() as i64;
    assert_eq!(ours[0], Values::F32(y));
    assert_eq!(ours[1], Values::F32(s));
    assert_eq!(ours[2], Values::I64(vec![n]));
    assert!(n > 0 && n < 6, "the seed gives a mixed count ({n})");
}
