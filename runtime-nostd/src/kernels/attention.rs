//! Transformer building blocks: `RotaryEmbedding`.

/// `RotaryEmbedding` of `x` holding `[batch, heads, seq, head]` (`heads_first`) or
/// `[batch, seq, heads, head]`: the first `rd` values of each head vector turn by the
/// angle of its position, pairs `(i, i + rd/2)` or, `interleaved`, `(2i, 2i + 1)`:
/// `(c x1 - s x2, s x1 + c x2)` with `c, s` from row `p` of the caches (`rd / 2`
/// values a row), `p = pos[b, s]` or, without `pos`, `b * seq + s`. A position outside
/// the caches' `rows` gives NaN for that head vector. `g` is `[batch, heads, seq, head,
/// rd, rows]`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn rotary_embedding(
    x: &[f32],
    cos: &[f32],
    sin: &[f32],
    pos: Option<&[i64]>,
    y: &mut [f32],
    g: [usize; 6],
    heads_first: bool,
    interleaved: bool,
) {
    let [batch, heads, seq, head, rd, rows] = g;
    let half = rd / 2;
    let (x, y) = (
        &x[..batch * heads * seq * head],
        &mut y[..batch * heads * seq * head],
    );
    for b in 0..batch {
        for s in 0..seq {
            let row = match pos {
                Some(p) => usize::try_from(p[b * seq + s]).ok().filter(|&r| r < rows),
                None => Some(b * seq + s),
            };
            for h in 0..heads {
                let at = if heads_first {
                    ((b * heads + h) * seq + s) * head
                } else {
                    ((b * seq + s) * heads + h) * head
                };
                let (xv, yv) = (&x[at..at + head], &mut y[at..at + head]);
                yv[rd..].copy_from_slice(&xv[rd..]);
                let Some(row) = row else {
                    yv[..rd].fill(f32::NAN);
                    continue;
                };
                let (c, sn) = (&cos[row * half..][..half], &sin[row * half..][..half]);
                for i in 0..half {
                    let (i1, i2) = if interleaved {
                        (2 * i, 2 * i + 1)
                    } else {
                        (i, i + half)
                    };
                    let (x1, x2) = (xv[i1], xv[i2]);
                    yv[i1] = c[i] * x1 - sn[i] * x2;
                    yv[i2] = sn[i] * x1 + c[i] * x2;
                }
            }
        }
    }
}

/// The shape of one `Attention` (opset 23) node.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    /// Batch size.
    pub batch: usize,
    /// Query heads.
    pub q_heads: usize,
    /// Key and value heads (dividing `q_heads`).
    pub kv_heads: usize,
    /// Queries per head.
    pub q_len: usize,
    /// The new keys and values (without the past).
    pub kv_len: usize,
    /// Past keys and values (0 without a cache).
    pub past: usize,
    /// Query and key head size.
    pub dk: usize,
    /// Value head size.
    pub dv: usize,
    /// Q, K, V and Y are `[batch, seq, heads * head]` (else `[batch, heads, seq, head]`).
    pub three_d: bool,
    /// Key `j` is visible from query `i` only when `j <= i + past`.
    pub causal: bool,
    /// The factor of `Q K^T`, applied as its square root to each side.
    pub scale: f32,
    /// `softcap * tanh(x / softcap)` on the scores when positive.
    pub softcap: f32,
    /// What `qk_matmul_output` holds: 0 and 1 the scores (capped), 2 with the mask's
    /// bias, 3 the probabilities.
    pub mode: u8,
}

/// An attention mask element as the bias it adds: a bool allows (0) or masks (-inf).
pub trait MaskValue: Copy {
    /// The value added to a score.
    fn bias(self) -> f32;
}

impl MaskValue for f32 {
    #[inline(always)]
    fn bias(self) -> f32 {
        self
    }
}

impl MaskValue for bool {
    #[inline(always)]
    fn bias(self) -> f32 {
        if self { 0.0 } else { f32::NEG_INFINITY }
    }
}

/// A mask broadcast to `[batch, q_heads, q_len, len]`: `strides` per axis (0 where it
/// broadcasts); keys at `len` and after are masked.
#[derive(Clone, Copy, Debug)]
pub struct Mask<'a, M> {
    /// The mask as stored.
    pub values: &'a [M],
    /// Element strides of batch, head, query and key.
    pub strides: [usize; 4],
    /// Keys the mask covers.
    pub len: usize,
}

