//! ONNX `LSTM`. Gate order in W, R and B is i, o, f, c; peepholes P are i, o, f.

use super::GateWeights;
use super::gates::{Activation, Fixed, Gate, RecurrentSizes, Sizes, Static};
use super::math::mul_add;
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
/// of `tinyonnx_layout::lstm::scratch` values: each batch row's gates, and with packed
/// weights the concatenated input and state rows of one step, whose gates are then one
/// matrix product. Packed weights ([`GateWeights::Packed`]): per direction the
/// `[INPUT + HIDDEN, 4H]` matrix `[W; R]^T` in panels, and the biases `Wb + Rb`, each
/// direction's `tinyonnx_layout::lstm::gate_row` values (zeros after `4H`).
/// Inlined, as [`super::rnn::gru`]: in generated code the weights' kind is a constant,
/// so only the routine the node needs is compiled (the plain weights' products were
/// 2 KB of a firmware that used none). `PLAIN_CELLS`: the node has no peepholes, clip
/// or coupled gates (`p`, `opts.clip` and `opts.input_forget` are then not read), a
/// parameter, not a test of `opts`: LLVM did not fold that test of the constant
/// `f32::INFINITY` in LstmZoo's forward pass and compiled both cells (2.9 KB more).
/// `CLIP`: the node clamps (a finite `clip`), for cells that are not plain, so that
/// peepholes alone do not bring the four clamps a cell.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn lstm<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    G: UnaryOp,
    H: UnaryOp,
    const PLAIN_CELLS: bool,
    const CLIP: bool,
>(
    x: &[f32],
    weights: GateWeights<'_>,
    h0: Option<&[f32]>,
    c0: Option<&[f32]>,
    p: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    y_c: &mut [f32],
    gates: &mut [f32],
) {
    let sizes = Fixed::<SEQ, BATCH, INPUT, HIDDEN, DIRS>;
    let acts = (Static::<F>::new(), Static::<G>::new(), Static::<H>::new());
    match weights {
        GateWeights::Packed { .. } => run::<_, _, _, _, true, PLAIN_CELLS, CLIP>(
            sizes, acts, x, weights, h0, c0, p, opts, y, y_h, y_c, gates,
        ),
        GateWeights::Plain { .. } => run::<_, _, _, _, false, PLAIN_CELLS, CLIP>(
            sizes, acts, x, weights, h0, c0, p, opts, y, y_h, y_c, gates,
        ),
    }
}

/// [`lstm`] for a node of a model whose recurrent nodes would each compile their own
/// copy (the plan says so): on the cores without an FPU through [`lstm_sized`], one
/// copy for all of them, on the weights as declared (`declared`, the ONNX `W`, `R` and
/// `B`); elsewhere [`lstm`] on `weights` (packed where they are constants). `gates_act`
/// names `F`, `G` and `H`.
///
/// The shared copy takes the declared weights even where packed ones exist: without an
/// FPU its dot products cost the same two library calls a multiply-add as the packed
/// product (whose shared code is 850 B on the riscv32), which also runs the zero columns
/// of a last partial panel and stores them (the LSTM zoo, against a copy of each kind:
/// 2.3 KB less flash on the Cortex-M3 and the riscv32, instructions within 0.1 %).
///
/// Without an FPU the float operations are library calls, which the loops' constant
/// counts barely speed up (on the Cortex-M3 the LSTM zoo took 1.4 % more instructions
/// for 5.8 KB less flash, the RNN zoo 3.2 % for 0.9 KB); with one, a shared copy's loops
/// over counts it does not know took 80 % more instructions on the zoos' small cells,
/// and more flash on the Arm cores (the shared copy holds every option and both kinds
/// of weights: LstmZoo 8,672 B beyond the weights on the Cortex-M4F against 7,832, the
/// RNN zoo 8,900 against 7,864), so a model's `optimize = size` leaves these as they are.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn lstm_shared<
    const SEQ: usize,
    const BATCH: usize,
    const INPUT: usize,
    const HIDDEN: usize,
    const DIRS: usize,
    F: UnaryOp,
    G: UnaryOp,
    H: UnaryOp,
    const PLAIN_CELLS: bool,
    const CLIP: bool,
