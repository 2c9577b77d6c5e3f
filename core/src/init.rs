//! Weight initializers, evaluated at compile time.
//!
//! Random initializers use SplitMix64 seeded with `seed`, uniform draws
//! `(next_u64() >> 11) * 2^-53` in `[0, 1)`, and normal draws by Box-Muller
//! (`sqrt(-2 ln(1 - u1)) * cos(2 pi u2)`, then the `sin` twin), all in f64 with the
//! pure-Rust `libm`, rounded to f32 at the end: the same seed gives the same bytes on
//! every host.
//!
//! Fans: rank 0 and 1 use the only dimension (or 1) for both; rank 2 is ONNX's
//! `[in, out]` layout of a `Gemm`/`MatMul` B, so `fan_in = shape[0]`,
//! `fan_out = shape[1]`; rank 3 and more is a convolution kernel `[out, in, k...]`,
//! so `fan_in = in * prod(k)`, `fan_out = out * prod(k)`.

use proc_macro2::Span;

use crate::syntax::{Arg, Call, Expr};
use crate::types::DType;

/// A SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform draw in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// `n` standard normal draws (Box-Muller, both outputs used).
pub fn normals(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(n + 1);
    while out.len() < n {
        let u1 = 1.0 - rng.next_f64();
        let u2 = rng.next_f64();
        let r = libm::sqrt(-2.0 * libm::log(u1));
        let t = 2.0 * core::f64::consts::PI * u2;
        out.push(r * libm::cos(t));
        out.push(r * libm::sin(t));
    }
    out.truncate(n);
    out
}

/// `n` uniform draws in `[low, high)`.
pub fn uniforms(seed: u64, n: usize, low: f64, high: f64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| low + (high - low) * rng.next_f64())
        .collect()
}

/// `(fan_in, fan_out)` of a weight shape, as documented above.
pub fn fans(shape: &[usize]) -> (usize, usize) {
    match shape.len() {
        0 => (1, 1),
        1 => (shape[0], shape[0]),
        2 => (shape[0], shape[1]),
        _ => {
            let rec: usize = shape[2..].iter().product();
            (shape[1] * rec, shape[0] * rec)
        }
    }
}

/// A (semi-)orthogonal matrix: the weight viewed as `[shape[0], rest]`, from the QR
/// decomposition of a standard normal matrix (drawn as `[max, min]` row-major), its `Q`
/// with the signs that make `R`'s diagonal positive, transposed when there are fewer rows
/// than columns, times `gain`. Modified Gram-Schmidt in f64 gives that `Q` directly.
#[allow(clippy::needless_range_loop)] // Index loops mirror the algorithm.
pub fn orthogonal(seed: u64, shape: &[usize], gain: f64) -> Vec<f32> {
    let rows = shape.first().copied().unwrap_or(1);
    let cols: usize = shape.iter().skip(1).product::<usize>().max(1);
    let (n, k) = (rows.max(cols), rows.min(cols));
    let z = normals(seed, n * k);
    // Columns of the n x k matrix.
    let mut q: Vec<Vec<f64>> = (0..k)
        .map(|j| (0..n).map(|i| z[i * k + j]).collect())
        .collect();
    for j in 0..k {
        for p in 0..j {
            let dot: f64 = (0..n).map(|i| q[p][i] * q[j][i]).sum();
            for i in 0..n {
                q[j][i] -= dot * q[p][i];
            }
        }
        let norm = q[j].iter().map(|v| v * v).sum::<f64>().sqrt();
        for v in &mut q[j] {
            *v /= norm;
        }
    }
    // Element (r, c) of the weight: Q is n x k; transposed when rows < cols.
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            let v = if rows >= cols { q[c][r] } else { q[r][c] };
            out.push((gain * v) as f32);
        }
    }
    out
}

/// The initializer names the DSL knows, for messages.
pub const NAMES: &[&str] = &[
    "zeros",
    "ones",
    "constant",
    "uniform",
    "normal",
    "he_normal",
    "he_uniform",
    "glorot_normal",
    "glorot_uniform",
    "he",
    "glorot",
    "kaiming_normal",
    "kaiming_uniform",
    "xavier_normal",
    "xavier_uniform",
    "orthogonal",
    "load",
];

