//! `GRU` (opset 14: gate order z, r, h; `linear_before_reset`; activations f, g) and
//! `RNN` (opset 14: activation f), `layout` = 0, outputs Y and Y_h. Shared checks live
//! with `LSTM` in `lstm.rs`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::lstm::{
    RECURRENT_ATTRS, activation_list, clip_tokens, clipped, expect_shape, gate_weights,
    kernel_call, known_weights, packed_inputs, recurrent_dims, recurrent_outputs, weights_known,
};
use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape, TensorType};

const INPUTS: &[InputSpec] = &[
    input("X"),
    input("W"),
    input("R"),
    optional("B"),
    optional("sequence_lens"),
    optional("initial_h"),
];

pub static GRU: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[5, 2, 3]; input h0: f32[2, 2, 4]; weight w: f32[2, 12, 3] = uniform(low = -0.5, high = 0.5, seed = 1); weight r: f32[2, 12, 4] = uniform(low = -0.5, high = 0.5, seed = 2); weight b: f32[2, 24] = uniform(low = -0.5, high = 0.5, seed = 3); let (y, yh) = GRU(x, w, r, b, _, h0, direction = \"bidirectional\", hidden_size = 4); output y; output yh;",
            "input x: f32[4, 1, 3]; weight w: f32[1, 9, 3] = uniform(low = -0.5, high = 0.5, seed = 4); weight r: f32[1, 9, 3] = uniform(low = -0.5, high = 0.5, seed = 5); weight b: f32[1, 18] = uniform(low = -0.5, high = 0.5, seed = 6); let (y, _) = GRU(x, w, r, b, direction = \"reverse\", hidden_size = 3, linear_before_reset = 1, clip = 0.8); output y;",
            "input x: f32[3, 2, 2]; weight w: f32[1, 6, 2] = uniform(low = -0.5, high = 0.5, seed = 7); weight r: f32[1, 6, 2] = uniform(low = -0.5, high = 0.5, seed = 8); let (_, yh) = GRU(x, w, r, hidden_size = 2); output yh;",
        ])
    },
    op_type: "GRU",
    inputs: INPUTS,
    outputs: 2,
    output_names: &["Y", "Y_h"],
    attrs: &[
        RECURRENT_ATTRS[0],
        RECURRENT_ATTRS[1],
        RECURRENT_ATTRS[2],
        RECURRENT_ATTRS[3],
        RECURRENT_ATTRS[4],
        RECURRENT_ATTRS[5],
        RECURRENT_ATTRS[6],
        attr("linear_before_reset", AttrKind::Int, AttrDefault::Int(0)),
    ],
    infer: |cx| infer(cx, 3),
    lower: |cx| lower(cx, 3),
    macs: |cx| macs(cx, 3),
    scratch: |cx| {
        let (y_h, x) = (&cx.outputs[1], cx.inputs[0].as_ref().expect("X"));
        tinyonnx_layout::gru::scratch(y_h[1], x[2], y_h[2], weights_known(cx))
    },
    packs: |cx| packed_inputs(cx, gru_packed(cx).is_some()),
    sized_kernel: |_| Some(super::lstm::SIZED),
    ..BASE
};

pub static RNN: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[5, 2, 3]; weight w: f32[1, 4, 3] = uniform(low = -0.5, high = 0.5, seed = 1); weight r: f32[1, 4, 4] = uniform(low = -0.5, high = 0.5, seed = 2); weight b: f32[1, 8] = uniform(low = -0.5, high = 0.5, seed = 3); let (y, yh) = RNN(x, w, r, b, hidden_size = 4, activations = [\"Relu\"]); output y; output yh;",
            "input x: f32[3, 1, 2]; input h0: f32[2, 1, 3]; weight w: f32[2, 3, 2] = uniform(low = -0.5, high = 0.5, seed = 4); weight r: f32[2, 3, 3] = uniform(low = -0.5, high = 0.5, seed = 5); let (y, _) = RNN(x, w, r, _, _, h0, direction = \"bidirectional\", hidden_size = 3); output y;",
        ])
    },
    op_type: "RNN",
    inputs: INPUTS,
    outputs: 2,
    output_names: &["Y", "Y_h"],
    attrs: &RECURRENT_ATTRS,
    infer: |cx| infer(cx, 1),
    lower: |cx| lower(cx, 1),
    macs: |cx| macs(cx, 1),
    scratch: |cx| hidden_of(&cx.outputs),
    sized_kernel: |_| Some(super::lstm::SIZED),
    ..BASE
};

/// The hidden size from the device shape of Y_h `[dirs, batch, hidden]`.
fn hidden_of(outputs: &[Vec<usize>]) -> usize {
    outputs[1][2]
}

