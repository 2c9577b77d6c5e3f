"""Independent reference values for tinyonnx's initializers (core/src/init.rs tests).

Re-implements the documented generator in NumPy/Python: SplitMix64, uniform draws
(next >> 11) * 2**-53, Box-Muller normals (both outputs), the fan rules, and for
`orthogonal` numpy.linalg.qr with the signs of R's diagonal made positive. Prints the
first values of each initializer as f32, which the Rust test pins.
"""

import math

import numpy as np

M = (1 << 64) - 1


def splitmix(seed):
    s = seed
    while True:
        s = (s + 0x9E3779B97F4A7C15) & M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        yield z ^ (z >> 31)


def uniforms(seed, n, low, high):
    g = splitmix(seed)
    return [low + (high - low) * ((next(g) >> 11) * 2.0**-53) for _ in range(n)]


def normals(seed, n):
    g = splitmix(seed)
    out = []
    while len(out) < n:
        u1 = 1.0 - (next(g) >> 11) * 2.0**-53
        u2 = (next(g) >> 11) * 2.0**-53
        r = math.sqrt(-2.0 * math.log(u1))
        t = 2.0 * math.pi * u2
        out += [r * math.cos(t), r * math.sin(t)]
    return out[:n]


def f32(values):
    return [float(np.float32(v)) for v in values[:4]]


shape = (4, 3)  # [in, out]: fan_in 4, fan_out 3
n = 12
print("he_normal", f32([v * math.sqrt(2 / 4) for v in normals(1, n)]))
print("he_uniform", f32(uniforms(2, n, -math.sqrt(6 / 4), math.sqrt(6 / 4))))
print("glorot_normal", f32([v * math.sqrt(2 / 7) for v in normals(3, n)]))
print("glorot_uniform", f32(uniforms(4, n, -math.sqrt(6 / 7), math.sqrt(6 / 7))))
print("uniform", f32(uniforms(5, n, -0.5, 2.0)))
print("normal", f32([1.0 + 0.1 * v for v in normals(6, n)]))
for rows, cols in [(4, 3), (3, 4)]:
    big, small = max(rows, cols), min(rows, cols)
    a = np.array(normals(7, big * small)).reshape(big, small)
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    w = q if rows >= cols else q.T
    print(f"orthogonal {rows}x{cols}", f32((2.0 * w).reshape(-1).tolist()))
