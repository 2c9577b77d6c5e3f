"""A reference for loading PyTorch LSTM weights (examples/src/torch_lstm.rs).

Writes a random state dict in PyTorch's nn.LSTM layout (weight_ih_l0 [4H, I],
weight_hh_l0 [4H, H], bias_ih_l0, bias_hh_l0 [4H], gate order i, f, g, o; `_reverse`
tensors for the second direction) to data/torch_lstm/lstm.safetensors, an input sequence,
and the final hidden states computed here with NumPy from PyTorch's equations:

    i = sigmoid(W_ii x + b_ii + W_hi h + b_hi)      f = sigmoid(W_if x + ... )
    g = tanh(W_ig x + b_ig + W_hg h + b_hg)          o = sigmoid(W_io x + ... )
    c = f * c + i * g                                h = o * tanh(c)

This is independent of tinyonnx's conversion to ONNX's W, R, B (gate order i, o, f, c),
which the Rust test checks against it. Run from the repository root with NumPy:

    target/xtask/venv/bin/python examples/train/torch_lstm_reference.py
"""

import json
import struct
from pathlib import Path

import numpy as np

OUT = Path("examples/data/torch_lstm")
SEQ, BATCH, INPUT, HIDDEN = 7, 2, 5, 6


def write_safetensors(path, tensors):
    header, data = {}, b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def run(x, w_ih, w_hh, b_ih, b_hh, reverse):
    h = np.zeros((x.shape[1], HIDDEN), dtype=np.float64)
    c = np.zeros_like(h)
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in steps:
        z = x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(z, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
    return h


def main():
    rng = np.random.default_rng(7)
    k = 1.0 / np.sqrt(HIDDEN)
    u = lambda *shape: rng.uniform(-k, k, shape).astype(np.float32)
    state = {}
    for suffix in ["", "_reverse"]:
        state[f"rnn.weight_ih_l0{suffix}"] = u(4 * HIDDEN, INPUT)
        state[f"rnn.weight_hh_l0{suffix}"] = u(4 * HIDDEN, HIDDEN)
        state[f"rnn.bias_ih_l0{suffix}"] = u(4 * HIDDEN)
        state[f"rnn.bias_hh_l0{suffix}"] = u(4 * HIDDEN)
    x = rng.uniform(-1, 1, (SEQ, BATCH, INPUT)).astype(np.float32)
    f64 = lambda name: state[name].astype(np.float64)
    forward = run(x.astype(np.float64), f64("rnn.weight_ih_l0"), f64("rnn.weight_hh_l0"),
                  f64("rnn.bias_ih_l0"), f64("rnn.bias_hh_l0"), reverse=False)
    backward = run(x.astype(np.float64), f64("rnn.weight_ih_l0_reverse"),
                   f64("rnn.weight_hh_l0_reverse"), f64("rnn.bias_ih_l0_reverse"),
                   f64("rnn.bias_hh_l0_reverse"), reverse=True)
    OUT.mkdir(parents=True, exist_ok=True)
    write_safetensors(OUT / "lstm.safetensors", state)
    np.save(OUT / "x.npy", x)
    # h_n as PyTorch returns it for a bidirectional LSTM: [2, batch, hidden].
    np.save(OUT / "h_n.npy", np.stack([forward, backward]).astype(np.float32))


if __name__ == "__main__":
    main()