fn infer(cx: &InferCtx, gates: usize) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let (seq, batch, input, hidden, dirs) = recurrent_dims(cx, gates)?;
    if gates == 3 {
        activation_list(cx.attrs, dirs, ["Sigmoid", "Tanh"])?;
        if !matches!(cx.attrs.int("linear_before_reset"), 0 | 1) {
            return Err(OpError::attr(
                "linear_before_reset",
                "linear_before_reset must be 0 or 1",
            ));
        }
    } else {
        activation_list(cx.attrs, dirs, ["Tanh"])?;
    }
    let sizes = (dirs, hidden, input);
    let state = Shape(vec![Dim::Fixed(dirs), batch.clone(), Dim::Fixed(hidden)]);
    expect_shape(
        cx,
        1,
        "W",
        Shape::fixed(&[dirs, gates * hidden, input]),
        sizes,
    )?;
    expect_shape(
        cx,
        2,
        "R",
        Shape::fixed(&[dirs, gates * hidden, hidden]),
        sizes,
    )?;
    expect_shape(cx, 3, "B", Shape::fixed(&[dirs, 2 * gates * hidden]), sizes)?;
    expect_shape(cx, 5, "initial_h", state.clone(), sizes)?;
    Ok(recurrent_outputs(x.dtype, (seq, dirs, batch, hidden), 1))
}

fn dims(cx: &LowerCtx) -> (usize, usize, usize, usize, usize) {
    let x = &cx.input(0).shape;
    let y_h = &cx.outputs[1].shape;
    (x[0], x[1], x[2], y_h[2], y_h[0])
}

/// A GRU's `W`, `R` and `B` (if given) known at compile time, packed as
/// `kernels::GateWeights::Packed` takes them for `kernels::rnn::gru`: per direction `[W_zr; R_zr]^T`, `W_h^T`
/// and `R_h^T` in panels (`tinyonnx_layout::gru`), and per direction the biases
/// `[Wb_zr + Rb_zr, Wb_h (+ Rb_h unless linear_before_reset), Rb_h]`.
fn gru_packed(cx: &LowerCtx) -> Option<(Vec<f32>, Option<Vec<f32>>)> {
    let (_, _, input, hidden, dirs) = dims(cx);
    let (w, r, b) = known_weights(cx)?;
    let lbr = cx.attrs.int("linear_before_reset") == 1;
    let (g2, g3) = (2 * hidden, 3 * hidden);
    let mut wr = Vec::with_capacity(dirs * tinyonnx_layout::gru::packed_len_per_dir(input, hidden));
    for d in 0..dirs {
        // Row `row` of the gates, column `kk` of the input or of the state.
        let wv = |row: usize, kk: usize| w[(d * g3 + row) * input + kk];
        let rv = |row: usize, kk: usize| r[(d * g3 + row) * hidden + kk];
        wr.extend(pack_panels(input + hidden, g2, |kk, j| {
            if kk < input {
                wv(j, kk)
            } else {
                rv(j, kk - input)
            }
        }));
        wr.extend(pack_panels(input, hidden, |kk, j| wv(g2 + j, kk)));
        wr.extend(pack_panels(hidden, hidden, |kk, j| rv(g2 + j, kk)));
    }
    let bias = b.map(|b| {
        let mut v = Vec::with_capacity(dirs * 4 * hidden);
        for d in 0..dirs {
            let (wb, rb) = (
                &b[d * 2 * g3..d * 2 * g3 + g3],
                &b[d * 2 * g3 + g3..(d + 1) * 2 * g3],
            );
            v.extend((0..g2).map(|k| wb[k] + rb[k]));
            v.extend((g2..g3).map(|k| if lbr { wb[k] } else { wb[k] + rb[k] }));
            v.extend_from_slice(&rb[g2..]);
        }
        v
    });
    Some((wr, bias))
}

fn lower(cx: &LowerCtx, gates: usize) -> TokenStream {
    let dirs = dims(cx).4;
    let kernels = kernels();
    let opt = |i: usize| cx.opt_expr(i);
    let (b, h0) = (opt(3), opt(5));
    let (x, w, r) = (&cx.input(0).expr, &cx.input(1).expr, &cx.input(2).expr);
    let (y, y_h) = (&cx.outputs[0].expr, &cx.outputs[1].expr);
    let clip = clip_tokens(cx.attrs);
    let clipped = clipped(cx.attrs);
    let reverse = cx.attrs.string("direction") == Some("reverse");
    let lbr = gates == 3 && cx.attrs.int("linear_before_reset") == 1;
    let scratch = &cx
        .scratch
        .as_ref()
        .expect("GRU and RNN ask for scratch")
        .expr;
    let ident = |a: &str| Ident::new(a, Span::call_site());
    let opts = quote!(#kernels::rnn::Options { clip: #clip, reverse: #reverse, linear_before_reset: #lbr });
    if gates == 3 {
        let acts = activation_list(cx.attrs, dirs, ["Sigmoid", "Tanh"])
            .expect("checked during inference")
            .map(ident);
        let (decls, weights) = gate_weights(cx, gru_packed(cx), (w, r, &b));
        let call = kernel_call(
            cx,
            ("rnn", "gru"),
            (&acts, &[]),
            quote!(#x, #weights, #h0, #opts, #y, #y_h, #scratch),
        );
        quote! {
            #decls
            #call;
        }
    } else {
        let acts = activation_list(cx.attrs, dirs, ["Tanh"])
            .expect("checked during inference")
            .map(ident);
        let call = kernel_call(
            cx,
            ("rnn", "rnn"),
            (&acts, &[clipped]),
            quote!(#x, #w, #r, #b, #h0, #opts, #y, #y_h, #scratch),
        );
        quote!(#call;)
    }
}

fn macs(cx: &LowerCtx, gates: usize) -> u64 {
    let (seq, batch, input, hidden, dirs) = dims(cx);
    (dirs * seq * batch * gates * hidden * (input + hidden)) as u64
}
