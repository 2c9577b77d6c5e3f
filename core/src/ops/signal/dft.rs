//! `DFT` (opset 17; from 20 the axis is an input, default -2) and `STFT` (opset 17): the
//! transform's geometry is fixed at compile time and its twiddle table (cos and sin of
//! `2 pi m / n`, in f64) is emitted beside the call; see `kernels::signal`.

use std::f64::consts::PI;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static DFT: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 17; input x: f32[2, 8, 1]; input c: f32[1, 5, 3, 2]; output a = DFT(x); output b = DFT(x, onesided = 1); output d = DFT(c, inverse = 1); output e = DFT(c, axis = 2); output f = DFT(x, Constant(value_int = 12)); output g = DFT(c, Constant(value_int = 3));",
            "opset = 20; input x: f32[2, 6, 4, 1]; output a = DFT(x); output b = DFT(x, _, Constant(value_int = 1)); output c = DFT(x, Constant(value_int = 6), Constant(value_int = -3), onesided = 1);",
            // The f64 inverse is left out: ONNX Runtime's is 4e-8 from numpy's ifft on
            // it (ours 1e-15), beyond the f64 tolerance.
            "opset = 17; input x: f64[3, 7, 2]; output a = DFT(x); output b = DFT(x, axis = 0);",
        ])
    },
    op_type: "DFT",
    inputs: &[
        input("input"),
        i64_const("dft_length", true),
        i64_const("axis", true),
    ],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Absent).until(19),
        attr("inverse", AttrKind::Int, AttrDefault::Int(0)),
        attr("onesided", AttrKind::Int, AttrDefault::Int(0)),
    ],
    dtypes: &[DType::F32, DType::F64],
    since_opset: 17,
    infer: |cx| {
        let x = cx.input(0);
        if cx.opset < 20 && cx.opt_input(2).is_some() {
            return Err(OpError::input(
                2,
                format!(
                    "DFT takes its axis as an input from opset 20 (this model uses opset {}); write the axis attribute",
                    cx.opset
                ),
            ));
        }
        let geometry = dft_geometry(
            cx.op.op_type,
            &x.shape,
            cx.attrs,
            cx.const_i64(1),
            cx.const_i64(2),
            cx.opset,
        )?;
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: geometry.output,
        }])
    },
    lower: |cx| {
        let x = cx.input(0);
        let shape = Shape::fixed(&x.shape);
        let d = dft_geometry(
            "DFT",
            &shape,
            cx.attrs,
            cx.const_i64(1),
            cx.const_i64(2),
            cx.opset,
        )
        .expect("checked during inference");
        let outer: usize = x.shape[..d.axis].iter().product();
        let inner: usize = x.shape[d.axis + 1..x.shape.len() - 1].iter().product();
        let g = [
            outer,
            x.shape[d.axis],
            inner,
            x.shape[x.shape.len() - 1],
            d.len,
            d.bins,
            d.c_out,
        ];
        let (inverse, hermitian) = (d.inverse, d.hermitian);
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        let tw = twiddles(d.len);
        quote! { #kernels::signal::dft(#xe, #y, [#(#g),*], #inverse, #hermitian, #tw); }
    },
    macs: |cx| {
        let out = cx.outputs[0].numel() as u64;
        let x = &cx.input(0).shape;
        out * x.iter().max().copied().unwrap_or(1) as u64
    },
    ..BASE
};

