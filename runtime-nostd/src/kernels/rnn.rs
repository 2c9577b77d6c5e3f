//! ONNX `GRU` (gate order z, r, h in W, R and B) and `RNN`, every direction over the
//! whole sequence, with dot products per gate row.

use super::GateWeights;
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
    // On the RISC-V cores without an FPU a rolled loop: each product there is two
    // library calls, and the unroller copied a constant length whole into each use
    // (there only a hidden length stops it; on the Cortex-M3 that took more flash than
    // it saved).
    if cfg!(all(tinyonnx_soft_float, target_arch = "riscv32")) {
        let n = super::opaque(a.len().min(b.len()));
        // From -0.0, as `Sum` starts: a sum of negative zeros stays one.
        let mut sum = -0.0;
        for (x, y) in a[..n].iter().zip(&b[..n]) {
            super::rolled();
            sum += x * y;
        }
        return sum;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `GRU`: `y_h` holds the running state (from `h0` or zeros) and ends as the final
/// state; `scratch` holds `tinyonnx_layout::gru::scratch` values. Packed weights
/// ([`GateWeights::Packed`]): per direction `tinyonnx_layout::gru::packed_len_per_dir`
/// values, `[W_zr; R_zr]^T` (`[INPUT + HIDDEN, 2H]`, z and r over the concatenated input
/// and state), `W_h^T` (`[INPUT, H]`) and `R_h^T` (`[HIDDEN, H]`), the candidate's two
/// products kept apart for the reset gate; biases `[DIRS, 4H]`: `Wb + Rb` of z and r,
/// the candidate's input bias (with its recurrence bias unless `linear_before_reset`),
/// its recurrence bias. Inlined, so that
/// generated code (whose weights are one kind or the other) carries only the routine it
/// uses.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
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
    weights: GateWeights<'_>,
    h0: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    scratch: &mut [f32],
) {
    match weights {
        GateWeights::Plain { w, r, b } => gru_plain::<SEQ, BATCH, INPUT, HIDDEN, DIRS, F, G>(
            x, w, r, b, h0, opts, y, y_h, scratch,
        ),
        GateWeights::Packed { wr, bias } => {
            // The options as constants too: one copy of the step, not one per option.
            macro_rules! packed {
                ($linear_before_reset:literal, $clip:literal) => {
                    gru_packed::<
                        SEQ,
                        BATCH,
                        INPUT,
                        HIDDEN,
                        DIRS,
                        F,
                        G,
                        $linear_before_reset,
                        $clip,
                    >(x, wr, bias, h0, opts, y, y_h, scratch)
                };
            }
            match (opts.linear_before_reset, opts.clip != f32::INFINITY) {
                (true, true) => packed!(true, true),
                (true, false) => packed!(true, false),
                (false, true) => packed!(false, true),
                (false, false) => packed!(false, false),
            }
        }
    }
}

/// [`gru`] with the weights packed: per step three matrix products over the whole
/// batch (z and r at once from `[x_t, h]`, the candidate's input and recurrence parts
/// apart), then one pass over the cells. `LINEAR_BEFORE_RESET` is
/// `opts.linear_before_reset`; `CLIP`, whether `opts.clip` is finite.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn gru_packed<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    G: UnaryOp,
    const LINEAR_BEFORE_RESET: bool,
    const CLIP: bool,
>(
    x: &[f32],
    wr: &[f32],
    bias: Option<&[f32]>,
    h0: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    scratch: &mut [f32],
) {
    use super::packed::{Strided, gemm_packed, packed_len};
    let (xh_len, g2, state) = (INPUT + HIDDEN, 2 * HIDDEN, BATCH * HIDDEN);
    let x = &x[..SEQ * BATCH * INPUT];
    let scratch = &mut scratch[..tinyonnx_layout::gru::scratch(BATCH, INPUT, HIDDEN, true)];
    let (xh, rest) = scratch.split_at_mut(BATCH * xh_len);
    let (zr, rest) = rest.split_at_mut(BATCH * g2);
    let (cand, rest) = rest.split_at_mut(state);
    let (rec, reset) = rest.split_at_mut(state);
    let (zr_len, wh_len) = (packed_len(xh_len, g2), packed_len(INPUT, HIDDEN));
    let per_dir = tinyonnx_layout::gru::packed_len_per_dir(INPUT, HIDDEN);
    let clip = |v: f32| {
        if CLIP {
            v.clamp(-opts.clip, opts.clip)
        } else {
            v
        }
    };
    super::copy::init_state(y_h, h0, DIRS * state);
    for d in 0..DIRS {
        let (zr_w, rest) = wr[d * per_dir..(d + 1) * per_dir].split_at(zr_len);
        let (wh, rh) = rest.split_at(wh_len);
        let bias_at = |from: usize, len: usize| {
            bias.map(|b| Strided {
                values: &b[d * 4 * HIDDEN + from..d * 4 * HIDDEN + from + len],
                rows: 0,
                cols: 1,
            })
        };
        let h = &mut y_h[d * state..(d + 1) * state];
        let backwards = d == 1 || opts.reverse;
        for step in 0..SEQ {
            let t = if backwards { SEQ - 1 - step } else { step };
            let xt = &x[t * BATCH * INPUT..(t + 1) * BATCH * INPUT];
            for (bt, row) in xh.chunks_exact_mut(xh_len).enumerate() {
                super::copy_run(&mut row[..INPUT], &xt[bt * INPUT..(bt + 1) * INPUT]);
                super::copy_run(&mut row[INPUT..], &h[bt * HIDDEN..(bt + 1) * HIDDEN]);
            }
            let b_zr = bias_at(0, g2);
            gemm_packed(
                (BATCH, xh_len, g2),
                xh,
                xh_len,
                zr_w,
                b_zr,
                zr,
                (g2, 1),
                false,
            );
            let b_wh = bias_at(g2, HIDDEN);
            gemm_packed(
                (BATCH, INPUT, HIDDEN),
                xt,
                INPUT,
                wh,
                b_wh,
                cand,
                (HIDDEN, 1),
                false,
            );
            if LINEAR_BEFORE_RESET {
                // h~ = g(x W_h + Wb_h + r (h R_h + Rb_h)).
                let b_rh = bias_at(3 * HIDDEN, HIDDEN);
                gemm_packed(
                    (BATCH, HIDDEN, HIDDEN),
                    h,
                    HIDDEN,
                    rh,
                    b_rh,
                    rec,
                    (HIDDEN, 1),
                    false,
                );
            } else {
                // h~ = g(x W_h + (r h) R_h + Wb_h + Rb_h): the reset state first.
                for bt in 0..BATCH {
                    let at = bt * HIDDEN..(bt + 1) * HIDDEN;
                    let rg = &zr[bt * g2 + HIDDEN..(bt + 1) * g2];
                    for ((o, &pre), &hv) in reset[at.clone()].iter_mut().zip(rg).zip(&h[at]) {
                        *o = F::apply(clip(pre)) * hv;
                    }
                }
                let init = Some(Strided {
                    values: cand,
                    rows: HIDDEN,
                    cols: 1,
                });
                gemm_packed(
                    (BATCH, HIDDEN, HIDDEN),
                    reset,
                    HIDDEN,
                    rh,
                    init,
                    rec,
                    (HIDDEN, 1),
                    false,
                );
            }
            gru_cells::<F, G, BATCH, HIDDEN, DIRS, LINEAR_BEFORE_RESET, CLIP>(
                (zr, cand, rec),
                (h, y),
                (t, d),
                opts,
            );
        }
    }
}

