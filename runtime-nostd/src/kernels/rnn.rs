//! ONNX `GRU` (gate order z, r, h in W, R and B) and `RNN`, every direction over the
//! whole sequence, with dot products per gate row.

use super::GateWeights;
use super::gates::{Activation, Fixed, Gate, RecurrentSizes, Sizes, Static};
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
    // As `sum` adds the products, from -0.0; fused on RISC-V F (`math::mul_add`).
    a.iter()
        .zip(b)
        .fold(-0.0, |sum, (x, y)| super::math::mul_add(*x, *y, sum))
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
    let sizes = Fixed::<SEQ, BATCH, INPUT, HIDDEN, DIRS>;
    let acts = (Static::<F>::new(), Static::<G>::new());
    match weights {
        GateWeights::Plain { w, r, b } => {
            gru_plain(sizes, acts, x, w, r, b, h0, opts, y, y_h, scratch)
        }
        GateWeights::Packed { wr, bias } => {
            // The options as constants too: one copy of the step, not one per option.
            macro_rules! packed {
                ($linear_before_reset:literal, $clip:literal) => {
                    gru_packed::<_, _, _, $linear_before_reset, $clip>(
                        sizes, acts, x, wr, bias, h0, opts, y, y_h, scratch,
                    )
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

/// [`gru`] for a node of a model whose recurrent nodes would each compile their own
/// copy: [`gru_sized`] on the weights as declared (`declared`) on the cores without an
/// FPU, else [`gru`] on `weights` (as [`super::lstm::lstm_shared`] says why; the RNN
/// zoo: 988 B less flash on the Cortex-M3 and 1.6 KB on the riscv32, where the packed
/// candidate products of four columns ran eight). `acts` names `F` and `G`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn gru_shared<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    G: UnaryOp,
>(
    acts: [Gate; 2],
    x: &[f32],
    weights: GateWeights<'_>,
    declared: GateWeights<'_>,
    h0: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    scratch: &mut [f32],
) {
    if cfg!(tinyonnx_soft_float) {
        let sizes = Fixed::<SEQ, BATCH, INPUT, HIDDEN, DIRS>.get();
        gru_sized(sizes, acts, x, declared, h0, opts, y, y_h, scratch);
    } else {
        gru::<SEQ, BATCH, INPUT, HIDDEN, DIRS, F, G>(x, weights, h0, opts, y, y_h, scratch);
    }
}

/// [`gru`] with the sizes and the activations (`f`, `g`) as values: one copy of the
/// kernel for every node that calls it with weights of the same kind, its options read
/// at run time.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn gru_sized(
    sizes: Sizes,
    [f, g]: [Gate; 2],
    x: &[f32],
    weights: GateWeights<'_>,
    h0: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    scratch: &mut [f32],
) {
    match weights {
        GateWeights::Plain { w, r, b } => {
            gru_plain(sizes, (f, g), x, w, r, b, h0, opts, y, y_h, scratch)
        }
        // Clipped whatever `opts.clip` (an infinite bound leaves every value, NaN too,
        // as it is); `linear_before_reset` read from `opts` (the sizes not `FIXED`).
        GateWeights::Packed { wr, bias } => gru_packed::<_, _, _, false, true>(
            sizes,
            (f, g),
            x,
            wr,
            bias,
            h0,
            opts,
            y,
            y_h,
            scratch,
        ),
    }
}

/// [`gru`] with the weights packed: per step three matrix products over the whole
/// batch (z and r at once from `[x_t, h]`, the candidate's input and recurrence parts
/// apart), then one pass over the cells. `LINEAR_BEFORE_RESET` is
/// `opts.linear_before_reset` (with sizes as values, not `FIXED`, that option is read
/// instead); `CLIP`, whether `opts.clip` is finite (the sized copy always clamps).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn gru_packed<
    S: RecurrentSizes,
    F: Activation,
    G: Activation,
    const LINEAR_BEFORE_RESET: bool,
    const CLIP: bool,
>(
    sizes: S,
    (f_act, g_act): (F, G),
    x: &[f32],
    wr: &[f32],
    bias: Option<&[f32]>,
    h0: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    scratch: &mut [f32],
) {
    let (seq, batch, input, hidden, dirs) = sizes.get().all();
    let linear_before_reset = if S::FIXED {
        LINEAR_BEFORE_RESET
    } else {
        opts.linear_before_reset
    };
    use super::packed::{Strided, gemm_packed_sized, packed_len};
    let (xh_len, g2, state) = (input + hidden, 2 * hidden, batch * hidden);
    let x = &x[..seq * batch * input];
    let scratch = &mut scratch[..tinyonnx_layout::gru::scratch(batch, input, hidden, true)];
    let (xh, rest) = scratch.split_at_mut(batch * xh_len);
    let (zr, rest) = rest.split_at_mut(batch * g2);
    let (cand, rest) = rest.split_at_mut(state);
    let (rec, reset) = rest.split_at_mut(state);
    let (zr_len, wh_len) = (packed_len(xh_len, g2), packed_len(input, hidden));
    let per_dir = tinyonnx_layout::gru::packed_len_per_dir(input, hidden);
    let clip = |v: f32| {
        if CLIP {
            super::math::clamp_sym(v, opts.clip)
        } else {
            v
        }
    };
    super::copy::init_state(y_h, h0, dirs * state);
    for d in 0..dirs {
        let (zr_w, rest) = wr[d * per_dir..(d + 1) * per_dir].split_at(zr_len);
        let (wh, rh) = rest.split_at(wh_len);
        let bias_at = |from: usize, len: usize| {
            bias.map(|b| Strided {
                values: &b[d * 4 * hidden + from..d * 4 * hidden + from + len],
                rows: 0,
                cols: 1,
            })
        };
        let h = &mut y_h[d * state..(d + 1) * state];
        let backwards = d == 1 || opts.reverse;
        for step in 0..seq {
            let t = if backwards { seq - 1 - step } else { step };
            let xt = &x[t * batch * input..(t + 1) * batch * input];
            for (bt, row) in xh.chunks_exact_mut(xh_len).enumerate() {
                super::copy::copy_run(&mut row[..input], &xt[bt * input..(bt + 1) * input]);
                super::copy::copy_run(&mut row[input..], &h[bt * hidden..(bt + 1) * hidden]);
            }
            let b_zr = bias_at(0, g2);
            gemm_packed_sized(
                S::FIXED,
                (batch, xh_len, g2),
                xh,
                xh_len,
                zr_w,
                b_zr,
                zr,
                (g2, 1),
            );
            let b_wh = bias_at(g2, hidden);
            gemm_packed_sized(
                S::FIXED,
                (batch, input, hidden),
                xt,
                input,
                wh,
                b_wh,
                cand,
                (hidden, 1),
            );
            if linear_before_reset {
                // h~ = g(x W_h + Wb_h + r (h R_h + Rb_h)).
                let b_rh = bias_at(3 * hidden, hidden);
                gemm_packed_sized(
                    S::FIXED,
                    (batch, hidden, hidden),
                    h,
                    hidden,
                    rh,
                    b_rh,
                    rec,
                    (hidden, 1),
                );
            } else {
                // h~ = g(x W_h + (r h) R_h + Wb_h + Rb_h): the reset state first.
                for bt in 0..batch {
                    let at = bt * hidden..(bt + 1) * hidden;
                    let rg = &zr[bt * g2 + hidden..(bt + 1) * g2];
                    for ((o, &pre), &hv) in reset[at.clone()].iter_mut().zip(rg).zip(&h[at]) {
                        super::rolled();
                        *o = f_act.apply(clip(pre)) * hv;
                    }
                }
                let init = Some(Strided {
                    values: cand,
                    rows: hidden,
                    cols: 1,
                });
                gemm_packed_sized(
                    S::FIXED,
                    (batch, hidden, hidden),
                    reset,
                    hidden,
                    rh,
                    init,
                    rec,
                    (hidden, 1),
                );
            }
            gru_cells::<F, G, CLIP>(
                (f_act, g_act),
                (batch, hidden, dirs, linear_before_reset),
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
fn gru_cells<F: Activation, G: Activation, const CLIP: bool>(
    (f_act, g_act): (F, G),
    (batch, hidden, dirs, linear_before_reset): (usize, usize, usize, bool),
    (zr, cand, rec): (&[f32], &[f32], &[f32]),
    (h, y): (&mut [f32], &mut [f32]),
    (t, d): (usize, usize),
    opts: Options,
) {
    let clip = |v: f32| {
        if CLIP {
            super::math::clamp_sym(v, opts.clip)
        } else {
            v
        }
    };
    let g2 = 2 * hidden;
    for bt in 0..batch {
        let out = ((t * dirs + d) * batch + bt) * hidden;
        let at = bt * hidden..(bt + 1) * hidden;
        let (zg, rg) = zr[bt * g2..(bt + 1) * g2].split_at(hidden);
        let (cb, eb) = (&cand[at.clone()], &rec[at.clone()]);
        let (hb, yb) = (&mut h[at], &mut y[out..out + hidden]);
        for j in 0..hidden {
            // Kept a loop on the microcontrollers: a small constant count was unrolled
            // whole, each cell with its own copy of the activations.
            super::rolled();
            let pre = if linear_before_reset {
                cb[j] + f_act.apply(clip(rg[j])) * eb[j]
            } else {
                eb[j]
            };
            let (z, n) = (f_act.apply(clip(zg[j])), g_act.apply(clip(pre)));
            let v = (1.0 - z) * n + z * hb[j];
            hb[j] = v;
            yb[j] = v;
        }
    }
}

/// [`gru`] with the weights as in the ONNX: dot products per gate row.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn gru_plain<S: RecurrentSizes, F: Activation, G: Activation>(
    sizes: S,
    (f_act, g_act): (F, G),
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
    let (seq, batch, input, hidden, dirs) = sizes.get().all();
    let (g3, state) = (3 * hidden, batch * hidden);
    super::copy::init_state(y_h, h0, dirs * state);
    let (gx, rest) = scratch[..5 * hidden].split_at_mut(g3);
    let (rh, new) = rest.split_at_mut(hidden);
    let clip = |v: f32| super::math::clamp_sym(v, opts.clip);
    for d in 0..dirs {
        let wd = &w[d * g3 * input..(d + 1) * g3 * input];
        let rd = &r[d * g3 * hidden..(d + 1) * g3 * hidden];
        let bias = |k: usize| b.map_or((0.0, 0.0), |b| (b[d * 2 * g3 + k], b[d * 2 * g3 + g3 + k]));
        let h = &mut y_h[d * state..(d + 1) * state];
        for step in 0..seq {
            let t = if d == 1 || opts.reverse {
                seq - 1 - step
            } else {
                step
            };
            for bt in 0..batch {
                let xt = &x[(t * batch + bt) * input..(t * batch + bt + 1) * input];
                let hp = &h[bt * hidden..(bt + 1) * hidden];
                for (k, g) in gx.iter_mut().enumerate() {
                    *g = bias(k).0 + dot(&wd[k * input..(k + 1) * input], xt);
                }
                // z and r.
                for k in 0..2 * hidden {
                    let pre = gx[k] + bias(k).1 + dot(&rd[k * hidden..(k + 1) * hidden], hp);
                    gx[k] = f_act.apply(clip(pre));
                }
                for j in 0..hidden {
                    rh[j] = gx[hidden + j] * hp[j];
                }
                for j in 0..hidden {
                    let k = 2 * hidden + j;
                    let row = &rd[k * hidden..(k + 1) * hidden];
                    let rb = bias(k).1;
                    let pre = if opts.linear_before_reset {
                        gx[k] + gx[hidden + j] * (dot(row, hp) + rb)
                    } else {
                        gx[k] + dot(row, rh) + rb
                    };
                    let cand = g_act.apply(clip(pre));
                    let z = gx[j];
                    new[j] = (1.0 - z) * cand + z * hp[j];
                }
                super::copy::copy_run(&mut h[bt * hidden..(bt + 1) * hidden], new);
                let out = ((t * dirs + d) * batch + bt) * hidden;
                super::copy::copy_run(&mut y[out..out + hidden], new);
            }
        }
    }
}

/// `RNN`: `H_t = f(W x_t + R H_{t-1} + Wb + Rb)`; `scratch` holds `HIDDEN` values.
/// `CLIP`: the node has a `clip` (else `opts.clip` is not read and nothing is clamped),
/// a parameter the compiler sets, as the LSTM's `PLAIN_CELLS`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn rnn<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    const CLIP: bool,
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
    rnn_run::<_, _, CLIP>(
        Fixed::<SEQ, BATCH, INPUT, HIDDEN, DIRS>,
        Static::<F>::new(),
        x,
        w,
        r,
        b,
        h0,
        opts,
        y,
        y_h,
        scratch,
    );
}

/// [`rnn`] for a node of a model whose recurrent nodes would each compile their own
/// copy: [`rnn_sized`] on the cores without an FPU, else [`rnn`] (as
/// [`super::lstm::lstm_shared`] says why). `act` names `F`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn rnn_shared<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    const CLIP: bool,
>(
    act: [Gate; 1],
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
    if cfg!(tinyonnx_soft_float) {
        let sizes = Fixed::<SEQ, BATCH, INPUT, HIDDEN, DIRS>.get();
        rnn_sized(sizes, act, x, w, r, b, h0, opts, y, y_h, scratch);
    } else {
        rnn::<SEQ, BATCH, INPUT, HIDDEN, DIRS, F, CLIP>(x, w, r, b, h0, opts, y, y_h, scratch);
    }
}

/// [`rnn`] with the sizes and the activation as values: one copy of the kernel for
/// every node that calls it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn rnn_sized(
    sizes: Sizes,
    [f]: [Gate; 1],
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
    // Clamped whatever `opts.clip` (an infinite bound leaves every value as it is).
    rnn_run::<_, _, true>(sizes, f, x, w, r, b, h0, opts, y, y_h, scratch);
}

/// [`rnn`] and [`rnn_sized`].
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn rnn_run<S: RecurrentSizes, F: Activation, const CLIP: bool>(
    sizes: S,
    f_act: F,
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
    let (seq, batch, input, hidden, dirs) = sizes.get().all();
    let state = batch * hidden;
    super::copy::init_state(y_h, h0, dirs * state);
    // On the RISC-V cores without an FPU, where `dot` is a loop, the cells a loop too.
    let roll = cfg!(all(tinyonnx_soft_float, target_arch = "riscv32"));
    let new = &mut scratch[..if roll { super::opaque(hidden) } else { hidden }];
    for d in 0..dirs {
        let wd = &w[d * hidden * input..(d + 1) * hidden * input];
        let rd = &r[d * hidden * hidden..(d + 1) * hidden * hidden];
        let h = &mut y_h[d * state..(d + 1) * state];
        for step in 0..seq {
            let t = if d == 1 || opts.reverse {
                seq - 1 - step
            } else {
                step
            };
            for bt in 0..batch {
                let xt = &x[(t * batch + bt) * input..(t * batch + bt + 1) * input];
                let hp = &h[bt * hidden..(bt + 1) * hidden];
                for (j, v) in new.iter_mut().enumerate() {
                    if roll {
                        super::rolled();
                    }
                    let bias = b.map_or(0.0, |b| {
                        b[d * 2 * hidden + j] + b[d * 2 * hidden + hidden + j]
                    });
                    let pre = bias
                        + dot(&wd[j * input..(j + 1) * input], xt)
                        + dot(&rd[j * hidden..(j + 1) * hidden], hp);
                    let pre = if CLIP {
                        super::math::clamp_sym(pre, opts.clip)
                    } else {
                        pre
                    };
                    *v = f_act.apply(pre);
                }
                super::copy::copy_run(&mut h[bt * hidden..(bt + 1) * hidden], new);
                let out = ((t * dirs + d) * batch + bt) * hidden;
                super::copy::copy_run(&mut y[out..out + hidden], new);
            }
        }
    }
}