>(
    gates_act: [Gate; 3],
    x: &[f32],
    weights: GateWeights<'_>,
    declared: GateWeights<'_>,
    h0: Option<&[f32]>,
    c0: Option<&[f32]>,
    p: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    y_c: &mut [f32],
    gates: &mut [f32],
) {
    if cfg!(tinyonnx_soft_float) {
        let sizes = Fixed::<SEQ, BATCH, INPUT, HIDDEN, DIRS>.get();
        lstm_sized(
            sizes, gates_act, x, declared, h0, c0, p, opts, y, y_h, y_c, gates,
        );
    } else {
        lstm::<SEQ, BATCH, INPUT, HIDDEN, DIRS, F, G, H, PLAIN_CELLS, CLIP>(
            x, weights, h0, c0, p, opts, y, y_h, y_c, gates,
        );
    }
}

/// [`lstm`] with the sizes and the activations (`f`, `g`, `h`) as values: one copy of
/// the kernel for every node that calls it with weights of the same kind (generated
/// code passes the declared ones, [`lstm_shared`]), whether its cells have peepholes,
/// clip or coupled gates or not.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn lstm_sized(
    sizes: Sizes,
    [f, g, h]: [Gate; 3],
    x: &[f32],
    weights: GateWeights<'_>,
    h0: Option<&[f32]>,
    c0: Option<&[f32]>,
    p: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    y_c: &mut [f32],
    gates: &mut [f32],
) {
    let acts = (f, g, h);
    match weights {
        GateWeights::Plain { .. } => run::<_, _, _, _, false, false, true>(
            sizes, acts, x, weights, h0, c0, p, opts, y, y_h, y_c, gates,
        ),
        GateWeights::Packed { .. } => run::<_, _, _, _, true, false, true>(
            sizes, acts, x, weights, h0, c0, p, opts, y, y_h, y_c, gates,
        ),
    }
}

/// [`lstm`] for weights packed or not (`PACKED`, which `weights` is) and cells with
/// neither peepholes, clip nor coupled gates or not (`PLAIN_CELLS`, which the compiler
/// set), clamped or not (`CLIP`). With sizes as values (not `FIXED`) it runs the cells
/// with their tests, whatever those two flags say.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn run<
    S: RecurrentSizes,
    F: Activation,
    G: Activation,
    H: Activation,
    const PACKED: bool,
    const PLAIN_CELLS: bool,
    const CLIP: bool,