pub static STFT: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 17; input x: f32[2, 40, 1]; output a = STFT(x, Constant(value_int = 6), _, Constant(value_int = 8)); output b = STFT(x, Constant(value_int = 4), HannWindow(Constant(value_int = 10)), _, onesided = 0);",
            "opset = 17; input x: f32[1, 30, 2]; weight w: f32[8] = uniform(low = 0.0, high = 1.0, seed = 5); output a = STFT(x, Constant(value_int = 5), w, Constant(value_int = 8), onesided = 0);",
        ])
    },
    op_type: "STFT",
    inputs: &[
        input("signal"),
        i64_const("frame_step", false),
        optional("window"),
        i64_const("frame_length", true),
    ],
    attrs: &[attr("onesided", AttrKind::Int, AttrDefault::Int(1))],
    dtypes: &[DType::F32, DType::F64],
    since_opset: 17,
    infer: |cx| {
        let x = cx.input(0);
        let window = cx.opt_input(2).map(|w| w.shape.0.clone());
        let s = stft_geometry(&x.shape, cx.attrs, cx.const_i64(1), window, cx.const_i64(3))?;
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape::fixed(&[s[0], s[3], s[6], 2]),
        }])
    },
    lower: |cx| {
        let (x, g) = (cx.input(0), lowered_stft(cx));
        let (xe, w, y, kernels) = (&x.expr, cx.opt_expr(2), &cx.outputs[0].expr, kernels());
        let tw = twiddles(g[5]);
        quote! { #kernels::signal::stft(#xe, #w, #y, [#(#g),*], #tw); }
    },
    macs: |cx| {
        let [batch, _, _, frames, _, len, bins] = lowered_stft(cx);
        (batch * frames * bins * len) as u64
    },
    ..BASE
};

fn lowered_stft(cx: &LowerCtx) -> [usize; 7] {
    let window = cx.inputs[2]
        .as_ref()
        .map(|w| w.shape.iter().map(|&d| Dim::Fixed(d)).collect());
    let x = Shape::fixed(&cx.input(0).shape);
    stft_geometry(&x, cx.attrs, cx.const_i64(1), window, cx.const_i64(3))
        .expect("checked during inference")
}

/// What a `DFT` node computes: the axis (of the input without its last dim), the
/// transform's length, the bins kept, the output's last dim, and its shape.
struct DftGeometry {
    axis: usize,
    len: usize,
    bins: usize,
    c_out: usize,
    inverse: bool,
    hermitian: bool,
    output: Shape,
}

fn dft_geometry(
    op: &str,
    x: &Shape,
    attrs: &Attrs,
    length: Option<&[i64]>,
    axis_input: Option<&[i64]>,
    opset: i64,
) -> Result<DftGeometry, OpError> {
    let r = x.rank();
    let c_in = x.0.last().and_then(Dim::fixed);
    if r < 2 || !matches!(c_in, Some(1 | 2)) {
        return Err(OpError::input(
            0,
            format!("{op} takes [..., n, 1] (real) or [..., n, 2] (complex) signals, got {x}"),
        ));
    }
    let axis = match (axis_input, attrs.get("axis")) {
        (Some(&[a]), _) => a,
        (Some(v), _) => {
            return Err(OpError::input(
                2,
                format!("{op} axis is one value, got {v:?}"),
            ));
        }
        (None, Some(AttrValue::Int(a))) => *a,
        (None, _) if opset >= 20 => -2,
        (None, _) => 1,
    };
    // The signal axes are all but the last; -1 would name the real/imaginary axis.
    let signal = r as i64 - 1;
    if axis < -signal - 1 || axis == -1 || axis >= signal {
        return Err(OpError::attr(
            "axis",
            format!(
                "{op} axis {axis} is not a signal axis of {x} (0..{signal} or -{}..-2)",
                signal + 1
            ),
        ));
    }
    let axis = if axis < 0 {
        (axis + r as i64) as usize
    } else {
        axis as usize
    };
    let Some(n_in) = x.0[axis].fixed() else {
        return Err(OpError::input(
            0,
            format!("{op} needs a fixed length on axis {axis}, got {x}"),
        ));
    };
    let flag = |name: &'static str| match attrs.int(name) {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(OpError::attr(
            name,
            format!("{op} {name} is 0 or 1, got {v}"),
        )),
    };
    let (inverse, onesided) = (flag("inverse")?, flag("onesided")?);
    let hermitian = inverse && onesided;
    let len = match length {
        Some(&[n]) if n >= 1 && n <= crate::types::MAX_DIM as i64 => n as usize,
        Some(v) => {
            return Err(OpError::input(
                1,
                format!("{op} dft_length must be one positive value, got {v:?}"),
            ));
        }
        None if hermitian => 2 * n_in.saturating_sub(1),
        None => n_in,
    };
    if len == 0 {
        return Err(OpError::input(
            0,
            format!("{op} of a one-sided spectrum needs 2 or more bins"),
        ));
    }
    let (bins, c_out) = match (onesided, inverse) {
        (true, false) => (len / 2 + 1, 2),
        (true, true) => (len, 1),
        (false, _) => (len, 2),
    };
    let mut out = x.0.clone();
    out[axis] = Dim::Fixed(bins);
    out[r - 1] = Dim::Fixed(c_out);
    Ok(DftGeometry {
        axis,
        len,
        bins,
        c_out,
        inverse,
        hermitian,
        output: Shape(out),
    })
}