/// `Attention` (opset 23) as the ONNX reference computes it: the past keys and values
/// before the new ones (`present_k`, `present_v`, `[batch, kv_heads, past + kv_len,
/// head]`), query head `h` reading key/value head `h / (q_heads / kv_heads)`, scores
/// `(q sqrt(scale)) . (k sqrt(scale))`, capped, plus the mask's bias and the causal one
/// (key `j` visible from query `i` when `j <= i + past`), a softmax (a row whose bias
/// masks every key gives zeros), and the weighted values. `scores` is scratch of
/// `past + kv_len` values; `qk` gets `[batch, q_heads, q_len, past + kv_len]` as `mode`
/// says.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn attention<M: MaskValue>(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    mask: Option<Mask<'_, M>>,
    past_k: Option<&[f32]>,
    past_v: Option<&[f32]>,
    y: &mut [f32],
    present_k: &mut [f32],
    present_v: &mut [f32],
    qk: &mut [f32],
    scores: &mut [f32],
    g: Geometry,
) {
    let total = g.past + g.kv_len;
    // The presents: past then new, per batch and key/value head.
    for (present, past, new, d) in [
        (&mut *present_k, past_k, k, g.dk),
        (&mut *present_v, past_v, v, g.dv),
    ] {
        for b in 0..g.batch {
            for h in 0..g.kv_heads {
                let out = &mut present[(b * g.kv_heads + h) * total * d..][..total * d];
                if let Some(p) = past {
                    out[..g.past * d]
                        .copy_from_slice(&p[(b * g.kv_heads + h) * g.past * d..][..g.past * d]);
                }
                for j in 0..g.kv_len {
                    let at = if g.three_d {
                        ((b * g.kv_len + j) * g.kv_heads + h) * d
                    } else {
                        ((b * g.kv_heads + h) * g.kv_len + j) * d
                    };
                    out[(g.past + j) * d..][..d].copy_from_slice(&new[at..at + d]);
                }
            }
        }
    }
    let side = super::math::sqrt(g.scale);
    let reps = (g.q_heads / g.kv_heads.max(1)).max(1);
    let scores = &mut scores[..total];
    for b in 0..g.batch {
        for h in 0..g.q_heads {
            let hk = h / reps;
            let keys = &present_k[(b * g.kv_heads + hk) * total * g.dk..][..total * g.dk];
            let values = &present_v[(b * g.kv_heads + hk) * total * g.dv..][..total * g.dv];
            for i in 0..g.q_len {
                let qa = if g.three_d {
                    ((b * g.q_len + i) * g.q_heads + h) * g.dk
                } else {
                    ((b * g.q_heads + h) * g.q_len + i) * g.dk
                };
                let qv = &q[qa..qa + g.dk];
                let qk_row = &mut qk[((b * g.q_heads + h) * g.q_len + i) * total..][..total];
                let (mut bias_max, mut max) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
                for (j, s) in scores.iter_mut().enumerate() {
                    let key = &keys[j * g.dk..(j + 1) * g.dk];
                    let mut dot = 0.0f32;
                    for (&a, &c) in qv.iter().zip(key) {
                        dot += (a * side) * (c * side);
                    }
                    if g.softcap > 0.0 {
                        dot = g.softcap * libm::tanhf(dot / g.softcap);
                    }
                    let mut bias = match &mask {
                        Some(m) if j < m.len => {
                            let [sb, sh, si, sj] = m.strides;
                            m.values[b * sb + h * sh + i * si + j * sj].bias()
                        }
                        Some(_) => f32::NEG_INFINITY,
                        None => 0.0,
                    };
                    if g.causal && j > i + g.past {
                        bias += f32::NEG_INFINITY;
                    }
                    let with_bias = dot + bias;
                    qk_row[j] = if g.mode == 2 { with_bias } else { dot };
                    bias_max = if bias > bias_max || bias_max.is_nan() {
                        bias
                    } else {
                        bias_max
                    };
                    max = if with_bias > max { with_bias } else { max };
                    *s = with_bias;
                }
                let all_masked = bias_max == f32::NEG_INFINITY;
                let safe = if max == f32::NEG_INFINITY { 0.0 } else { max };
                let mut sum = 0.0f32;
                for s in scores.iter_mut() {
                    *s = super::math::exp(*s - safe);
                    sum += *s;
                }
                let sum = if sum == 0.0 { 1.0 } else { sum };
                for s in scores.iter_mut() {
                    *s = if all_masked { 0.0 } else { *s / sum };
                }
                if g.mode == 3 {
                    qk_row.copy_from_slice(scores);
                }
                let ya = if g.three_d {
                    ((b * g.q_len + i) * g.q_heads + h) * g.dv
                } else {
                    ((b * g.q_heads + h) * g.q_len + i) * g.dv
                };
                let out = &mut y[ya..ya + g.dv];
                out.fill(0.0);
                for (j, &p) in scores.iter().enumerate() {
                    for (o, &val) in out.iter_mut().zip(&values[j * g.dv..(j + 1) * g.dv]) {
                        *o += p * val;
                    }
                }
            }
        }
    }
}
