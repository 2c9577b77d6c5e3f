//! Quantization at compile time (`quantize = int8(...)` in a model): the rules that turn
//! float ranges and weights into 8-bit parameters, and the float run that measures the
//! ranges on calibration inputs (`eval`). The checker (`check/quantize.rs`) applies them
//! to its graph, writing the QDQ form ONNX Runtime's static quantizer writes: the plan
//! then runs that form as integer kernels, and the ONNX keeps it.
//!
//! The rules are the usual ones (ONNX Runtime's `quantize_static` defaults, TFLite's
//! int8 scheme): activations int8 per tensor and asymmetric over their calibrated range
//! widened to hold 0; weights int8 per output channel and symmetric (zero point 0,
//! levels -127..=127); a bias int32 at scale `input_scale * weight_scale[c]`, zero
//! point 0, so that it adds to the integer sums.

pub mod eval;

/// The most multiply-accumulates the calibration may spend over all its samples: about
/// a second of the compiler's float loop, so a large calibration file is a quick error
/// rather than a build that seems to hang.
pub const MAX_CALIBRATION_MACS: u64 = 400_000_000;

/// The smallest and largest value a tensor took over the calibration samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    /// The range of no values yet.
    pub const EMPTY: Range = Range {
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
    };

    /// Widens the range to hold `values` (NaN is skipped: it has no place on the grid).
    pub fn add(&mut self, values: &[f64]) {
        for &v in values.iter().filter(|v| !v.is_nan()) {
            self.lo = self.lo.min(v);
            self.hi = self.hi.max(v);
        }
    }
}

/// Scale and zero point of an int8 activation over `range`: the range widened to hold 0
/// (so that 0, a padding or a Relu's floor, is exact), 255 steps across it, the zero
/// point the level of 0. An empty or single-point range gets scale 1. Infinite ends
/// (a calibration that overflowed) are clamped to f32's range first.
pub fn activation(range: Range) -> (f32, i8) {
    let finite = |v: f64| {
        if v.is_finite() {
            v
        } else {
            v.signum() * f64::from(f32::MAX)
        }
    };
    let lo = finite(range.lo).min(0.0);
    let hi = finite(range.hi).max(0.0);
    let scale = ((hi - lo) / 255.0) as f32;
    let scale = if scale > 0.0 && scale.is_finite() {
        scale
    } else {
        1.0
    };
    let zp = (-128.0 - lo / f64::from(scale)).round_ties_even();
    (scale, zp.clamp(-128.0, 127.0) as i8)
}

/// Symmetric int8 weights per channel: `w` viewed as `[outer][channels][inner]` (the
/// channel axis in the middle), one scale per channel `max|w| / 127`, values rounded
/// half to even and held in -127..=127. A channel of zeros gets scale 1.
pub fn weights_per_channel(
    w: &[f32],
    outer: usize,
    channels: usize,
    inner: usize,
) -> (Vec<i8>, Vec<f32>) {
    let at = |o: usize, c: usize, i: usize| (o * channels + c) * inner + i;
    let mut scales = vec![0.0f32; channels];
    for (c, s) in scales.iter_mut().enumerate() {
        let mut max = 0.0f32;
        for o in 0..outer {
            for i in 0..inner {
                if let Some(v) = w.get(at(o, c, i)) {
                    max = max.max(v.abs());
                }
            }
        }
        *s = if max > 0.0 && max.is_finite() {
            max / 127.0
        } else {
            1.0
        };
    }
    let q = w
        .iter()
        .enumerate()
        .map(|(e, &v)| {
            let c = (e / inner.max(1)) % channels.max(1);
            let s = scales.get(c).copied().unwrap_or(1.0);
            (f64::from(v) / f64::from(s))
                .round_ties_even()
                .clamp(-127.0, 127.0) as i8
        })
        .collect();
    (q, scales)
}

/// A bias as int32 sums: the scale of each channel is `input_scale * weight_scale[c]`
/// (the product in f32, the value the plan checks a bias scale against) and the value
/// `b / scale` rounded half to even, held in i32's range.
pub fn bias(b: &[f32], input_scale: f32, weight_scales: &[f32]) -> (Vec<i32>, Vec<f32>) {
    let scales: Vec<f32> = weight_scales.iter().map(|&s| input_scale * s).collect();
    let q = b
        .iter()
        .enumerate()
        .map(|(c, &v)| {
            let s = scales.get(c).copied().unwrap_or(1.0);
            let q = if s > 0.0 {
                (f64::from(v) / f64::from(s)).round_ties_even()
            } else {
                0.0
            };
            q.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
        })
        .collect();
    (q, scales)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_activation_range_is_widened_to_hold_zero_and_zero_is_exact() {
        let (s, z) = activation(Range { lo: 0.5, hi: 2.55 });
        assert!((s - 0.01).abs() < 1e-9 && z == -128, "{s} {z}");
        // 0 is level z: -1 is 100 steps of 0.01 below it.
        let (s, z) = activation(Range { lo: -1.0, hi: 1.55 });
        assert!((s - 0.01).abs() < 1e-9 && z == -28, "{s} {z}");
        let (s, z) = activation(Range { lo: -2.0, hi: -1.0 });
        assert!((s - 2.0 / 255.0).abs() < 1e-9 && z == 127, "{s} {z}");
        assert_eq!(activation(Range::EMPTY), (1.0, -128));
        assert_eq!(activation(Range { lo: 0.0, hi: 0.0 }), (1.0, -128));
        let (s, _) = activation(Range {
            lo: f64::NEG_INFINITY,
            hi: 0.0,
        });
        assert!(s.is_finite());
    }

    #[test]
    fn weights_are_symmetric_per_channel() {
        // [in = 2][out = 3], channels along axis 1 (outer 2, inner 1).
        let w = [1.0, -0.5, 0.0, -2.54, 0.2, 0.0];
        let (q, s) = weights_per_channel(&w, 2, 3, 1);
        assert_eq!(s, [2.54 / 127.0, 0.5 / 127.0, 1.0]);
        assert_eq!(q, [50, -127, 0, -127, 51, 0]);
        // [out = 2][in = 2], channels along axis 0.
        let (q, s) = weights_per_channel(&[0.4, -1.0, 3.0, 1.2], 1, 2, 2);
        assert_eq!(s, [1.0 / 127.0, 3.0 / 127.0]);
        assert_eq!(q, [51, -127, 127, 51]);
    }

    #[test]
    fn a_bias_is_int32_at_the_product_of_the_scales() {
        let (q, s) = bias(&[1.0, -0.3], 0.5, &[0.1, 0.2]);
        assert_eq!(s, [0.5f32 * 0.1, 0.5f32 * 0.2]);
        assert_eq!(q, [20, -3]);
        let (q, _) = bias(&[1e30], 1e-10, &[1e-10]);
        assert_eq!(q, [i32::MAX]);
    }
}