/// `[batch, samples, c_in, frames, step, len, bins]` of an `STFT`.
fn stft_geometry(
    x: &Shape,
    attrs: &Attrs,
    step: Option<&[i64]>,
    window: Option<Vec<Dim>>,
    length: Option<&[i64]>,
) -> Result<[usize; 7], OpError> {
    let dims: Option<Vec<usize>> = x.0.iter().map(Dim::fixed).collect();
    let Some(&[batch, samples, c_in]) = dims.as_deref().filter(|d| matches!(d[..], [_, _, 1 | 2]))
    else {
        return Err(OpError::input(
            0,
            format!(
                "STFT takes a fixed [batch, samples, 1] (real) or [batch, samples, 2] (complex) signal, got {x}"
            ),
        ));
    };
    let step = match step {
        Some(&[s]) if s >= 1 => s as usize,
        v => {
            return Err(OpError::input(
                1,
                format!("STFT frame_step must be one positive value, got {v:?}"),
            ));
        }
    };
    let from_window = match window.as_deref() {
        Some([d]) => match d.fixed() {
            Some(n) => Some(n),
            None => return Err(OpError::input(2, "STFT needs a window of fixed length")),
        },
        Some(w) => {
            return Err(OpError::input(
                2,
                format!("STFT window is one axis, got {}", Shape(w.to_vec())),
            ));
        }
        None => None,
    };
    let len = match (length, from_window) {
        (Some(&[n]), w) if n >= 1 && w.is_none_or(|w| w as i64 == n) => n as usize,
        (Some(v), Some(w)) => {
            return Err(OpError::input(
                3,
                format!("STFT frame_length {v:?} differs from the window's {w} values"),
            ));
        }
        (Some(v), None) => {
            return Err(OpError::input(
                3,
                format!("STFT frame_length must be one positive value, got {v:?}"),
            ));
        }
        (None, Some(w)) => w,
        (None, None) => return Err(OpError::input(3, "STFT needs a window or a frame_length")),
    };
    if len > samples {
        return Err(OpError::input(
            0,
            format!("STFT frames of {len} samples do not fit a signal of {samples}"),
        ));
    }
    let frames = (samples - len) / step + 1;
    let bins = match attrs.int("onesided") {
        1 => len / 2 + 1,
        0 => len,
        v => {
            return Err(OpError::attr(
                "onesided",
                format!("STFT onesided is 0 or 1, got {v}"),
            ));
        }
    };
    Ok([batch, samples, c_in, frames, step, len, bins])
}

/// `[cos, sin]` of `2 pi m / len` for `m` in `0..len`, as an f64 array expression.
fn twiddles(len: usize) -> TokenStream {
    let v = (0..len).flat_map(|m| {
        // Exact at the quarter turns, where the library's sin(pi) is not 0.
        let (c, s) = match (4 * m % len == 0, 4 * m / len.max(1)) {
            (true, 0) => (1.0, 0.0),
            (true, 1) => (0.0, 1.0),
            (true, 2) => (-1.0, 0.0),
            (true, _) => (0.0, -1.0),
            _ => {
                let t = 2.0 * PI * m as f64 / len as f64;
                (t.cos(), t.sin())
            }
        };
        [c, s]
    });
    let n = 2 * len;
    quote!({
        // cos(pi / 4) and its kind are table entries, not hand-typed constants.
        #[allow(clippy::approx_constant)]
        static TW: [f64; #n] = [#(#v),*];
        &TW[..]
    })
}
