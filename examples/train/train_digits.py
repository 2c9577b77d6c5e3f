"""Trains the digits classifier that examples/src/digits.rs loads at compile time.

The scikit-learn `digits` data set (8x8 images, 1797 samples) ships inside scikit-learn,
so nothing is downloaded. An MLPClassifier 64 -> 32 (ReLU) -> 10 is trained with a fixed
seed; its weights are written in two formats to exercise both loaders:

- data/digits/fc1.npz: `fc1.weight` [64, 32] (ONNX/scikit-learn layout [in, out]) and
  `fc1.bias` [32], with numpy.savez;
- data/digits/fc2.safetensors: `fc2.weight` [10, 32] (PyTorch layout [out, in]) and
  `fc2.bias` [10], written by hand (the format is a length, a JSON header and raw data).

The test split (x_test.npy float32 [n, 64], y_test.npy int64) and scikit-learn's own
predictions on it (sklearn_pred.npy int64) are saved too, and the first 128 images of
the training split (x_calib.npy float32 [128, 64]), the calibration inputs of the int8
model (`DigitsInt8`): calibration never sees the test split. Run from the repository root:

    target/xtask/venv/bin/python examples/train/train_digits.py

(`pip install scikit-learn` in that venv first.) The outputs are committed, so the build
needs no Python.
"""

import json
import struct
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

OUT = Path("examples/data/digits")


def write_safetensors(path, tensors):
    header = {}
    data = b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def main():
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y
    )
    clf = MLPClassifier(
        hidden_layer_sizes=(32,), activation="relu", max_iter=400, random_state=0
    )
    clf.fit(x_train, y_train)
    pred = clf.predict(x_test).astype(np.int64)
    print(f"scikit-learn test accuracy: {np.mean(pred == y_test):.4f} on {len(y_test)} images")

    OUT.mkdir(parents=True, exist_ok=True)
    w1, w2 = (w.astype(np.float32) for w in clf.coefs_)
    b1, b2 = (b.astype(np.float32) for b in clf.intercepts_)
    np.savez(OUT / "fc1.npz", **{"fc1.weight": w1, "fc1.bias": b1})
    write_safetensors(OUT / "fc2.safetensors", {"fc2.weight": w2.T, "fc2.bias": b2})
    np.save(OUT / "x_test.npy", x_test)
    np.save(OUT / "x_calib.npy", x_train[:128])
    np.save(OUT / "y_test.npy", y_test)
    np.save(OUT / "sklearn_pred.npy", pred)


if __name__ == "__main__":
    main()