/// An initializer error: where and what.
pub type InitError = (Span, String);

/// A literal must hold exactly the values of the declared shape.
fn check_len(expr: &Expr, len: usize, shape: &[usize]) -> Result<(), InitError> {
    let numel: usize = shape.iter().product();
    if len == numel {
        return Ok(());
    }
    Err((
        expr.span(),
        format!("the literal has {len} values, the declared shape {shape:?} needs {numel}"),
    ))
}

/// Evaluates an initializer expression for a weight of `shape`.
pub fn evaluate(expr: &Expr, shape: &[usize]) -> Result<Vec<f32>, InitError> {
    // Every value made here passes through rustc as bytes of the expansion: a fill of
    // gigabytes would exhaust the build instead of failing it.
    let values = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if values.is_none_or(|n| n > MAX_INIT_VALUES) {
        return Err((
            expr.span(),
            format!(
                "an initializer makes at most {MAX_INIT_VALUES} values (256 MiB of f32) at \
                 compile time; this weight has {}",
                values.map_or_else(|| "more than usize::MAX".to_string(), |n| n.to_string())
            ),
        ));
    }
    match expr {
        Expr::List(..) | Expr::Int(..) | Expr::Float(..) => {
            let mut values = Vec::new();
            flatten(expr, &mut values)?;
            check_len(expr, values.len(), shape)?;
            Ok(values)
        }
        Expr::Name(name) => evaluate_call(
            &Call {
                func: name.clone(),
                args: Vec::new(),
                close: name.span(),
            },
            shape,
        ),
        Expr::Call(call) => evaluate_call(call, shape),
        other => Err((
            other.span(),
            format!(
                "expected an initializer ({}, or a literal list), found {}",
                NAMES.join(", "),
                other.describe()
            ),
        )),
    }
}

/// The most values an initializer makes: 2^26, 256 MiB of f32.
pub const MAX_INIT_VALUES: usize = 1 << 26;

/// Evaluates an integer initializer (`zeros`, `ones`, `constant(n)` or a literal list).
pub fn evaluate_i64(expr: &Expr, shape: &[usize]) -> Result<Vec<i64>, InitError> {
    match expr {
        Expr::List(..) | Expr::Int(..) => {
            let mut values = Vec::new();
            flatten_i64(expr, &mut values)?;
            check_len(expr, values.len(), shape)?;
            Ok(values)
        }
        _ => {
            let floats = evaluate(expr, shape)?;
            if floats.iter().any(|v| v.fract() != 0.0) {
                return Err((
                    expr.span(),
                    "an i64 weight needs integer values: use zeros, ones, constant(n) or a literal list"
                        .to_string(),
                ));
            }
            Ok(floats.into_iter().map(|v| v as i64).collect())
        }
    }
}

/// The values an integer (or bool) weight of `dtype` may hold, `None` for the others
/// (i64 and the floats are evaluated apart).
pub fn integer_range(dtype: DType) -> Option<(f64, f64)> {
    Some(match dtype {
        DType::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        DType::I8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
        DType::U8 => (0.0, f64::from(u8::MAX)),
        DType::I16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
        DType::U16 => (0.0, f64::from(u16::MAX)),
        DType::U32 => (0.0, f64::from(u32::MAX)),
        DType::U64 => (0.0, 9_007_199_254_740_992.0),
        DType::Bool => (0.0, 1.0),
        _ => return None,
    })
}

