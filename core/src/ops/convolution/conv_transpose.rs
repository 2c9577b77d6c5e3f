//! `ConvTranspose` (opset 11 semantics, unchanged through 21): 1-D and 2-D, strides,
//! dilations, group, pads or auto_pad, output_padding, output_shape. Each input value
//! scatters `W[c, m, :, :]` into the output; the output size per axis is
//! `stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads`, or
//! `output_shape` with the total padding split as the specification says.

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, MAX_DIM, Shape, TensorType};

pub static CONV_TRANSPOSE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[1, 4, 5, 6]; weight w: f32[4, 3, 3, 3] = he_normal(seed = 1); output y = ConvTranspose(x, w, strides = [2, 2], pads = [1, 0, 0, 1], output_padding = [1, 1]); output z = ConvTranspose(x, w, strides = [2, 3], auto_pad = \"SAME_UPPER\");",
            "input x: f32[2, 4, 3, 3]; weight w: f32[4, 2, 2, 3] = he_normal(seed = 2); weight b: f32[4] = uniform(low = -0.5, high = 0.5, seed = 3); output y = ConvTranspose(x, w, b, group = 2, dilations = [2, 1]);",
            "input x: f32[2, 3, 7]; weight w: f32[3, 2, 4] = he_normal(seed = 4); output y = ConvTranspose(x, w, strides = [3], output_shape = [20]); output z = ConvTranspose(x, w);",
            // output_shape beyond the natural 9x7: negative total padding. (With
            // SAME_UPPER the ONNX reference and ONNX Runtime split it differently;
            // tinyonnx follows the reference.)
            "input x: f32[1, 1, 3, 3]; weight w: f32[1, 2, 3, 3] = he_normal(seed = 5); weight b: f32[2] = uniform(low = -0.5, high = 0.5, seed = 6); output y = ConvTranspose(x, w, b, strides = [3, 2], output_shape = [10, 8]);",
        ])
    },
    op_type: "ConvTranspose",
    inputs: &[input("X"), input("W"), optional("B")],
    attrs: &[
        attr("auto_pad", AttrKind::Str, AttrDefault::Str("NOTSET")),
        attr("dilations", AttrKind::Ints, AttrDefault::Absent),
        attr("group", AttrKind::Int, AttrDefault::Int(1)),
        attr("kernel_shape", AttrKind::Ints, AttrDefault::Absent),
        attr("output_padding", AttrKind::Ints, AttrDefault::Absent),
        attr("output_shape", AttrKind::Ints, AttrDefault::Absent),
        attr("pads", AttrKind::Ints, AttrDefault::Absent),
        attr("strides", AttrKind::Ints, AttrDefault::Absent),
    ],
    infer,
    lower,
    macs,
    ..BASE
};

/// One spatial axis: (input, kernel, stride, dilation, pad_begin, output). The pad is
/// negative where `output_shape` asks for more than the input produces.
type Axis = (usize, usize, usize, usize, isize, usize);

fn list(attrs: &Attrs, name: &'static str, default: i64, len: usize) -> Result<Vec<i64>, OpError> {
    match attrs.ints(name) {
        None => Ok(vec![default; len]),
        Some(v) if v.len() != len => Err(OpError::attr(
            name,
            format!("ConvTranspose {name} needs {len} values, got {}", v.len()),
        )),
        Some(v) if v.iter().any(|&x| x < 0 || x as u64 > MAX_DIM as u64) => Err(OpError::attr(
            name,
            format!("ConvTranspose {name} must be non-negative and at most {MAX_DIM}, got {v:?}"),
        )),
        Some(v) => Ok(v.to_vec()),
    }
}

fn geometry(attrs: &Attrs, input: &[usize], kernel: &[usize]) -> Result<Vec<Axis>, OpError> {
    let k = input.len();
    let strides = list(attrs, "strides", 1, k)?;
    let dilations = list(attrs, "dilations", 1, k)?;
    for (name, v) in [("strides", &strides), ("dilations", &dilations)] {
        if v.contains(&0) {
            return Err(OpError::attr(
                name,
                format!("ConvTranspose {name} must be positive, got {v:?}"),
            ));
        }
    }
    let out_pad = list(attrs, "output_padding", 0, k)?;
    for i in 0..k {
        if out_pad[i] >= strides[i].max(dilations[i]) {
            return Err(OpError::attr(
                "output_padding",
                format!(
                    "ConvTranspose output_padding {} on axis {i} must be smaller than the stride or the dilation ({})",
                    out_pad[i],
                    strides[i].max(dilations[i])
                ),
            ));
        }
    }
    let auto_pad = attrs.string("auto_pad").unwrap_or("NOTSET");
    if !matches!(auto_pad, "NOTSET" | "VALID" | "SAME_UPPER" | "SAME_LOWER") {
        return Err(OpError::attr(
            "auto_pad",
            format!("auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, got \"{auto_pad}\""),
        ));
    }
    if auto_pad != "NOTSET" && attrs.is_explicit("pads") {
        return Err(OpError::attr(
            "pads",
            format!("ConvTranspose pads cannot be combined with auto_pad = \"{auto_pad}\""),
        ));
    }
    let pads = list(attrs, "pads", 0, 2 * k)?;
    let wanted = match attrs.ints("output_shape") {
        Some(v) if v.len() != k => {
            return Err(OpError::attr(
                "output_shape",
                format!(
                    "ConvTranspose output_shape needs {k} spatial values, got {}",
                    v.len()
                ),
            ));
        }
        Some(v) => Some(v.to_vec()),
        None if auto_pad.starts_with("SAME") => {
            Some((0..k).map(|i| input[i] as i64 * strides[i]).collect())
        }
        None => None,
    };
    let mut axes = Vec::new();
    for i in 0..k {
        let full = strides[i] * (input[i] as i64 - 1)
            + out_pad[i]
            + (kernel[i] as i64 - 1) * dilations[i]
            + 1;
        let (begin, out) = match &wanted {
            Some(shape) => {
                // Negative where output_shape exceeds what the input produces; the
                // split rounds down as the ONNX reference does, so the extra values
                // (bias only) come at the end.
                if !(1..=MAX_DIM as i64).contains(&shape[i]) {
                    return Err(OpError::attr(
                        "output_shape",
                        format!(
                            "ConvTranspose output_shape must be in 1..={MAX_DIM}, got {shape:?}"
                        ),
                    ));
                }
                let total = full - shape[i];
                let begin = if auto_pad == "SAME_UPPER" {
                    total.div_euclid(2)
                } else {
                    total - total.div_euclid(2)
                };
                (begin, shape[i])
            }
            None if auto_pad == "VALID" => (0, full),
            None => (pads[i], full - pads[i] - pads[i + k]),
        };
        if out < 1 || out > MAX_DIM as i64 {
            return Err(OpError::op(format!(
                "ConvTranspose output size on spatial axis {i} would be {out}"
            )));
        }
        axes.push((
            input[i],
            kernel[i],
            strides[i] as usize,
            dilations[i] as usize,
            begin as isize,
            out as usize,
        ));
    }
    Ok(axes)
}

