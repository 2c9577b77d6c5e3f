//! `LSTM` (opset 14 semantics, `layout` = 0): forward, reverse or bidirectional; ONNX
//! gate order i, o, f, c in W, R and B; optional initial_h, initial_c and peepholes P;
//! `clip`, `input_forget` and the activations Sigmoid, Tanh and Relu. Outputs Y, Y_h, Y_c.
//! `sequence_lens` is not supported (every sequence has the full length).

use proc_macro2::{Ident, Span};
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType};

/// The attributes LSTM, GRU and RNN share (ONNX names, kinds and defaults).
pub(super) const RECURRENT_ATTRS: [AttrSpec; 7] = [
    attr("activation_alpha", AttrKind::Floats, AttrDefault::Absent),
    attr("activation_beta", AttrKind::Floats, AttrDefault::Absent),
    attr("activations", AttrKind::Strs, AttrDefault::Absent),
    attr("clip", AttrKind::Float, AttrDefault::Absent),
    attr("direction", AttrKind::Str, AttrDefault::Str("forward")),
    attr("hidden_size", AttrKind::Int, AttrDefault::Absent),
    attr("layout", AttrKind::Int, AttrDefault::Int(0)).since(14),
];

/// The recurrent kernels' family (LSTM, GRU and RNN, each by its operator): any two of
/// their copies take more flash than the shared one (LstmZoo and RnnZoo on the cores
/// without an FPU).
pub(super) const SIZED: SizedFamily = SizedFamily {
    name: "recurrent",
    copies: 2,
};

pub static LSTM: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[4, 2, 3]; weight w: f32[1, 20, 3] = uniform(low = -0.5, high = 0.5, seed = 1); weight r: f32[1, 20, 5] = uniform(low = -0.5, high = 0.5, seed = 2); weight b: f32[1, 40] = uniform(low = -0.5, high = 0.5, seed = 3); let (y, yh, yc) = LSTM(x, w, r, b, hidden_size = 5); output y; output yh; output yc;",
            "input x: f32[3, 1, 2]; input h0: f32[2, 1, 4]; input c0: f32[2, 1, 4]; weight w: f32[2, 16, 2] = uniform(low = -0.5, high = 0.5, seed = 4); weight r: f32[2, 16, 4] = uniform(low = -0.5, high = 0.5, seed = 5); weight p: f32[2, 12] = uniform(low = -0.5, high = 0.5, seed = 6); let (y, _, _) = LSTM(x, w, r, _, _, h0, c0, p, direction = \"bidirectional\", hidden_size = 4); output y;",
            "input x: f32[5, 2, 3]; weight w: f32[1, 12, 3] = uniform(low = -0.5, high = 0.5, seed = 7); weight r: f32[1, 12, 3] = uniform(low = -0.5, high = 0.5, seed = 8); let (_, yh, _) = LSTM(x, w, r, direction = \"reverse\", hidden_size = 3, input_forget = 1, clip = 0.9, activations = [\"Sigmoid\", \"Relu\", \"Tanh\"]); output yh;",
            "input x: f32[2, 3, 4]; weight w: f32[1, 8, 4] = uniform(low = -0.5, high = 0.5, seed = 9); weight r: f32[1, 8, 2] = uniform(low = -0.5, high = 0.5, seed = 10); let (y, _, yc) = LSTM(Transpose(x, perm = [1, 0, 2]), w, r, hidden_size = 2); output y; output yc;",
        ])
    },
    op_type: "LSTM",
    inputs: &[
        input("X"),
        input("W"),
        input("R"),
        optional("B"),
        optional("sequence_lens"),
        optional("initial_h"),
        optional("initial_c"),
        optional("P"),
    ],
    outputs: 3,
    output_names: &["Y", "Y_h", "Y_c"],
    // In alphabetical order, as before: input_forget sits between hidden_size and layout.
    attrs: &[
        RECURRENT_ATTRS[0],
        RECURRENT_ATTRS[1],
        RECURRENT_ATTRS[2],
        RECURRENT_ATTRS[3],
        RECURRENT_ATTRS[4],
        RECURRENT_ATTRS[5],
        attr("input_forget", AttrKind::Int, AttrDefault::Int(0)),
        RECURRENT_ATTRS[6],
    ],
    infer,
    lower,
    macs,
    scratch: |cx| {
        let attrs = cx.attrs;
        let x = cx.inputs[0].as_ref().expect("X");
        let r = cx.inputs[2].as_ref().expect("R");
        let hidden = attrs
            .get("hidden_size")
            .map_or(r[2], |_| attrs.int("hidden_size") as usize);
        tinyonnx_layout::lstm::scratch(x[1], x[2], hidden, weights_known(cx))
    },
    packs: |cx| packed_inputs(cx, packed_weights(cx).is_some()),
    sized_kernel: |_| Some(SIZED),
    ..BASE
};

