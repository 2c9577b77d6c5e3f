//! ONNX `GRU` (gate order z, r, h in W, R and B) and `RNN`, every direction over the
//! whole sequence, with dot products per gate row.

use super::unary::UnaryOp;

/// Run-time flags of one GRU or RNN node.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Pre-activation values are clamped to `[-clip, clip]` (infinity: no clip).
    pub clip: f32,
    /// A single direction that runs from the last step to the first.
    pub reverse: bool,
    /// GRU: apply the reset gate after the recurrence product (`linear_before_reset`).
    pub linear_before_reset: bool,
}

#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `GRU`: `y_h` holds the running state (from `h0` or zeros) and ends as the final
/// state; `scratch` holds `5 * HIDDEN` values.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn gru<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    G: UnaryOp,
>(
    x: &[f32],
    w: &[f32],
    r: &[f32],
    b: Option<&[f32]>,
    h0: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    scratch: &mut [f32],
) {
    let (g3, state) = (3 * HIDDEN, BATCH * HIDDEN);
    super::init_state(y_h, h0, DIRS * state);
    let (gx, rest) = scratch[..5 * HIDDEN].split_at_mut(g3);
    let (rh, new) = rest.split_at_mut(HIDDEN);
    let clip = |v: f32| v.clamp(-opts.clip, opts.clip);
    for d in 0..DIRS {
        let wd = &w[d * g3 * INPUT..(d + 1) * g3 * INPUT];
        let rd = &r[d * g3 * HIDDEN..(d + 1) * g3 * HIDDEN];
        let bias = |k: usize| b.map_or((0.0, 0.0), |b| (b[d * 2 * g3 + k], b[d * 2 * g3 + g3 + k]));
        let h = &mut y_h[d * state..(d + 1) * state];
        for step in 0..SEQ {
            let t = if d == 1 || opts.reverse {
                SEQ - 1 - step
            } else {
                step
            };
            for bt in 0..BATCH {
                let xt = &x[(t * BATCH + bt) * INPUT..(t * BATCH + bt + 1) * INPUT];
                let hp = &h[bt * HIDDEN..(bt + 1) * HIDDEN];
                for (k, g) in gx.iter_mut().enumerate() {
                    *g = bias(k).0 + dot(&wd[k * INPUT..(k + 1) * INPUT], xt);
                }
                // z and r.
                for k in 0..2 * HIDDEN {
                    let pre = gx[k] + bias(k).1 + dot(&rd[k * HIDDEN..(k + 1) * HIDDEN], hp);
                    gx[k] = F::apply(clip(pre));
                }
                for j in 0..HIDDEN {
                    rh[j] = gx[HIDDEN + j] * hp[j];
                }
                for j in 0..HIDDEN {
                    let k = 2 * HIDDEN + j;
                    let row = &rd[k * HIDDEN..(k + 1) * HIDDEN];
                    let rb = bias(k).1;
                    let pre = if opts.linear_before_reset {
                        gx[k] + gx[HIDDEN + j] * (dot(row, hp) + rb)
                    } else {
                        gx[k] + dot(row, rh) + rb
                    };
                    let cand = G::apply(clip(pre));
                    let z = gx[j];
                    new[j] = (1.0 - z) * cand + z * hp[j];
                }
                h[bt * HIDDEN..(bt + 1) * HIDDEN].copy_from_slice(new);
                let out = ((t * DIRS + d) * BATCH + bt) * HIDDEN;
                y[out..out + HIDDEN].copy_from_slice(new);
            }
        }
    }
}

/// `RNN`: `H_t = f(W x_t + R H_{t-1} + Wb + Rb)`; `scratch` holds `HIDDEN` values.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn rnn<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
>(
    x: &[f32],
    w: &[f32],
    r: &[f32],
    b: Option<&[f32]>,
    h0: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    scratch: &mut [f32],
) {
    let state = BATCH * HIDDEN;
    super::init_state(y_h, h0, DIRS * state);
    let new = &mut scratch[..HIDDEN];
    for d in 0..DIRS {
        let wd = &w[d * HIDDEN * INPUT..(d + 1) * HIDDEN * INPUT];
        let rd = &r[d * HIDDEN * HIDDEN..(d + 1) * HIDDEN * HIDDEN];
        let h = &mut y_h[d * state..(d + 1) * state];
        for step in 0..SEQ {
            let t = if d == 1 || opts.reverse {
                SEQ - 1 - step
            } else {
                step
            };
            for bt in 0..BATCH {
                let xt = &x[(t * BATCH + bt) * INPUT..(t * BATCH + bt + 1) * INPUT];
                let hp = &h[bt * HIDDEN..(bt + 1) * HIDDEN];
                for (j, v) in new.iter_mut().enumerate() {
                    let bias = b.map_or(0.0, |b| {
                        b[d * 2 * HIDDEN + j] + b[d * 2 * HIDDEN + HIDDEN + j]
                    });
                    let pre = bias
                        + dot(&wd[j * INPUT..(j + 1) * INPUT], xt)
                        + dot(&rd[j * HIDDEN..(j + 1) * HIDDEN], hp);
                    *v = F::apply(pre.clamp(-opts.clip, opts.clip));
                }
                h[bt * HIDDEN..(bt + 1) * HIDDEN].copy_from_slice(new);
                let out = ((t * DIRS + d) * BATCH + bt) * HIDDEN;
                y[out..out + HIDDEN].copy_from_slice(new);
            }
        }
    }
}
