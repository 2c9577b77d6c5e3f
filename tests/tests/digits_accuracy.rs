//! The trained digits classifier: accuracy on the test split must be identical for
//! scikit-learn's own predictions, our forward pass, and ONNX Runtime on our ONNX.

use std::path::Path;

use tinyonnx_examples::{Digits, DigitsConv, DigitsConvInt8, DigitsInt8};
use tinyonnx_tests::{Provider, run_ort, session};

fn data(file: &str) -> tinyonnx_core::weights::Loaded {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/data/digits")
        .join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tinyonnx_core::weights::npy(&bytes).unwrap()
}

fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

#[test]
fn accuracy_matches_scikit_learn_and_onnx_runtime() {
    let x = data("x_test.npy");
    let y = data("y_test.npy");
    let sklearn = data("sklearn_pred.npy");
    let n = x.shape[0];
    assert_eq!(x.shape[1], 64);
    let mut sess = session(Digits::ONNX, Provider::Cpu).unwrap();
    let mut arena = Digits::arena();
    let (mut ours_ok, mut ort_ok, mut sk_ok, mut disagree) = (0, 0, 0, 0);
    for i in 0..n {
        let image: &[f32; 64] = x.values[i * 64..(i + 1) * 64].try_into().unwrap();
        let ours = argmax(&Digits::forward(&mut arena, image));
        let ort = run_ort(&mut sess, &Digits::INFO, &[image.to_vec()]).unwrap();
        let theirs = argmax(&ort[0]);
        let label = y.values[i] as usize;
        let sk = sklearn.values[i] as usize;
        ours_ok += usize::from(ours == label);
        ort_ok += usize::from(theirs == label);
        sk_ok += usize::from(sk == label);
        disagree += usize::from(ours != sk || theirs != sk);
    }
    let pct = |k: usize| 100.0 * k as f64 / n as f64;
    println!(
        "digits test split ({n} images): scikit-learn {:.2}%, tinyonnx host {:.2}%, ONNX Runtime {:.2}%, predictions differing from scikit-learn: {disagree}",
        pct(sk_ok),
        pct(ours_ok),
        pct(ort_ok)
    );
    assert_eq!(disagree, 0, "some predictions differ from scikit-learn's");
    assert_eq!(ours_ok, sk_ok);
    assert_eq!(ort_ok, sk_ok);
}

/// The digits model quantized at compile time (`quantize = int8(...)`, calibrated on
/// 128 training images): its accuracy on the test split within 1 point of the f32
/// model's, and the same predictions (and probabilities within float rounding) from our
/// integer forward pass and from ONNX Runtime running our QDQ ONNX.
#[test]
fn the_int8_model_keeps_its_accuracy_and_agrees_with_onnx_runtime() {
    let x = data("x_test.npy");
    let y = data("y_test.npy");
    let n = x.shape[0];
    let mut sess = session(DigitsInt8::ONNX, Provider::Cpu).unwrap();
    let (mut a32, mut a8) = (Digits::arena(), DigitsInt8::arena());
    let (mut f32_ok, mut int8_ok, mut ort_ok, mut differ, mut to_f32) = (0, 0, 0, 0, 0);
    let mut max_diff = 0.0f32;
    for i in 0..n {
        let image: &[f32; 64] = x.values[i * 64..(i + 1) * 64].try_into().unwrap();
        let float = argmax(&Digits::forward(&mut a32, image));
        let probs = DigitsInt8::forward(&mut a8, image);
        let int8 = argmax(&probs);
        let ort = run_ort(&mut sess, &DigitsInt8::INFO, &[image.to_vec()]).unwrap();
        for (a, b) in probs.iter().zip(&ort[0]) {
            max_diff = max_diff.max((a - b).abs());
        }
        let label = y.values[i] as usize;
        f32_ok += usize::from(float == label);
        int8_ok += usize::from(int8 == label);
        ort_ok += usize::from(argmax(&ort[0]) == label);
        differ += usize::from(int8 != argmax(&ort[0]));
        to_f32 += usize::from(int8 != float);
    }
    let pct = |k: usize| 100.0 * k as f64 / n as f64;
    println!(
        "digits test split ({n} images): f32 {:.2}%, int8 tinyonnx {:.2}%, int8 ONNX Runtime {:.2}%; int8 predictions differing from ONNX Runtime's: {differ}, from the f32 model's: {to_f32}; largest probability difference to ONNX Runtime {max_diff:.1e}",
        pct(f32_ok),
        pct(int8_ok),
        pct(ort_ok)
    );
    assert_eq!(differ, 0, "int8 predictions differ from ONNX Runtime's");
    assert!(max_diff <= 1e-6, "probabilities differ by {max_diff}");
    assert!(
        (pct(int8_ok) - pct(f32_ok)).abs() <= 1.0,
        "int8 accuracy {:.2}% is more than 1 point from f32's {:.2}%",
        pct(int8_ok),
        pct(f32_ok)
    );
    // The model is quantized: a third of the stored bytes or less (int8 weights,
    // int32 biases, scales).
    let (q, f) = (DigitsInt8::INFO.weights_bytes, Digits::INFO.weights_bytes);
    println!("stored weights: int8 {q} bytes, f32 {f}");
    assert!(3 * q < f, "int8 weights take {q} bytes, f32 {f}");
}

/// The quantized convolutional twin (convolutions, Relu folded into their ranges, max
/// pooling on 8-bit values, global average pooling, a Gemm): its logits near the float
/// model's on every test image, measured in the logits' own spread, and equal to ONNX
/// Runtime's on its QDQ ONNX.
#[test]
fn the_int8_convolutions_stay_near_the_float_model() {
    let x = data("x_test.npy");
    let n = x.shape[0];
    let mut sess = session(DigitsConvInt8::ONNX, Provider::Cpu).unwrap();
    let (mut a32, mut a8) = (DigitsConv::arena(), DigitsConvInt8::arena());
    let (mut worst, mut spread, mut to_ort, mut same) = (0.0f32, 0.0f32, 0.0f32, 0);
    for i in 0..n {
        let image: &[f32; 64] = x.values[i * 64..(i + 1) * 64].try_into().unwrap();
        let float = DigitsConv::forward(&mut a32, image);
        let int8 = DigitsConvInt8::forward(&mut a8, image);
        let ort = run_ort(&mut sess, &DigitsConvInt8::INFO, &[image.to_vec()]).unwrap();
        for k in 0..10 {
            worst = worst.max((float[k] - int8[k]).abs());
            spread = spread.max(float[k].abs());
            to_ort = to_ort.max((int8[k] - ort[0][k]).abs());
        }
        same += usize::from(argmax(&float) == argmax(&int8));
    }
    println!(
        "DigitsConvInt8 on {n} images: largest difference to the f32 model {worst:.4} (f32 logits up to {spread:.3}), to ONNX Runtime {to_ort:.1e}; same class as f32 on {same}; stored weights {} bytes against {}",
        DigitsConvInt8::INFO.weights_bytes,
        DigitsConv::INFO.weights_bytes
    );
    assert!(
        to_ort <= 1e-6,
        "int8 logits differ from ONNX Runtime's by {to_ort}"
    );
    assert!(
        worst <= 0.05 * spread,
        "int8 logits {worst} from the float ones (spread {spread})"
    );
}