>(
    sizes: S,
    acts: (F, G, H),
    x: &[f32],
    weights: GateWeights<'_>,
    h0: Option<&[f32]>,
    c0: Option<&[f32]>,
    p: Option<&[f32]>,
    opts: Options,
    y: &mut [f32],
    y_h: &mut [f32],
    y_c: &mut [f32],
    gates: &mut [f32],
) {
    let (seq, batch, input, hidden, dirs) = sizes.get().all();
    let g4 = 4 * hidden;
    // With packed weights the gates' rows are whole panels (the product's routines
    // compute each column: no code for a partial last panel), the columns after `g4`
    // the zeros of the padded biases and weights.
    let stride = if PACKED {
        tinyonnx_layout::lstm::gate_row(hidden)
    } else {
        g4
    };
    let x = &x[..seq * batch * input];
    let (gates, xh) = gates.split_at_mut(batch * stride);
    let xh_len = input + hidden;
    let packed_len = super::packed::packed_len(xh_len, g4);
    let state = batch * hidden;
    super::copy::init_state(y_h, h0, dirs * state);
    super::copy::init_state(y_c, c0, dirs * state);
    for d in 0..dirs {
        let pd = p.map(|p| &p[d * 3 * hidden..(d + 1) * 3 * hidden]);
        let h = &mut y_h[d * state..(d + 1) * state];
        let c = &mut y_c[d * state..(d + 1) * state];
        let backwards = d == 1 || opts.reverse;
        for step in 0..seq {
            let t = if backwards { seq - 1 - step } else { step };
            let xt = &x[t * batch * input..(t + 1) * batch * input];
            match weights {
                GateWeights::Plain { w, r, b } if !PACKED => {
                    let wd = &w[d * g4 * input..(d + 1) * g4 * input];
                    let rd = &r[d * g4 * hidden..(d + 1) * g4 * hidden];
                    let bd = b.map(|b| &b[d * 2 * g4..(d + 1) * 2 * g4]);
                    for bt in 0..batch {
                        let xb = &xt[bt * input..(bt + 1) * input];
                        let ht = &h[bt * hidden..(bt + 1) * hidden];
                        let gb = &mut gates[bt * g4..(bt + 1) * g4];
                        for (k, out) in gb.iter_mut().enumerate() {
                            // A loop on the microcontrollers: unrolled for small sizes,
                            // the products took 1.3 KB more (LstmZoo's 16 gates of 9 inputs).
                            super::rolled();
                            let mut s = bd.map_or(0.0, |bd| bd[k] + bd[g4 + k]);
                            let wrow = &wd[k * input..(k + 1) * input];
                            // Sizes as values: no copies of the body for a count
                            // the compiler does not know.
                            for (wv, xv) in wrow.iter().zip(xb) {
                                if !S::FIXED {
                                    super::rolled();
                                }
                                s = mul_add(*wv, *xv, s);
                            }
                            let rrow = &rd[k * hidden..(k + 1) * hidden];
                            for (rv, hv) in rrow.iter().zip(ht) {
                                if !S::FIXED {
                                    super::rolled();
                                }
                                s = mul_add(*rv, *hv, s);
                            }
                            *out = s;
                        }
                    }
                }
                GateWeights::Packed { wr, bias } if PACKED => {
                    let xh = &mut xh[..batch * xh_len];
                    for (bt, row) in xh.chunks_exact_mut(xh_len).enumerate() {
                        super::copy::copy_run(&mut row[..input], &xt[bt * input..(bt + 1) * input]);
                        super::copy::copy_run(
                            &mut row[input..],
                            &h[bt * hidden..(bt + 1) * hidden],
                        );
                    }
                    super::packed::gemm_packed(
                        (batch, xh_len, stride),
                        xh,
                        xh_len,
                        &wr[d * packed_len..(d + 1) * packed_len],
                        bias.map(|b| super::packed::Strided {
                            values: &b[d * stride..(d + 1) * stride],
                            rows: 0,
                            cols: 1,
                        }),
                        gates,
                        (stride, 1),
                        false,
                    );
                }
                // `lstm` and `lstm_sized` pass `PACKED` as the weights' kind.
                _ => unreachable!("lstm: weights not of the kind PACKED says"),
            }
            for bt in 0..batch {
                let out = ((t * dirs + d) * batch + bt) * hidden;
                let cells = (
                    &gates[bt * stride..bt * stride + g4],
                    &mut c[bt * hidden..(bt + 1) * hidden],
                    &mut h[bt * hidden..(bt + 1) * hidden],
                    &mut y[out..out + hidden],
                );
                if S::FIXED {
                    let (gb, cb, hb, yb) = cells;
                    gate_update::<F, G, H, PLAIN_CELLS, CLIP>(
                        (acts, hidden),
                        gb,
                        cb,
                        hb,
                        yb,
                        pd,
                        opts,
                    );
                } else {
                    // Sizes as values: one copy of the cells for the packed and the plain
                    // weights' kernels.
                    shared_update((acts, hidden), cells, pd, opts);
                }
            }
        }
    }
}

/// One batch row's state update from its pre-activation gates `gb` (`[i, o, f, c]`,
/// each `HIDDEN`): the new cell state into `cb`, the new hidden state into `hb` and `yb`.
/// On x86-64 it runs a copy compiled for AVX and FMA when the CPU has them (the
/// activations are the step's main cost after the matrix product), as the packed kernel
/// does; the arithmetic is the same, so the results are too.
#[inline(always)]
fn gate_update<F: Activation, G: Activation, H: Activation, const PLAIN: bool, const CLIP: bool>(
    (acts, hidden): ((F, G, H), usize),
    gb: &[f32],
    cb: &mut [f32],
    hb: &mut [f32],
    yb: &mut [f32],
    pd: Option<&[f32]>,
    opts: Options,
) {
    #[cfg(target_arch = "x86_64")]
    if super::arch::x86_64::cpu::avx_fma() {
        // Safety: the CPU has AVX and FMA (checked just above).
        unsafe {
            gate_update_avx::<F, G, H, PLAIN, CLIP>((acts, hidden), gb, cb, hb, yb, pd, opts)
        };
        return;
    }
    cells::<F, G, H, PLAIN, CLIP>((acts, hidden), gb, cb, hb, yb, pd, opts);
}

