"""Fits tanh(x) ~ x P(x^2) / Q(x^2), P(0) = Q(0) = 1, on [0, X] to minimax relative
error (least squares with Lawson reweighting), then checks the f32 evaluation the
runtime does (no fused multiply-add: Rust does not contract)."""
import sys
import numpy as np

X, DP, DQ = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
xs = (X * (1 - np.cos(np.linspace(0, np.pi, 6000))) / 2)[1:]
z, f = xs * xs, np.tanh(xs) / xs
q_prev, w = np.ones_like(z), np.ones_like(z)
for _ in range(80):
    # f Q(z) - (P(z) - 1) = 1 - f ... with P = 1 + p1 z + ..., Q = 1 + q1 z + ...
    vz = np.vander(z, max(DP, DQ) + 1, increasing=True)
    a = np.concatenate([vz[:, 1 : DP + 1], -f[:, None] * vz[:, 1 : DQ + 1]], axis=1)
    b = f - 1.0
    s = w / (q_prev * f)
    c, *_ = np.linalg.lstsq(a * s[:, None], b * s, rcond=None)
    p = np.concatenate([[1.0], c[:DP]])
    q = np.concatenate([[1.0], c[DP:]])
    q_prev = np.polyval(q[::-1], z)
    err = (np.polyval(p[::-1], z) / q_prev - f) / f
    w = w * np.abs(err) ** 0.5
    w /= w.mean()
print("f64 max relative error", np.abs(err).max())
p32, q32 = p.astype(np.float32), q.astype(np.float32)


def tanh32(x):
    x = np.clip(x, np.float32(-X), np.float32(X))
    zz = x * x
    pv = np.full_like(zz, p32[-1])
    for k in range(DP - 1, -1, -1):
        pv = pv * zz + p32[k]
    qv = np.full_like(zz, q32[-1])
    for k in range(DQ - 1, -1, -1):
        qv = qv * zz + q32[k]
    return x * pv / qv


xt = np.linspace(-30, 30, 3_000_001).astype(np.float32)
t = tanh32(xt)
want = np.tanh(xt.astype(np.float64))
near = (np.abs(xt) < 0.625) & (xt != 0)
print("f32 tanh: abs", np.abs(t - want).max(), "rel |x|<0.625", np.abs((t - want) / want)[near].max(),
      "max", np.abs(t).max(), "at clamp", tanh32(np.float32([X]))[0])
s = np.float32(0.5) + np.float32(0.5) * tanh32(xt * np.float32(0.5))
print("f32 sigmoid via tanh(x/2): abs", np.abs(s - 1 / (1 + np.exp(-xt.astype(np.float64)))).max())
print("P", [float(v) for v in p32]); print("Q", [float(v) for v in q32])
