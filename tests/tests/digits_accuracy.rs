//! The trained digits classifier: accuracy on the test split must be identical for
//! scikit-learn's own predictions, our forward pass, and ONNX Runtime on our ONNX.

use std::path::Path;

use tinyonnx_examples::Digits;
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