/// The state update of one step of a packed [`gru`] from its pre-activation gates
/// (`zr`: z and r of each batch row; `cand` and `rec`: the candidate's input and
/// recurrence products): each cell reads its gates once and writes the new state to
/// `h` and to step `t` of `y`. `CLIP`: clamp the pre-activations to `opts.clip`.
#[inline(always)]
fn gru_cells<
    F: UnaryOp,
    G: UnaryOp,
    const BATCH: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    const LINEAR_BEFORE_RESET: bool,
    const CLIP: bool,
>(
    (zr, cand, rec): (&[f32], &[f32], &[f32]),
    (h, y): (&mut [f32], &mut [f32]),
    (t, d): (usize, usize),
    opts: Options,
) {
    let clip = |v: f32| {
        if CLIP {
            v.clamp(-opts.clip, opts.clip)
        } else {
            v
        }
    };
    let g2 = 2 * HIDDEN;
    for bt in 0..BATCH {
        let out = ((t * DIRS + d) * BATCH + bt) * HIDDEN;
        let at = bt * HIDDEN..(bt + 1) * HIDDEN;
        let (zg, rg) = zr[bt * g2..(bt + 1) * g2].split_at(HIDDEN);
        let (cb, eb) = (&cand[at.clone()], &rec[at.clone()]);
        let (hb, yb) = (&mut h[at], &mut y[out..out + HIDDEN]);
        for j in 0..HIDDEN {
            let pre = if LINEAR_BEFORE_RESET {
                cb[j] + F::apply(clip(rg[j])) * eb[j]
            } else {
                eb[j]
            };
            let (z, n) = (F::apply(clip(zg[j])), G::apply(clip(pre)));
            let v = (1.0 - z) * n + z * hb[j];
            hb[j] = v;
            yb[j] = v;
        }
    }
}

/// [`gru`] with the weights as in the ONNX: dot products per gate row.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn gru_plain<
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
    super::copy::init_state(y_h, h0, DIRS * state);
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
                super::copy_run(&mut h[bt * HIDDEN..(bt + 1) * HIDDEN], new);
                let out = ((t * DIRS + d) * BATCH + bt) * HIDDEN;
                super::copy_run(&mut y[out..out + HIDDEN], new);
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
    super::copy::init_state(y_h, h0, DIRS * state);
    // On the RISC-V cores without an FPU, where `dot` is a loop, the cells a loop too.
    let roll = cfg!(all(tinyonnx_soft_float, target_arch = "riscv32"));
    let new = &mut scratch[..if roll { super::opaque(HIDDEN) } else { HIDDEN }];
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
                    if roll {
                        super::rolled();
                    }
                    let bias = b.map_or(0.0, |b| {
                        b[d * 2 * HIDDEN + j] + b[d * 2 * HIDDEN + HIDDEN + j]
                    });
                    let pre = bias
                        + dot(&wd[j * INPUT..(j + 1) * INPUT], xt)
                        + dot(&rd[j * HIDDEN..(j + 1) * HIDDEN], hp);
                    *v = F::apply(pre.clamp(-opts.clip, opts.clip));
                }
                super::copy_run(&mut h[bt * HIDDEN..(bt + 1) * HIDDEN], new);
                let out = ((t * DIRS + d) * BATCH + bt) * HIDDEN;
                super::copy_run(&mut y[out..out + HIDDEN], new);
            }
        }
    }
}