/// Evaluates an initializer for a weight of dtype f64, i32, i8, u8 or bool, as f64
/// values: float literals keep their f64 precision; integer types need integers in their
/// range; bool takes `true`/`false` or 0/1 (so `zeros` and `ones` work).
pub fn evaluate_typed(expr: &Expr, shape: &[usize], dtype: DType) -> Result<Vec<f64>, InitError> {
    let values: Vec<(f64, Span)> = match expr {
        Expr::List(..) | Expr::Int(..) | Expr::Float(..) | Expr::Bool(..) => {
            let mut values = Vec::new();
            flatten_f64(expr, &mut values)?;
            check_len(expr, values.len(), shape)?;
            values
        }
        _ => evaluate(expr, shape)?
            .into_iter()
            .map(|v| (f64::from(v), expr.span()))
            .collect(),
    };
    let Some((lo, hi)) = integer_range(dtype) else {
        return Ok(values.into_iter().map(|(v, _)| v).collect());
    };
    if let Some((bad, span)) = values
        .iter()
        .find(|(v, _)| v.fract() != 0.0 || *v < lo || *v > hi)
    {
        let what = if dtype == DType::Bool {
            "true, false, 0 or 1".to_string()
        } else {
            format!("integers in {lo}..={hi}")
        };
        return Err((*span, format!("`{dtype}` holds {what}; {bad} is not one")));
    }
    Ok(values.into_iter().map(|(v, _)| v).collect())
}

fn flatten_f64(expr: &Expr, out: &mut Vec<(f64, Span)>) -> Result<(), InitError> {
    match expr {
        Expr::List(items, _) => items.iter().try_for_each(|e| flatten_f64(e, out)),
        Expr::Int(v, span) => {
            out.push((*v as f64, *span));
            Ok(())
        }
        Expr::Float(v, span) => {
            out.push((*v, *span));
            Ok(())
        }
        Expr::Bool(b, span) => {
            out.push((f64::from(u8::from(*b)), *span));
            Ok(())
        }
        other => Err((
            other.span(),
            format!(
                "expected a number in the literal, found {}",
                other.describe()
            ),
        )),
    }
}

fn flatten_i64(expr: &Expr, out: &mut Vec<i64>) -> Result<(), InitError> {
    match expr {
        Expr::List(items, _) => items.iter().try_for_each(|e| flatten_i64(e, out)),
        Expr::Int(v, _) => {
            out.push(*v);
            Ok(())
        }
        other => Err((
            other.span(),
            format!(
                "expected an integer in the literal, found {}",
                other.describe()
            ),
        )),
    }
}

fn flatten(expr: &Expr, out: &mut Vec<f32>) -> Result<(), InitError> {
    match expr {
        Expr::List(items, _) => items.iter().try_for_each(|e| flatten(e, out)),
        Expr::Int(v, _) => {
            out.push(*v as f32);
            Ok(())
        }
        Expr::Float(v, _) => {
            out.push(*v as f32);
            Ok(())
        }
        other => Err((
            other.span(),
            format!(
                "expected a number in the literal, found {}",
                other.describe()
            ),
        )),
    }
}

/// Named numeric arguments of an initializer call, with positional ones rejected.
struct Args<'a> {
    call: &'a Call,
    allowed: &'static [&'static str],
}

