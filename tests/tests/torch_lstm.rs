//! PyTorch LSTM weights, converted at compile time, against an independent NumPy
//! implementation of PyTorch's LSTM equations (examples/train/torch_lstm_reference.py).

use std::path::Path;

use tinyonnx_examples::TorchLstm;
use tinyonnx_tests::{TOLERANCE, compare};

fn npy(file: &str) -> tinyonnx_core::weights::Loaded {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/data/torch_lstm")
        .join(file);
    tinyonnx_core::weights::npy(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn pytorch_lstm_weights_give_pytorchs_final_states() {
    let x = npy("x.npy");
    let expected = npy("h_n.npy");
    let input: &[f32; 70] = x.values.as_slice().try_into().unwrap();
    let h_n = TorchLstm::forward(&mut TorchLstm::arena(), input);
    let d = compare(&h_n, &expected.values);
    println!(
        "PyTorch-layout LSTM vs NumPy reference: max abs diff {:.3e}",
        d.max_abs
    );
    assert!(d.max_scaled <= TOLERANCE, "max abs diff {:.3e}", d.max_abs);
}
