//! The discrete Fourier transform (`DFT`, `STFT`): each bin summed in f64 from a twiddle
//! table the compiler computed, so bins the definition makes zero come out within a
//! rounding of zero. The direct O(n^2) sum; a device that transforms long frames wants
//! an FFT instead.

use super::num::{CastTo, Float};

/// One transform of length `len`: bins `0..bins` of `sum_j x(j) e^(-+2 pi i j k / len)`
/// (the sign `+` and a factor `1 / len` when `inverse`), each passed to `put(k, re, im)`.
/// `tw` holds `cos, sin` of `2 pi m / len` for `m` in `0..len`.
#[inline]
fn transform(
    x: impl Fn(usize) -> (f64, f64),
    len: usize,
    bins: usize,
    inverse: bool,
    tw: &[f64],
    mut put: impl FnMut(usize, f64, f64),
) {
    let scale = if inverse { 1.0 / len as f64 } else { 1.0 };
    for k in 0..bins {
        let (mut re, mut im, mut m) = (0.0f64, 0.0f64, 0usize);
        for j in 0..len {
            let (xr, xi) = x(j);
            let (c, s) = (tw[2 * m], tw[2 * m + 1]);
            // x e^(-i t) = (xr c + xi s) + i (xi c - xr s); the inverse flips s.
            let s = if inverse { -s } else { s };
            re += xr * c + xi * s;
            im += xi * c - xr * s;
            m += k;
            if m >= len {
                m -= len;
            }
        }
        put(k, re * scale, im * scale);
    }
}

/// `DFT` of `x` viewed as `[outer, n_in, inner, c_in]` (`c_in` 1: real, 2: complex)
/// along the `n_in` axis, into `y` as `[outer, bins, inner, c_out]`: the signal padded
/// with zeros or cut to `len`. With `hermitian` (an inverse of a one-sided spectrum)
/// the bins past `n_in` are the conjugates of the mirrored ones, and `c_out` 1 keeps
/// the real part. `g` is `[outer, n_in, inner, c_in, len, bins, c_out]`.
#[inline(never)]
pub fn dft<T: Float + CastTo<f64>>(
    x: &[T],
    y: &mut [T],
    g: [usize; 7],
    inverse: bool,
    hermitian: bool,
    tw: &[f64],
) where
    f64: CastTo<T>,
{
    let [outer, n_in, inner, c_in, len, bins, c_out] = g;
    let x = &x[..outer * n_in * inner * c_in];
    let y = &mut y[..outer * bins * inner * c_out];
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| {
                let base = ((o * n_in + j) * inner + i) * c_in;
                let im = if c_in == 2 { x[base + 1].cast() } else { 0.0 };
                (x[base].cast(), im)
            };
            let sample = |j: usize| {
                if j < n_in {
                    at(j)
                } else if hermitian && len - j < n_in {
                    let (re, im) = at(len - j);
                    (re, -im)
                } else {
                    (0.0, 0.0)
                }
            };
            transform(sample, len, bins, inverse, tw, |k, re, im| {
                let base = ((o * bins + k) * inner + i) * c_out;
                y[base] = re.cast();
                if c_out == 2 {
                    y[base + 1] = im.cast();
                }
            });
        }
    }
}

/// `STFT` of `x` as `[batch, samples, c_in]`: frame `f` is the `len` samples from `f *
/// step`, times `window` when given, transformed into `bins` bins of `y` as `[batch,
/// frames, bins, 2]`. `g` is `[batch, samples, c_in, frames, step, len, bins]`.
#[inline(never)]
pub fn stft<T: Float + CastTo<f64>>(
    x: &[T],
    window: Option<&[T]>,
    y: &mut [T],
    g: [usize; 7],
    tw: &[f64],
) where
    f64: CastTo<T>,
{
    let [batch, samples, c_in, frames, step, len, bins] = g;
    let x = &x[..batch * samples * c_in];
    let y = &mut y[..batch * frames * bins * 2];
    for b in 0..batch {
        for f in 0..frames {
            let sample = |j: usize| {
                let base = (b * samples + f * step + j) * c_in;
                let w: f64 = window.map_or(1.0, |w| w[j].cast());
                let im: f64 = if c_in == 2 { x[base + 1].cast() } else { 0.0 };
                (x[base].cast() * w, im * w)
            };
            transform(sample, len, bins, false, tw, |k, re, im| {
                let base = ((b * frames + f) * bins + k) * 2;
                y[base] = re.cast();
                y[base + 1] = im.cast();
            });
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn table(len: usize) -> std::vec::Vec<f64> {
        (0..len)
            .flat_map(|m| {
                let t = 2.0 * core::f64::consts::PI * m as f64 / len as f64;
                [libm::cos(t), libm::sin(t)]
            })
            .collect()
    }

    #[test]
    fn forward_inverse_and_one_sided() {
        // x = [1, 2, 3, 4]: X = [10, -2+2i, -2, -2-2i].
        let x = [1.0f32, 2.0, 3.0, 4.0];
        let tw = table(4);
        let mut y = [0.0f32; 8];
        dft(&x, &mut y, [1, 4, 1, 1, 4, 4, 2], false, false, &tw);
        let want = [10.0, 0.0, -2.0, 2.0, -2.0, 0.0, -2.0, -2.0];
        for (a, b) in y.iter().zip(want) {
            assert!((a - b).abs() < 1e-5, "{y:?}");
        }
        let mut back = [0.0f32; 8];
        dft(&y, &mut back, [1, 4, 1, 2, 4, 4, 2], true, false, &tw);
        for (k, v) in x.iter().enumerate() {
            assert!((back[2 * k] - v).abs() < 1e-5 && back[2 * k + 1].abs() < 1e-5);
        }
        // The one-sided spectrum (3 bins) back to the 4 real samples.
        let mut real = [0.0f32; 4];
        dft(&y[..6], &mut real, [1, 3, 1, 2, 4, 4, 1], true, true, &tw);
        for (a, b) in real.iter().zip(x) {
            assert!((a - b).abs() < 1e-5, "{real:?}");
        }
    }
}