/// [`gate_update`] out of line and without its constant flags, for the sized copies.
#[inline(never)]
fn shared_update<F: Activation, G: Activation, H: Activation>(
    (acts, hidden): ((F, G, H), usize),
    (gb, cb, hb, yb): (&[f32], &mut [f32], &mut [f32], &mut [f32]),
    pd: Option<&[f32]>,
    opts: Options,
) {
    gate_update::<F, G, H, false, true>((acts, hidden), gb, cb, hb, yb, pd, opts);
}

/// [`cells`] compiled for AVX and FMA.
///
/// # Safety
/// The CPU must have AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
unsafe fn gate_update_avx<
    F: Activation,
    G: Activation,
    H: Activation,
    const PLAIN: bool,
    const CLIP: bool,
>(
    (acts, hidden): ((F, G, H), usize),
    gb: &[f32],
    cb: &mut [f32],
    hb: &mut [f32],
    yb: &mut [f32],
    pd: Option<&[f32]>,
    opts: Options,
) {
    cells::<F, G, H, PLAIN, CLIP>((acts, hidden), gb, cb, hb, yb, pd, opts);
}

/// One pass over the cells: each reads its four gates and its cell state once and writes
/// the new states (separate passes per gate cost a load and a store a value each, as
/// much as an activation on a Cortex-M). Peepholes read the previous cell state for i
/// and f, the new one for o. `PLAIN` (no peephole, clip or coupled gate: the caller
/// checked) leaves their tests out of the loop, `CLIP` false its clamps.
#[inline(always)]
fn cells<F: Activation, G: Activation, H: Activation, const PLAIN: bool, const CLIP: bool>(
    ((f_act, g_act, h_act), hidden): ((F, G, H), usize),
    gb: &[f32],
    cb: &mut [f32],
    hb: &mut [f32],
    yb: &mut [f32],
    pd: Option<&[f32]>,
    opts: Options,
) {
    let (gb, cb, hb, yb) = (
        &gb[..4 * hidden],
        &mut cb[..hidden],
        &mut hb[..hidden],
        &mut yb[..hidden],
    );
    let pd = if PLAIN {
        None
    } else {
        pd.map(|p| &p[..3 * hidden])
    };
    let clip = |v: f32| {
        if PLAIN || !CLIP {
            v
        } else {
            super::math::clamp_sym(v, opts.clip)
        }
    };
    // On the cores without an FPU a loop whatever `hidden`: there the activations are
    // calls, and a small constant count's body the RISC-V unroller copies whole (the
    // LSTM zoo's 4 and 7 cells: 1.6 KB). The indices' checks this brings back also keep
    // the Arm unroller from copying the body by 4 (sliced to the count, the Cortex-M3's
    // zoo took 4 KB more).
    let count = if cfg!(tinyonnx_soft_float) {
        super::opaque(hidden)
    } else {
        hidden
    };
    for j in 0..count {
        let c_prev = cb[j];
        let (mut i, mut o, mut f, g) = (
            gb[j],
            gb[hidden + j],
            gb[2 * hidden + j],
            gb[3 * hidden + j],
        );
        if let Some(pd) = pd {
            i = mul_add(pd[j], c_prev, i);
            f = mul_add(pd[2 * hidden + j], c_prev, f);
        }
        let i = f_act.apply(clip(i));
        let f = if !PLAIN && opts.input_forget {
            1.0 - i
        } else {
            f_act.apply(clip(f))
        };
        let c = mul_add(f, c_prev, i * g_act.apply(clip(g)));
        cb[j] = c;
        if let Some(pd) = pd {
            o = mul_add(pd[hidden + j], c, o);
        }
        let h = f_act.apply(clip(o)) * h_act.apply(c);
        hb[j] = h;
        yb[j] = h;
    }
}