fn fixed_dims(cx: &InferCtx, i: usize) -> Result<Vec<usize>, OpError> {
    cx.input(i)
        .shape
        .0
        .iter()
        .map(Dim::fixed)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            OpError::input(
                i,
                format!(
                    "ConvTranspose needs fixed dimensions, got {}",
                    cx.input(i).shape
                ),
            )
        })
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = fixed_dims(cx, 0)?;
    let w = fixed_dims(cx, 1)?;
    if !(3..=4).contains(&x.len()) || w.len() != x.len() {
        return Err(OpError::input(
            0,
            format!(
                "ConvTranspose supports 1-D and 2-D: X [N, C, spatial...] and W [C, M/group, kernel...] of the same rank, got {} and {}",
                cx.input(0).shape,
                cx.input(1).shape
            ),
        ));
    }
    let group = cx.attrs.int("group");
    if group < 1 || x[1] % group as usize != 0 || w[0] != x[1] {
        return Err(OpError::input(
            1,
            format!(
                "ConvTranspose W {:?} must be [C = {}, M/group, kernel...] with group ({group}) dividing C",
                w, x[1]
            ),
        ));
    }
    if let Some(ks) = cx.attrs.ints("kernel_shape")
        && (ks.len() != w.len() - 2 || ks.iter().zip(&w[2..]).any(|(&a, &b)| a as usize != b))
    {
        return Err(OpError::attr(
            "kernel_shape",
            format!(
                "kernel_shape {ks:?} does not match the weight's kernel {:?}",
                &w[2..]
            ),
        ));
    }
    let m = w[1] * group as usize;
    if let Some(b) = cx.opt_input(2)
        && b.shape != Shape::fixed(&[m])
    {
        return Err(OpError::input(
            2,
            format!("ConvTranspose bias B must be [{m}], got {}", b.shape),
        ));
    }
    let axes = geometry(cx.attrs, &x[2..], &w[2..])?;
    let mut out = vec![x[0], m];
    out.extend(axes.iter().map(|a| a.5));
    Ok(vec![TensorType {
        dtype: cx.input(0).dtype,
        shape: Shape::fixed(&out),
    }])
}

/// (N, C, M, group, [height axis, width axis]) with a 1-D input as height 1.
fn plan(cx: &LowerCtx) -> (usize, usize, usize, usize, [Axis; 2]) {
    let x = &cx.input(0).shape;
    let w = &cx.input(1).shape;
    let g = cx.attrs.int("group") as usize;
    let axes = geometry(cx.attrs, &x[2..], &w[2..]).expect("checked during inference");
    let unit = (1, 1, 1, 1, 0, 1);
    let hw = if axes.len() == 1 {
        [unit, axes[0]]
    } else {
        [axes[0], axes[1]]
    };
    (x[0], x[1], w[1] * g, g, hw)
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let (n, c, m, g, [h, w]) = plan(cx);
    let kernels = kernels();
    let (xs, ws, y) = (&cx.input(0).expr, &cx.input(1).expr, &cx.outputs[0].expr);
    let b = cx.opt_expr(2);
    let dims = [n, c, h.0, w.0, m, g, h.1, w.1, h.5, w.5];
    let win = [h.2, w.2, h.3, w.3];
    // Braced: a negative literal is not a const argument on its own.
    let pads = [h.4, w.4].map(|p| quote!({ #p }));
    quote! {
        #kernels::conv::conv_transpose2d::<#(#dims),*, #(#win),*, #(#pads),*>(#xs, #ws, #b, #y);
    }
}

fn macs(cx: &LowerCtx) -> u64 {
    let (n, c, m, g, [h, w]) = plan(cx);
    (n * c * (m / g) * h.0 * w.0 * h.1 * w.1) as u64
}