/// Number of directions of a `direction` attribute.
fn directions(attrs: &Attrs) -> Result<usize, OpError> {
    match attrs.string("direction") {
        Some("forward") | Some("reverse") => Ok(1),
        Some("bidirectional") => Ok(2),
        other => Err(OpError::attr(
            "direction",
            format!(
                "direction must be \"forward\", \"reverse\" or \"bidirectional\", got {other:?}"
            ),
        )),
    }
}

/// The kernel type names of the activations (`defaults.len()` per direction: f, g, h for
/// LSTM, f, g for GRU, f for RNN).
pub(super) fn activation_list<const N: usize>(
    attrs: &Attrs,
    dirs: usize,
    defaults: [&'static str; N],
) -> Result<[&'static str; N], OpError> {
    let Some(list) = attrs.strings("activations") else {
        return Ok(defaults);
    };
    if list.len() != N * dirs {
        return Err(OpError::attr(
            "activations",
            format!(
                "activations needs {N} names per direction ({}), got {}",
                N * dirs,
                list.len()
            ),
        ));
    }
    let mut out = defaults;
    for (k, name) in list.iter().enumerate() {
        let kernel = match name.as_str() {
            "Sigmoid" | "sigmoid" => "Sigmoid",
            "Tanh" | "tanh" => "Tanh",
            "Relu" | "relu" => "Relu",
            other => {
                return Err(OpError::attr(
                    "activations",
                    format!("activation \"{other}\" is not supported: use Sigmoid, Tanh or Relu"),
                ));
            }
        };
        if k < N {
            out[k] = kernel;
        } else if out[k - N] != kernel {
            return Err(OpError::attr(
                "activations",
                "both directions must use the same activations",
            ));
        }
    }
    Ok(out)
}

fn activations(attrs: &Attrs, dirs: usize) -> Result<[&'static str; 3], OpError> {
    activation_list(attrs, dirs, ["Sigmoid", "Tanh", "Tanh"])
}

/// What every recurrent operator checks the same way: `direction`, `layout` = 0, no
/// activation parameters, no `sequence_lens`, `X` as `[seq, batch, input]` with fixed
/// seq and input, and the hidden size (attribute, else `R`'s last dimension). Returns
/// (seq, batch, input, hidden, directions).
pub(super) fn recurrent_dims(
    cx: &InferCtx,
    gates: usize,
) -> Result<(usize, Dim, usize, usize, usize), OpError> {
    let op = cx.op.op_type;
    let x = cx.input(0);
    let dirs = directions(cx.attrs)?;
    if cx.attrs.int("layout") != 0 {
        return Err(OpError::attr(
            "layout",
            "only layout = 0 ([seq, batch, features]) is supported; add a Transpose for batch-first data",
        ));
    }
    if cx.attrs.is_explicit("activation_alpha") || cx.attrs.is_explicit("activation_beta") {
        return Err(OpError::attr(
            "activation_alpha",
            "Sigmoid, Tanh and Relu take no activation_alpha or activation_beta",
        ));
    }
    // ONNX Runtime refuses the node unless `clip > 0`; the kernels clamp to
    // `[-clip, clip]`, which a negative or NaN bound would leave empty.
    if let Some(AttrValue::Float(c)) = cx.attrs.get("clip")
        && (c.is_nan() || *c <= 0.0)
    {
        return Err(OpError::attr(
            "clip",
            format!("clip must be a positive bound (ONNX Runtime refuses others), got {c}"),
        ));
    }
    if cx.opt_input(4).is_some() {
        return Err(OpError::input(
            4,
            "sequence_lens is not supported: every sequence runs its full length",
        ));
    }
    if x.shape.rank() != 3 {
        return Err(OpError::input(
            0,
            format!(
                "{op} expects X as [seq_length, batch_size, input_size], got {}",
                x.shape
            ),
        ));
    }
    let (Some(seq), Some(input)) = (x.shape.0[0].fixed(), x.shape.0[2].fixed()) else {
        return Err(OpError::input(
            0,
            format!(
                "{op} needs a fixed sequence length and input size, got {}",
                x.shape
            ),
        ));
    };
    let r = cx.input(2);
    let hidden = match cx.attrs.get("hidden_size") {
        Some(AttrValue::Int(h)) if *h > 0 && *h as u64 <= crate::types::MAX_DIM as u64 => {
            *h as usize
        }
        Some(_) => {
            return Err(OpError::attr(
                "hidden_size",
                format!("hidden_size must be in 1..={}", crate::types::MAX_DIM),
            ));
        }
        // Optional in the ONNX specification, but ONNX Runtime refuses a recurrent node
        // without it, so the model would not load there.
        None => {
            let hint = match r.shape.0.get(2).and_then(Dim::fixed) {
                Some(h) => format!("add `hidden_size = {h}` (R's last dimension)"),
                None => format!(
                    "R should be [num_directions, {gates}*hidden, hidden], got {}",
                    r.shape
                ),
            };
            return Err(OpError::op(format!(
                "{op} needs the hidden_size attribute (ONNX Runtime rejects the node without it): {hint}"
            )));
        }
    };
    Ok((seq, x.shape.0[1].clone(), input, hidden, dirs))
}

/// `Y [seq, dirs, batch, hidden]` and `states` outputs of the state's shape
/// `[dirs, batch, hidden]` (Y_h, and Y_c for LSTM).
pub(super) fn recurrent_outputs(
    dtype: DType,
    (seq, dirs, batch, hidden): (usize, usize, Dim, usize),
    states: usize,
) -> Vec<TensorType> {
    let state = Shape(vec![Dim::Fixed(dirs), batch.clone(), Dim::Fixed(hidden)]);
    let y = Shape(vec![
        Dim::Fixed(seq),
        Dim::Fixed(dirs),
        batch,
        Dim::Fixed(hidden),
    ]);
    std::iter::once(y)
        .chain(std::iter::repeat_n(state, states))
        .map(|shape| TensorType { dtype, shape })
        .collect()
}

/// Whether the node clamps its pre-activations (a finite `clip`).
pub(super) fn clipped(attrs: &Attrs) -> bool {
    matches!(attrs.get("clip"), Some(AttrValue::Float(c)) if c.is_finite())
}

/// The `clip` attribute as an `f32` expression, infinity when absent.
pub(super) fn clip_tokens(attrs: &Attrs) -> TokenStream {
    match attrs.get("clip") {
        Some(AttrValue::Float(c)) if c.is_finite() => quote!(#c),
        _ => quote!(f32::INFINITY),
    }
}

/// Checks that optional input `i` (if given) has shape `want`.
pub(super) fn expect_shape(
    cx: &InferCtx,
    i: usize,
    name: &str,
    want: Shape,
    (dirs, hidden, input): (usize, usize, usize),
) -> Result<(), OpError> {
    match cx.opt_input(i) {
        Some(t) if t.shape != want => Err(OpError::input(
            i,
            format!(
                "{} {name} must be {want} for {dirs} direction(s), hidden_size {hidden} and input_size {input}, got {}",
                cx.op.op_type, t.shape
            ),
        )),
        _ => Ok(()),
    }
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let (seq, batch, input, hidden, dirs) = recurrent_dims(cx, 4)?;
    activations(cx.attrs, dirs)?;
    if !matches!(cx.attrs.int("input_forget"), 0 | 1) {
        return Err(OpError::attr("input_forget", "input_forget must be 0 or 1"));
    }
    let expect =
        |i: usize, name: &str, want: Shape| expect_shape(cx, i, name, want, (dirs, hidden, input));
    let state = Shape(vec![Dim::Fixed(dirs), batch.clone(), Dim::Fixed(hidden)]);
    expect(1, "W", Shape::fixed(&[dirs, 4 * hidden, input]))?;
    expect(2, "R", Shape::fixed(&[dirs, 4 * hidden, hidden]))?;
    expect(3, "B", Shape::fixed(&[dirs, 8 * hidden]))?;
    expect(5, "initial_h", state.clone())?;
    expect(6, "initial_c", state.clone())?;
    expect(7, "P", Shape::fixed(&[dirs, 3 * hidden]))?;
    Ok(recurrent_outputs(x.dtype, (seq, dirs, batch, hidden), 2))
}

fn dims(cx: &LowerCtx) -> (usize, usize, usize, usize, usize) {
    let x = &cx.input(0).shape;
    let y_h = &cx.outputs[1].shape;
    (x[0], x[1], x[2], y_h[2], y_h[0])
}

/// Whether `W`, `R` and a given `B` are known at compile time: the rule the scratch of
/// a recurrent node follows for packed weights ([`known_weights`] also needs f32
/// values, so a node never packs where its scratch did not count on it).
pub(super) fn weights_known(cx: &ScratchCtx) -> bool {
    let b_known = match cx.inputs.get(3) {
        Some(Some(_)) => cx.consts[3],
        _ => true,
    };
    cx.consts[1] && cx.consts[2] && b_known
}

/// `W`, `R` and `B` (if given) of a recurrent node.
pub(super) type GateWeights<'a> = (&'a [f32], &'a [f32], Option<&'a [f32]>);

/// The f32 values of `W`, `R` and `B` (if given), where all are known at compile time.
pub(super) fn known_weights<'a>(cx: &LowerCtx<'a>) -> Option<GateWeights<'a>> {
    let w = cx.input_consts.get(1).copied().flatten()?.as_f32()?;
    let r = cx.input_consts.get(2).copied().flatten()?.as_f32()?;
    let b = match (
        cx.inputs.get(3).cloned().flatten(),
        cx.input_consts.get(3).copied().flatten(),
    ) {
        (None, _) => None,
        (Some(_), Some(b)) => Some(b.as_f32()?),
        (Some(_), None) => return None,
    };
    Some((w, r, b))
}