impl Args<'_> {
    fn check(&self) -> Result<(), InitError> {
        for arg in &self.call.args {
            match arg {
                Arg::Pos(e) if self.allowed == ["value"] => {
                    let _ = e;
                }
                Arg::Pos(e) => {
                    return Err((
                        e.span(),
                        format!(
                            "`{}` takes named arguments only ({})",
                            self.call.func,
                            self.allowed_list()
                        ),
                    ));
                }
                Arg::Named(n, _) if !self.allowed.contains(&n.to_string().as_str()) => {
                    return Err((
                        n.span(),
                        format!(
                            "`{}` has no argument `{n}`; it takes {}",
                            self.call.func,
                            self.allowed_list()
                        ),
                    ));
                }
                Arg::Named(..) => {}
            }
        }
        Ok(())
    }

    fn allowed_list(&self) -> String {
        if self.allowed.is_empty() {
            "no arguments".to_string()
        } else {
            self.allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    fn number(&self, name: &str) -> Result<Option<f64>, InitError> {
        let found = self.call.args.iter().find_map(|a| match a {
            Arg::Named(n, e) if n == name => Some(e),
            Arg::Pos(e) if name == "value" => Some(e),
            _ => None,
        });
        match found {
            None => Ok(None),
            Some(Expr::Int(v, _)) => Ok(Some(*v as f64)),
            Some(Expr::Float(v, _)) => Ok(Some(*v)),
            Some(e) => Err((
                e.span(),
                format!("`{name}` must be a number, found {}", e.describe()),
            )),
        }
    }

    fn seed(&self) -> Result<u64, InitError> {
        let found = self.call.args.iter().find_map(|a| match a {
            Arg::Named(n, e) if n == "seed" => Some(e),
            _ => None,
        });
        match found {
            Some(Expr::Int(v, span)) => u64::try_from(*v)
                .map_err(|_| (*span, format!("`seed` must be non-negative, got {v}"))),
            Some(e) => Err((
                e.span(),
                format!("`seed` must be an integer, found {}", e.describe()),
            )),
            None => Err((
                self.call.func.span(),
                format!(
                    "`{}` needs a seed, as in `{}(seed = 1)`",
                    self.call.func, self.call.func
                ),
            )),
        }
    }
}

fn evaluate_call(call: &Call, shape: &[usize]) -> Result<Vec<f32>, InitError> {
    let numel: usize = shape.iter().product();
    let name = call.func.to_string();
    let (fan_in, fan_out) = fans(shape);
    let allowed: &'static [&'static str] = match name.as_str() {
        "zeros" | "ones" => &[],
        "constant" => &["value"],
        "uniform" => &["low", "high", "seed"],
        "normal" => &["mean", "std", "seed"],
        "he_normal" | "he_uniform" | "glorot_normal" | "glorot_uniform" | "he" | "glorot"
        | "kaiming_normal" | "kaiming_uniform" | "xavier_normal" | "xavier_uniform" => &["seed"],
        "orthogonal" => &["gain", "seed"],
        _ => {
            let hint = crate::suggest::did_you_mean(&name, NAMES)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            return Err((
                call.func.span(),
                format!(
                    "unknown initializer `{name}`: {hint}expected one of {}, or a literal list",
                    NAMES.join(", ")
                ),
            ));
        }
    };
    let args = Args { call, allowed };
    args.check()?;
    let to_f32 = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect();
    let normal = |std: f64| -> Result<Vec<f32>, InitError> {
        Ok(to_f32(
            normals(args.seed()?, numel)
                .into_iter()
                .map(|z| z * std)
                .collect(),
        ))
    };
    let uniform = |bound: f64| -> Result<Vec<f32>, InitError> {
        Ok(to_f32(uniforms(args.seed()?, numel, -bound, bound)))
    };
    match name.as_str() {
        "zeros" => Ok(vec![0.0; numel]),
        "ones" => Ok(vec![1.0; numel]),
        "constant" => {
            let v = args.number("value")?.ok_or_else(|| {
                (
                    call.func.span(),
                    "`constant` needs a value, as in `constant(0.5)`".to_string(),
                )
            })?;
            Ok(vec![v as f32; numel])
        }
        "uniform" => {
            let low = args.number("low")?.unwrap_or(0.0);
            let high = args.number("high")?.unwrap_or(1.0);
            if high <= low {
                return Err((
                    call.func.span(),
                    format!("`uniform` needs low < high, got low = {low}, high = {high}"),
                ));
            }
            Ok(to_f32(uniforms(args.seed()?, numel, low, high)))
        }
        "normal" => {
            let mean = args.number("mean")?.unwrap_or(0.0);
            let std = args.number("std")?.unwrap_or(1.0);
            Ok(to_f32(
                normals(args.seed()?, numel)
                    .into_iter()
                    .map(|z| mean + std * z)
                    .collect(),
            ))
        }
        "he_normal" | "he" | "kaiming_normal" => normal((2.0 / fan_in as f64).sqrt()),
        "he_uniform" | "kaiming_uniform" => uniform((6.0 / fan_in as f64).sqrt()),
        "glorot_normal" | "xavier_normal" => normal((2.0 / (fan_in + fan_out) as f64).sqrt()),
        "orthogonal" => {
            let gain = args.number("gain")?.unwrap_or(1.0);
            Ok(orthogonal(args.seed()?, shape, gain))
        }
        _ => uniform((6.0 / (fan_in + fan_out) as f64).sqrt()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_beyond_the_limit_are_refused_before_anything_is_made() {
        let zeros = Expr::Name(syn::Ident::new("zeros", Span::call_site()));
        // 1 GiB of f32: refused (making it first would take the gigabyte).
        let err = evaluate(&zeros, &[1 << 28]).unwrap_err().1;
        assert!(
            err.contains("at most 67108864 values") && err.contains("has 268435456"),
            "{err}"
        );
        let err = evaluate(&zeros, &[1 << 40, 1 << 40]).unwrap_err().1;
        assert!(err.contains("more than usize::MAX"), "{err}");
        assert_eq!(evaluate(&zeros, &[2, 3]).unwrap(), [0.0; 6]);
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs for seed 1234567, computed by an independent Python transcription
        // of the reference C implementation (Vigna, splitmix64.c).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn normal_draws_have_unit_variance() {
        let z = normals(7, 100_000);
        let mean = z.iter().sum::<f64>() / z.len() as f64;
        let var = z.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / z.len() as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "variance {var}");
    }

    #[test]
    fn fans_follow_the_documented_layouts() {
        assert_eq!(fans(&[784, 256]), (784, 256));
        assert_eq!(fans(&[32, 3, 3, 3]), (27, 288));
    }

    /// The first values of each initializer for a weight [4, 3], against
    /// examples/train/init_reference.py: an independent NumPy transcription of the
    /// documented generator (numpy.linalg.qr for `orthogonal`).
    #[test]
    #[allow(clippy::excessive_precision)] // The values as the reference script printed them.
    fn initializers_match_the_independent_reference() {
        let cases: [(&str, &[usize], [f32; 4]); 8] = [
            (
                "he_normal(seed = 1)",
                &[4, 3],
                [-0.024230655, -0.91401225, -1.7678146, 0.6445042],
            ),
            (
                "he_uniform(seed = 2)",
                &[4, 3],
                [0.22336832, 0.61028957, 0.2342645, 0.6501415],
            ),
            (
                "glorot_normal(seed = 3)",
                &[4, 3],
                [-0.08060028, -0.24962765, 0.660652, 0.3255399],
            ),
            (
                "glorot_uniform(seed = 4)",
                &[4, 3],
                [-0.12691917, 0.7265963, 0.66495574, -0.015231104],
            ),
            (
                "uniform(low = -0.5, high = 2.0, seed = 5)",
                &[4, 3],
                [0.4669201, 1.3807676, 0.08177292, -0.25165147],
            ),
            (
                "normal(mean = 1.0, std = 0.1, seed = 6)",
                &[4, 3],
                [0.84515196, 1.0543091, 1.0268391, 1.0209645],
            ),
            (
                "orthogonal(gain = 2.0, seed = 7)",
                &[4, 3],
                [1.2553927, 0.41531903, -1.218569, -1.3589875],
            ),
            (
                "orthogonal(gain = 2.0, seed = 7)",
                &[3, 4],
                [1.2553927, -1.3589875, -0.67219, 0.35398158],
            ),
        ];
        for (src, shape, want) in cases {
            let expr: Expr = syn::parse_str(src).unwrap();
            let got = evaluate(&expr, shape).unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (g - w).abs() <= 1e-6 * w.abs().max(1.0),
                    "{src} {shape:?}: {got:?} vs {want:?}"
                );
            }
        }
    }

    #[test]
    fn orthogonal_rows_are_orthonormal() {
        let w = orthogonal(3, &[5, 8], 1.0);
        for a in 0..5 {
            for b in 0..5 {
                let dot: f32 = (0..8).map(|k| w[a * 8 + k] * w[b * 8 + k]).sum();
                let want = if a == b { 1.0 } else { 0.0 };
                assert!((dot - want).abs() < 1e-5, "rows {a}, {b}: {dot}");
            }
        }
    }
}
