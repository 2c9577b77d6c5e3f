//! Linear quantization: `QuantizeLinear`, `DequantizeLinear`, `DynamicQuantizeLinear`,
//! and the integer products `MatMulInteger` and `QLinearMatMul` (int32 accumulators).
//! Rounding and saturation follow ONNX Runtime's x86-64 kernels: the scaled value is
//! clamped to the range left by the zero point (NaN to its low end), then rounded to
//! nearest, ties to even.

/// An integer type values are quantized to.
pub trait Quant: Copy {
    /// The smallest value.
    const LOW: i32;
    /// The largest value.
    const HIGH: i32;
    /// The value as an i32.
    fn widen(self) -> i32;
    /// `v`, which lies in `LOW..=HIGH`.
    fn narrow(v: i32) -> Self;
}

macro_rules! quant {
    ($($t:ty),*) => {$(
        impl Quant for $t {
            const LOW: i32 = <$t>::MIN as i32;
            const HIGH: i32 = <$t>::MAX as i32;
            #[inline(always)]
            fn widen(self) -> i32 {
                self as i32
            }
            #[inline(always)]
            fn narrow(v: i32) -> Self {
                v as $t
            }
        }
    )*};
}
quant!(i8, u8, i16, u16);

/// `v * 1` rounded and offset into `Q` by `zp`: clamp to `[LOW - zp, HIGH - zp]` (NaN
/// to the low end), round half to even, add `zp`.
#[inline(always)]
fn requantize<Q: Quant>(v: f32, zp: i32) -> Q {
    let (lo, hi) = ((Q::LOW - zp) as f32, (Q::HIGH - zp) as f32);
    let v = if v > lo { v } else { lo };
    let v = if v < hi { v } else { hi };
    Q::narrow(libm::rintf(v) as i32 + zp)
}

/// The zero point of channel `c` (`zp` empty: 0; one value: per tensor).
#[inline(always)]
fn zero_at<Q: Quant>(zp: &[Q], c: usize) -> i32 {
    match zp.len() {
        0 => 0,
        1 => zp[0].widen(),
        _ => zp[c].widen(),
    }
}

/// `QuantizeLinear`: `y = saturate(round(x / scale) + zp)`, `scale` and `zp` per channel
/// when they hold `channels` values, the channel of element `i` being
/// `(i / inner) % channels`.
#[inline]
pub fn quantize<Q: Quant>(x: &[f32], y: &mut [Q], scale: &[f32], zp: &[Q], inner: usize) {
    let channels = scale.len().max(1);
    for (i, (o, &v)) in y.iter_mut().zip(x).enumerate() {
        let c = (i / inner.max(1)) % channels;
        *o = requantize(v / scale[c.min(scale.len() - 1)], zero_at(zp, c));
    }
}

/// `DequantizeLinear`: `y = (x - zp) * scale`, per channel as [`quantize`].
#[inline]
pub fn dequantize<Q: Copy + Into<i64>>(
    x: &[Q],
    y: &mut [f32],
    scale: &[f32],
    zp: &[Q],
    inner: usize,
) {
    let channels = scale.len().max(1);
    for (i, (o, &v)) in y.iter_mut().zip(x).enumerate() {
        let c = (i / inner.max(1)) % channels;
        let z: i64 = match zp.len() {
            0 => 0,
            1 => zp[0].into(),
            _ => zp[c].into(),
        };
        *o = (v.into() - z) as f32 * scale[c.min(scale.len() - 1)];
    }
}

/// `DynamicQuantizeLinear`: the range of `x` widened to hold 0, mapped onto u8; writes the
/// scale and zero point it chose.
#[inline]
pub fn dynamic_quantize(x: &[f32], y: &mut [u8], scale: &mut [f32], zp: &mut [u8]) {
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    for &v in x {
        lo = if v < lo { v } else { lo };
        hi = if v > hi { v } else { hi };
    }
    let s = (hi - lo) / 255.0;
    let z = if s == 0.0 {
        0
    } else {
        let z = -lo / s;
        libm::rintf(z.clamp(0.0, 255.0)) as u8
    };
    scale[0] = s;
    zp[0] = z;
    if s == 0.0 {
        // Every value is 0 (or the range is empty): all map to the zero point.
        y.fill(z);
        return;
    }
    quantize(x, y, &[s], &[z], 1);
}

/// The shape of an integer product: `batch` products of `[m, k] x [k, n]`, B shared
/// when `b_batched` is false.
#[derive(Debug, Clone, Copy)]
pub struct Product {
    /// Number of products.
    pub batch: usize,
    /// Rows of A.
    pub m: usize,
    /// Columns of A, rows of B.
    pub k: usize,
    /// Columns of B.
    pub n: usize,
    /// B has one matrix per product.
    pub b_batched: bool,
}

/// Every `(A - a_zp) x (B - b_zp)` dot product in i32, handed to `write(index, column,
/// value)`; `a_zp` per row of A or one value, `b_zp` per column of B or one value, either
/// empty for 0.
#[inline]
fn products<A: Quant, B: Quant>(
    a: &[A],
    b: &[B],
    a_zp: &[A],
    b_zp: &[B],
    s: Product,
    mut write: impl FnMut(usize, usize, i32),
) {
    let Product {
        batch,
        m,
        k,
        n,
        b_batched,
    } = s;
    for p in 0..batch {
        let (ab, bb, yb) = (p * m * k, if b_batched { p * k * n } else { 0 }, p * m * n);
        for i in 0..m {
            let za = zero_at(a_zp, i);
            for j in 0..n {
                let zb = zero_at(b_zp, j);
                let mut acc = 0i32;
                for t in 0..k {
                    let x = a[ab + i * k + t].widen() - za;
                    let w = b[bb + t * n + j].widen() - zb;
                    acc = acc.wrapping_add(x * w);
                }
                write(yb + i * n + j, j, acc);
            }
        }
    }
}

/// `MatMulInteger`: the products in i32.
#[inline]
pub fn matmul_integer<A: Quant, B: Quant>(
    a: &[A],
    b: &[B],
    y: &mut [i32],
    a_zp: &[A],
    b_zp: &[B],
    s: Product,
) {
    products(a, b, a_zp, b_zp, s, |at, _, v| y[at] = v);
}

/// `QLinearMatMul`: the products requantized into `Q`, `y = saturate(round(acc *
/// multiplier[column]) + y_zp)`, `multiplier` (`a_scale * b_scale / y_scale`) per column
/// or one value.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn qlinear_matmul<A: Quant, B: Quant, Q: Quant>(
    a: &[A],
    b: &[B],
    y: &mut [Q],
    a_zp: &[A],
    b_zp: &[B],
    multiplier: &[f32],
    y_zp: i32,
    s: Product,
) {
    products(a, b, a_zp, b_zp, s, |at, j, v| {
        let m = if multiplier.len() == 1 {
            multiplier[0]
        } else {
            multiplier[j]
        };
        y[at] = requantize(v as f32 * m, y_zp);
    });
}