/// `W`, `R` and `B` (if given) known at compile time: per direction `[W; R]^T` packed
/// into panels, and the summed biases `Wb + Rb` (each direction's
/// `tinyonnx_layout::lstm::gate_row` values).
fn packed_weights(cx: &LowerCtx) -> Option<(Vec<f32>, Option<Vec<f32>>)> {
    let (_, _, input, hidden, dirs) = dims(cx);
    let (w, r, b) = known_weights(cx)?;
    let g4 = 4 * hidden;
    let mut wr = Vec::new();
    for d in 0..dirs {
        wr.extend(pack_panels(input + hidden, g4, |kk, j| {
            if kk < input {
                w[(d * g4 + j) * input + kk]
            } else {
                r[(d * g4 + j) * hidden + kk - input]
            }
        }));
    }
    // Each direction's sums padded with zeros to whole panels, as the gates' rows.
    let row = tinyonnx_layout::lstm::gate_row(hidden);
    let bias = b.map(|b| {
        (0..dirs)
            .flat_map(|d| {
                (0..row).map(move |j| {
                    if j < g4 {
                        b[d * 2 * g4 + j] + b[d * 2 * g4 + g4 + j]
                    } else {
                        0.0
                    }
                })
            })
            .collect()
    });
    Some((wr, bias))
}

