//! ONNX `LSTM`. Gate order in W, R and B is i, o, f, c; peepholes P are i, o, f.

use super::unary::UnaryOp;

/// Run-time flags of one LSTM node.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Pre-activation gate values are clamped to `[-clip, clip]` (infinity: no clip).
    pub clip: f32,
    /// Couple the forget gate to the input gate: `f = 1 - i`.
    pub input_forget: bool,
    /// A single direction that runs from the last step to the first.
    pub reverse: bool,
}

/// Runs every direction over the whole sequence. `y_h` and `y_c` hold the running state
/// (initialized from `h0`/`c0` or zeros) and end as the final state; `gates` is scratch
/// of `BATCH * 4 * HIDDEN` values.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn lstm<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    G: UnaryOp,
    H: UnaryOp,
>(
    x: &[f32],
    w: &[f32],
    r: &[f32],
    b: Option<&[f32]>,
    h0: Option<&[f32]>,
    c0: Option<&[f32]>,
    p: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    y_c: &mut [f32],
    gates: &mut [f32],
) {
    let g4 = 4 * HIDDEN;
    let x = &x[..SEQ * BATCH * INPUT];
    let gates = &mut gates[..BATCH * g4];
    let clip = |v: f32| v.clamp(-opts.clip, opts.clip);
    let state = BATCH * HIDDEN;
    match h0 {
        Some(h0) => y_h[..DIRS * state].copy_from_slice(&h0[..DIRS * state]),
        None => y_h[..DIRS * state].fill(0.0),
    }
    match c0 {
        Some(c0) => y_c[..DIRS * state].copy_from_slice(&c0[..DIRS * state]),
        None => y_c[..DIRS * state].fill(0.0),
    }
    for d in 0..DIRS {
        let wd = &w[d * g4 * INPUT..(d + 1) * g4 * INPUT];
        let rd = &r[d * g4 * HIDDEN..(d + 1) * g4 * HIDDEN];
        let bd = b.map(|b| &b[d * 2 * g4..(d + 1) * 2 * g4]);
        let pd = p.map(|p| &p[d * 3 * HIDDEN..(d + 1) * 3 * HIDDEN]);
        let h = &mut y_h[d * state..(d + 1) * state];
        let c = &mut y_c[d * state..(d + 1) * state];
        let backwards = d == 1 || opts.reverse;
        for step in 0..SEQ {
            let t = if backwards { SEQ - 1 - step } else { step };
            for bt in 0..BATCH {
                let xt = &x[(t * BATCH + bt) * INPUT..(t * BATCH + bt + 1) * INPUT];
                let ht = &h[bt * HIDDEN..(bt + 1) * HIDDEN];
                let gb = &mut gates[bt * g4..(bt + 1) * g4];
                for (k, out) in gb.iter_mut().enumerate() {
                    let mut s = bd.map_or(0.0, |bd| bd[k] + bd[g4 + k]);
                    let wrow = &wd[k * INPUT..(k + 1) * INPUT];
                    for (wv, xv) in wrow.iter().zip(xt) {
                        s += wv * xv;
                    }
                    let rrow = &rd[k * HIDDEN..(k + 1) * HIDDEN];
                    for (rv, hv) in rrow.iter().zip(ht) {
                        s += rv * hv;
                    }
                    *out = s;
                }
            }
            for bt in 0..BATCH {
                let gb = &gates[bt * g4..(bt + 1) * g4];
                for j in 0..HIDDEN {
                    let cj = &mut c[bt * HIDDEN + j];
                    let peep = |k: usize| pd.map_or(0.0, |pd| pd[k * HIDDEN + j]);
                    let i = F::apply(clip(gb[j] + peep(0) * *cj));
                    let f = if opts.input_forget {
                        1.0 - i
                    } else {
                        F::apply(clip(gb[2 * HIDDEN + j] + peep(2) * *cj))
                    };
                    let cand = G::apply(clip(gb[3 * HIDDEN + j]));
                    *cj = f * *cj + i * cand;
                    let o = F::apply(clip(gb[HIDDEN + j] + peep(1) * *cj));
                    let hv = o * H::apply(*cj);
                    h[bt * HIDDEN + j] = hv;
                    y[((t * DIRS + d) * BATCH + bt) * HIDDEN + j] = hv;
                }
            }
        }
    }
}