/// A recurrent node's `kernels::GateWeights` argument: the packed matrices and summed
/// biases (`packed`) as statics of the node, else the ONNX `(W, R, B)` operands. A node
/// that calls the `_shared` form ([`LowerCtx::sized`]) passes the operands as declared
/// too, second: the shared copy on the cores without an FPU reads those, and the other
/// form is then left out of the firmware. Returns the statics' declarations and the
/// argument(s).
pub(super) fn gate_weights(
    cx: &LowerCtx,
    packed: Option<(Vec<f32>, Option<Vec<f32>>)>,
    (w, r, b): (&TokenStream, &TokenStream, &TokenStream),
) -> (TokenStream, TokenStream) {
    let kernels = kernels();
    let declared = quote!(#kernels::GateWeights::Plain { w: #w, r: #r, b: #b });
    let (decls, weights) = match packed {
        None => (TokenStream::new(), declared.clone()),
        Some((wr, bias)) => {
            let (wr_decl, wr) = node_static("wr", wr);
            let (b_decl, b) = match bias {
                Some(v) => {
                    let (decl, e) = node_static("bsum", v);
                    (decl, quote!(::core::option::Option::Some(#e)))
                }
                None => (TokenStream::new(), quote!(::core::option::Option::None)),
            };
            (
                quote!(#wr_decl #b_decl),
                quote!(#kernels::GateWeights::Packed { wr: #wr, bias: #b }),
            )
        }
    };
    let args = if cx.sized {
        quote!(#weights, #declared)
    } else {
        weights
    };
    (decls, args)
}

/// A recurrent node's `OpSchema::packs`: `W`, `R` and `B` where its lowering packs them
/// (`packed`), unless the node calls the `_shared` form, which reads them as declared
/// too ([`gate_weights`]).
pub(super) fn packed_inputs(cx: &LowerCtx, packed: bool) -> Vec<usize> {
    if packed && !cx.sized {
        vec![1, 2, 3]
    } else {
        Vec::new()
    }
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let dirs = dims(cx).4;
    let kernels = kernels();
    let acts = activations(cx.attrs, dirs).expect("checked during inference");
    let acts = acts.map(|a| Ident::new(a, Span::call_site()));
    let opt = |i: usize| cx.opt_expr(i);
    let (b, h0, c0, p) = (opt(3), opt(5), opt(6), opt(7));
    let (x, w, r) = (&cx.input(0).expr, &cx.input(1).expr, &cx.input(2).expr);
    let (decls, weights) = gate_weights(cx, packed_weights(cx), (w, r, &b));
    let [y, y_h, y_c] = [0, 1, 2].map(|i| cx.outputs[i].expr.clone());
    let clip = clip_tokens(cx.attrs);
    let input_forget = cx.attrs.int("input_forget") == 1;
    let reverse = cx.attrs.string("direction") == Some("reverse");
    let scratch = &cx.scratch.as_ref().expect("LSTM asks for scratch").expr;
    let opts = quote!(#kernels::lstm::Options { clip: #clip, input_forget: #input_forget, reverse: #reverse });
    // No peepholes, clip or coupled gates: the cells without their tests.
    let plain_cells =
        cx.inputs.get(7).is_none_or(Option::is_none) && !clipped(cx.attrs) && !input_forget;
    let call = kernel_call(
        cx,
        ("lstm", "lstm"),
        (&acts, &[plain_cells, clipped(cx.attrs)]),
        quote!(#x, #weights, #h0, #c0, #p, #opts, #y, #y_h, #y_c, #scratch),
    );
    quote! {
        #decls
        #call;
    }
}

/// The call of the recurrent kernel `kernels::<module>::<name>` with the node's sizes,
/// activations `acts` and then `flags` as its constant parameters; where the plan lets
/// the node share a copy ([`LowerCtx::sized`]), of its `<name>_shared` form, which also
/// takes the activations as values.
pub(super) fn kernel_call(
    cx: &LowerCtx,
    (module, name): (&str, &str),
    (acts, flags): (&[Ident], &[bool]),
    args: TokenStream,
) -> TokenStream {
    let (seq, batch, input, hidden, dirs) = dims(cx);
    let kernels = kernels();
    let module = Ident::new(module, Span::call_site());
    let generics =
        quote!(<#seq, #batch, #input, #hidden, #dirs, #(#kernels::unary::#acts,)* #(#flags),*>);
    let name = cx.kernel_fn(name);
    if cx.sized {
        quote!(#kernels::#module::#name::#generics([#(#kernels::gates::Gate::#acts),*], #args))
    } else {
        quote!(#kernels::#module::#name::#generics(#args))
    }
}

fn macs(cx: &LowerCtx) -> u64 {
    let (seq, batch, input, hidden, dirs) = dims(cx);
    (dirs * seq * batch * 4 * hidden * (input + hidden)) as u64
}
