//! Data movement with compile-time parameters: `Slice` (opset 13: starts, ends, axes,
//! steps as int64 inputs, negative values and clamping), `Expand`, `Tile`, `Pad`
//! (constant, edge, reflect; wrap from opset 19; `axes` from opset 18; negative pads
//! crop), `Gather` (indices known at compile time, negative ones counted from the end).
//! Inputs need fixed dimensions; the kernels read the input through strides or index
//! maps worked out here.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, MAX_DIM, Shape, TensorType, broadcast};

/// The fixed dimensions of input `i`, or an error naming the symbolic one.
fn fixed(cx: &InferCtx, i: usize) -> Result<Vec<usize>, OpError> {
    let t = cx.input(i);
    t.shape
        .0
        .iter()
        .map(|d| d.fixed())
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| {
            OpError::input(
                i,
                format!(
                    "{} needs fixed dimensions, got {} (declare the dimension with a number)",
                    cx.op.op_type, t.shape
                ),
            )
        })
}

fn out_type(cx: &InferCtx, dims: &[usize]) -> Vec<TensorType> {
    vec![TensorType {
        dtype: cx.input(0).dtype,
        shape: Shape::fixed(dims),
    }]
}

fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1];
    }
    s
}

// ---------------------------------------------------------------- Slice

pub static SLICE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 5]; output a = Slice(x, [0, 1], [1, 100], [0, 2]); output b = Slice(x, [-1, 4], [-100, 0], [1, -1], [-1, -2]); output c = Slice(x, [1], [3]); output d = Slice(x, [0, 0, 0], [2, 3, 5], [0, 1, 2], [1, 2, 3]);",
            "input x: i64[6]; input b: bool[4, 2]; output y = Slice(x, [-2], [1000]); output z = Slice(x, [5], [-1000], [0], [-2]); output w = Slice(b, [1], [3]);",
            "input x: u8[3, 4]; input i: i8[5]; input d: f64[4]; input k: i32[2, 2]; output y = Slice(x, [1, 1], [3, 3]); output z = Slice(i, [-10], [2]); output w = Slice(d, [-3], [-1]); output v = Slice(k, [0], [1], [1]);",
            // An empty result is an empty constant, here concatenated with values.
            "input x: f32[2, 5]; output a = Concat(Slice(x, [1000], [2000], [1]), x, axis = 1); output b = Concat(x, Slice(x, [2], [2], [1]), Slice(x, [0], [3], [1]), axis = 1);",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "Slice",
    inputs: &[
        input("data"),
        i64_const("starts", false),
        i64_const("ends", false),
        i64_const("axes", true),
        i64_const("steps", true),
    ],
    infer: infer_slice,
    lower: lower_slice,
    macs: no_macs,
    ..BASE
};

/// Per axis: (start, step, output length).
type SliceAxes = Vec<(usize, isize, usize)>;

fn slice_plan(cx: &InferCtx) -> Result<SliceAxes, OpError> {
    let dims = fixed(cx, 0)?;
    let starts = cx.const_i64(1).unwrap_or(&[]);
    let ends = cx.const_i64(2).unwrap_or(&[]);
    if starts.len() != ends.len() {
        return Err(OpError::input(
            2,
            format!(
                "Slice ends has {} values, starts {}",
                ends.len(),
                starts.len()
            ),
        ));
    }
    let axes = const_axes(cx, 3, dims.len(), starts.len())?;
    if axes.len() != starts.len() {
        return Err(OpError::input(
            3,
            format!(
                "Slice axes has {} values, starts {}",
                axes.len(),
                starts.len()
            ),
        ));
    }
    let steps: Vec<i64> = match cx.const_i64(4) {
        Some(s) if s.len() != starts.len() => {
            return Err(OpError::input(
                4,
                format!(
                    "Slice steps has {} values, starts {}",
                    s.len(),
                    starts.len()
                ),
            ));
        }
        Some(s) => s.to_vec(),
        None => vec![1; starts.len()],
    };
    let mut plan: SliceAxes = dims.iter().map(|&d| (0, 1, d)).collect();
    for (k, &axis) in axes.iter().enumerate() {
        let dim = dims[axis] as i128;
        let step = steps[k] as i128;
        if step == 0 {
            return Err(OpError::input(4, "Slice steps must not be 0"));
        }
        let (mut start, mut end) = (starts[k] as i128, ends[k] as i128);
        if start < 0 {
            start += dim;
        }
        if end < 0 {
            end += dim;
        }
        let len = if dim == 0 {
            start = 0;
            0
        } else if step > 0 {
            let (s, e) = (start.clamp(0, dim), end.clamp(0, dim));
            start = s;
            ((e - s).max(0) + step - 1) / step
        } else {
            let (s, e) = (start.clamp(0, dim - 1), end.clamp(-1, dim - 1));
            start = s;
            ((s - e).max(0) + (-step) - 1) / (-step)
        };
        // An empty result is allowed: the checker makes it an empty constant, no code.
        plan[axis] = (start as usize, step as isize, len as usize);
    }
    Ok(plan)
}

fn infer_slice(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let plan = slice_plan(cx)?;
    let dims: Vec<usize> = plan.iter().map(|p| p.2).collect();
    Ok(out_type(cx, &dims))
}

/// An inference context over a lowered node's device shapes, to recompute a plan with
/// the rules inference applied.
fn infer_ctx_of<'a>(
    cx: &'a LowerCtx,
    types: &'a [TensorType],
    op: &'static OpSchema,
) -> InferCtx<'a> {
    InferCtx {
        op,
        inputs: cx
            .inputs
            .iter()
            .zip(types)
            .map(|(o, t)| o.as_ref().map(|_| t))
            .collect(),
        consts: cx.input_consts.clone(),
        attrs: cx.attrs,
        opset: MAX_OPSET,
    }
}

/// The device types of a lowered node's inputs (absent ones get an empty shape).
fn device_types(cx: &LowerCtx) -> Vec<TensorType> {
    cx.inputs
        .iter()
        .map(|o| TensorType {
            dtype: DType::F32,
            shape: Shape::fixed(o.as_ref().map_or(&[][..], |o| &o.shape)),
        })
        .collect()
}

fn lower_slice(cx: &LowerCtx) -> TokenStream {
    let types = device_types(cx);
    let icx = infer_ctx_of(cx, &types, &SLICE);
    let plan = slice_plan(&icx).expect("checked during inference");
    let xs = row_major_strides(&cx.input(0).shape);
    let offset: usize = plan.iter().zip(&xs).map(|(p, s)| p.0 * s).sum();
    let strides: Vec<isize> = plan
        .iter()
        .zip(&xs)
        .map(|(p, &s)| p.1 * s as isize)
        .collect();
    let shape: Vec<usize> = plan.iter().map(|p| p.2).collect();
    strided_call(cx, &shape, offset, &strides)
}

fn strided_call(cx: &LowerCtx, shape: &[usize], offset: usize, strides: &[isize]) -> TokenStream {
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let rank = shape.len();
    quote! {
        #kernels::copy::strided::<_, #rank>(#x, #y, &[#(#shape),*], #offset, &[#(#strides),*]);
    }
}

// ---------------------------------------------------------------- Expand

pub static EXPAND: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[3, 1]; input z: f32[2, 3, 5]; output y = Expand(x, [2, 3, 4]); output w = Expand(z, [3, 1]); output v = Expand(x, [1]);",
            "input x: i32[1, 2]; input b: bool[3]; input u: u8[]; output y = Expand(x, [3, 2]); output z = Expand(b, [2, 1, 3]); output w = Expand(u, [2, 2]);",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "Expand",
    inputs: &[input("input"), i64_const("shape", false)],
    infer: infer_expand,
    lower: lower_expand,
    macs: no_macs,
    ..BASE
};

fn infer_expand(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    fixed(cx, 0)?;
    let target = cx.const_i64(1).unwrap_or(&[]);
    let mut dims = Vec::new();
    for &d in target {
        if d < 1 || d as u64 > MAX_DIM as u64 {
            return Err(OpError::input(
                1,
                format!("Expand shape values must be in 1..={MAX_DIM}, got {d}"),
            ));
        }
        dims.push(d as usize);
    }
    let x = cx.input(0);
    match broadcast(&x.shape, &Shape::fixed(&dims)) {
        Some(shape) => Ok(vec![TensorType {
            dtype: x.dtype,
            shape,
        }]),
        None => Err(OpError::input(
            1,
            format!(
                "Expand cannot broadcast the input {} to {target:?}",
                x.shape
            ),
        )),
    }
}

fn lower_expand(cx: &LowerCtx) -> TokenStream {
    let out = cx.outputs[0].shape.clone();
    let strides = crate::types::broadcast_strides(&cx.input(0).shape, &out);
    let strides: Vec<isize> = strides.into_iter().map(|s| s as isize).collect();
    strided_call(cx, &out, 0, &strides)
}

// ---------------------------------------------------------------- Tile

pub static TILE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 5]; output y = Tile(x, [1, 2, 3]); output z = Tile(x, [1, 1, 1]);",
            "input x: i64[2]; input b: bool[1, 2]; input i: i8[2, 1]; output y = Tile(x, [3]); output z = Tile(b, [2, 2]); output w = Tile(i, [1, 4]);",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "Tile",
    inputs: &[input("input"), i64_const("repeats", false)],
    infer: infer_tile,
    lower: lower_tile,
    macs: no_macs,
    ..BASE
};

fn infer_tile(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let dims = fixed(cx, 0)?;
    let reps = cx.const_i64(1).unwrap_or(&[]);
    if reps.len() != dims.len() {
        return Err(OpError::input(
            1,
            format!(
                "Tile needs one repeat per axis of the rank-{} input, got {}",
                dims.len(),
                reps.len()
            ),
        ));
    }
    let mut out = Vec::new();
    for (&d, &r) in dims.iter().zip(reps) {
        if r < 1 || (d as u64).saturating_mul(r as u64) > MAX_DIM as u64 {
            return Err(OpError::input(
                1,
                format!(
                    "Tile repeats must be at least 1 and keep dimensions within {MAX_DIM}, got {r}"
                ),
            ));
        }
        out.push(d * r as usize);
    }
    crate::types::checked_numel(out.iter().copied())
        .ok_or_else(|| OpError::input(1, format!("Tile output {out:?} is too large")))?;
    Ok(out_type(cx, &out))
}

/// The output `[r0 * d0, r1 * d1, ...]` is row-major `[r0, d0, r1, d1, ...]`: a strided
/// copy with stride 0 on the repeat axes.
fn lower_tile(cx: &LowerCtx) -> TokenStream {
    let inp = cx.input(0).shape.clone();
    let out = &cx.outputs[0].shape;
    let xs = row_major_strides(&inp);
    let mut shape = Vec::new();
    let mut strides = Vec::new();
    for d in 0..inp.len() {
        shape.push(out[d] / inp[d]);
        strides.push(0isize);
        shape.push(inp[d]);
        strides.push(xs[d] as isize);
    }
    strided_call(cx, &shape, 0, &strides)
}

// ---------------------------------------------------------------- Pad

pub static PAD: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 19; input x: f32[2, 3, 5]; output a = Pad(x, [0, 1, 2, 0, 0, 1], 0.5); output b = Pad(x, [1, 2, 1, 3], _, [1, -1], mode = \"edge\"); output c = Pad(x, [0, 2, 1, 0, 1, 4], mode = \"reflect\"); output d = Pad(x, [1, 1, 7, 0, 0, 2], mode = \"wrap\"); output e = Pad(x, [0, -1, 1, 0, 0, -2]);",
            "input x: i32[2, 3]; input u: u8[4]; output y = Pad(x, [1, 0, 0, 2], Cast(Constant(value_int = 7), to = i32)); output z = Pad(u, [2, 3], mode = \"reflect\"); output w = Pad(x, [0, 1, 1, 0], mode = \"edge\");",
            "opset = 18; input x: f32[3, 4]; input b: bool[2, 2]; output y = Pad(x, [2, 1], _, [-1]); output z = Pad(b, [1, 1, 1, 1]);",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "Pad",
    inputs: &[
        input("data"),
        i64_const("pads", false),
        optional("constant_value"),
        i64_const("axes", true),
    ],
    attrs: &[attr("mode", AttrKind::Str, AttrDefault::Str("constant"))],
    infer: infer_pad,
    lower: lower_pad,
    macs: no_macs,
    ..BASE
};

/// Per axis: (pad before, output length); and the kernel's mode name.
type PadPlan = (Vec<(isize, usize)>, &'static str);

fn pad_plan(cx: &InferCtx) -> Result<PadPlan, OpError> {
    let dims = fixed(cx, 0)?;
    let mode = match cx.attrs.string("mode") {
        Some("constant") => "Constant",
        Some("edge") => "Edge",
        Some("reflect") => "Reflect",
        Some("wrap") if cx.opset >= 19 => "Wrap",
        Some("wrap") => {
            return Err(OpError::attr(
                "mode",
                format!(
                    "Pad mode \"wrap\" exists from opset 19 (this model uses opset {})",
                    cx.opset
                ),
            ));
        }
        other => {
            return Err(OpError::attr(
                "mode",
                format!(
                    "Pad mode must be \"constant\", \"edge\", \"reflect\" or \"wrap\", got \"{}\"",
                    other.unwrap_or_default()
                ),
            ));
        }
    };
    if cx.opt_input(3).is_some() && cx.opset < 18 {
        return Err(OpError::input(
            3,
            format!(
                "Pad takes axes from opset 18 (this model uses opset {})",
                cx.opset
            ),
        ));
    }
    // A scalar, or one value of any rank (which ONNX Runtime also takes).
    if let Some(v) = cx.opt_input(2)
        && v.shape.0.iter().any(|d| d.fixed() != Some(1))
    {
        return Err(OpError::input(
            2,
            format!(
                "Pad constant_value must be one value (a scalar), got {}",
                v.shape
            ),
        ));
    }
    let axes = const_axes(cx, 3, dims.len(), dims.len())?;
    let pads = cx.const_i64(1).unwrap_or(&[]);
    if pads.len() != 2 * axes.len() {
        return Err(OpError::input(
            1,
            format!(
                "Pad pads must have 2 x {} values (begins, then ends), got {}",
                axes.len(),
                pads.len()
            ),
        ));
    }
    let mut plan: Vec<(isize, usize)> = dims.iter().map(|&d| (0, d)).collect();
    for (k, &axis) in axes.iter().enumerate() {
        let (b, e) = (pads[k], pads[k + axes.len()]);
        let d = dims[axis] as i64;
        let limit = MAX_DIM as i64;
        if b.abs() > limit || e.abs() > limit {
            return Err(OpError::input(
                1,
                format!("Pad pads {b}, {e} are too large"),
            ));
        }
        let len = d + b + e;
        if len < 1 || len > limit {
            return Err(OpError::input(
                1,
                format!("Pad of axis {axis} (size {d}) by {b} and {e} gives {len} values"),
            ));
        }
        if mode == "Reflect" && (b >= d || e >= d) {
            return Err(OpError::input(
                1,
                format!("Pad reflect needs pads smaller than the axis (size {d}), got {b} and {e}"),
            ));
        }
        if mode != "Constant" && (b < 0 || e < 0) {
            return Err(OpError::input(
                1,
                format!(
                    "Pad mode {} takes no negative pads, got {b} and {e}",
                    mode.to_lowercase()
                ),
            ));
        }
        plan[axis] = (b as isize, len as usize);
    }
    Ok((plan, mode))
}

fn infer_pad(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let (plan, _) = pad_plan(cx)?;
    let dims: Vec<usize> = plan.iter().map(|p| p.1).collect();
    Ok(out_type(cx, &dims))
}

fn lower_pad(cx: &LowerCtx) -> TokenStream {
    let types = device_types(cx);
    let icx = infer_ctx_of(cx, &types, &PAD);
    let (plan, mode) = pad_plan(&icx).expect("checked during inference");
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let inp = &cx.input(0).shape;
    let out: Vec<usize> = plan.iter().map(|p| p.1).collect();
    let begin: Vec<isize> = plan.iter().map(|p| p.0).collect();
    let rank = inp.len();
    let mode = proc_macro2::Ident::new(mode, proc_macro2::Span::call_site());
    let value = match cx.inputs.get(2).cloned().flatten() {
        Some(v) => {
            let e = v.expr;
            quote!((#e)[0])
        }
        None => quote!(::core::default::Default::default()),
    };
    quote! {
        #kernels::copy::pad::<_, #rank>(#x, #y, &[#(#inp),*], &[#(#out),*], &[#(#begin),*], #kernels::copy::PadMode::#mode, #value);
    }
}

// ---------------------------------------------------------------- Gather

pub static GATHER: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 5]; output a = Gather(x, [2, -1, 0, 0], axis = 2); output b = Gather(x, [[1, 0], [1, 1]], axis = 0); output c = Gather(x, 1, axis = 1); output d = Gather(x, [-3], axis = -2);",
            "input x: i64[4]; input b: bool[3, 2]; input u: u8[2, 3]; output y = Gather(x, [3, 0, 3]); output z = Gather(b, [1], axis = 1); output w = Gather(u, [[0, 2]], axis = -1);",
            // Indices known only when the model runs (an argmax), int64 and int32,
            // negative ones counting from the end.
            "input x: f32[5, 3]; input z: f32[2, 5]; output y = Gather(x, ArgMax(z, axis = 1, keepdims = 0)); output w = Gather(x, Cast(ArgMin(z, axis = 1), to = i32), axis = 0);",
            "input x: f32[2, 4, 3]; input z: f32[3, 4]; input k: i64[2, 4]; output y = Gather(x, ArgMax(z, axis = 1), axis = 1); output n = Gather(x, Sub(ArgMax(z, axis = 1, keepdims = 0), [4]), axis = 1); output m = Gather(k, ArgMin(z, axis = 1, keepdims = 0), axis = 1);",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "Gather",
    inputs: &[input("data"), any_input("indices", false)],
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Int(0))],
    infer: infer_gather,
    lower: lower_gather,
    // Indices known at compile time are written into the call, not stored as a weight.
    packs: |cx| {
        if cx.input_consts[1].is_some() {
            vec![1]
        } else {
            Vec::new()
        }
    },
    macs: no_macs,
    ..BASE
};

fn infer_gather(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let dims = fixed(cx, 0)?;
    let ti = cx.input(1).dtype;
    if !matches!(ti, DType::I64 | DType::I32) {
        return Err(OpError::input(
            1,
            format!("Gather indices are int64 or int32, got {ti}"),
        ));
    }
    let axis = normalize_axis("Gather", cx.attrs.int("axis"), dims.len(), "axis")?;
    let n = dims[axis] as i64;
    let known = cx.consts[1].map(Data::to_f64).unwrap_or_default();
    for i in known.into_iter().map(|i| i as i64) {
        if i < -n || i >= n {
            return Err(OpError::input(
                1,
                format!(
                    "Gather index {i} is out of range for axis {axis} of size {n}: expected {}..={}",
                    -n,
                    n - 1
                ),
            ));
        }
    }
    let x = cx.input(0);
    let mut out: Vec<Dim> = x.shape.0[..axis].to_vec();
    out.extend(cx.input(1).shape.0.iter().cloned());
    out.extend(x.shape.0[axis + 1..].iter().cloned());
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out),
    }])
}

fn lower_gather(cx: &LowerCtx) -> TokenStream {
    let shape = &cx.input(0).shape;
    let axis = normalize_axis("Gather", cx.attrs.int("axis"), shape.len(), "axis")
        .expect("checked during inference");
    let n = shape[axis];
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let Some(constant) = cx.input_consts[1] else {
        let k = cx.input(1).numel();
        let idx = &cx.input(1).expr;
        return quote! {
            #kernels::copy::gather_dyn::<_, _, #outer, #n, #inner, #k>(#x, #y, #idx);
        };
    };
    let constant = constant.to_f64();
    let indices: Vec<usize> = constant
        .iter()
        .map(|&i| i as i64)
        .map(|i| {
            if i < 0 {
                (i + n as i64) as usize
            } else {
                i as usize
            }
        })
        .collect();
    let k = indices.len();
    quote! {
        #kernels::copy::gather::<_, #outer, #n, #inner, #k>(#x, #y, &[#(#indices),*]);
    }
}

// ---------------------------------------------------------------- Split

/// `Split` (opset 13: sizes as an int64 input; opset 18 adds `num_outputs`, chunks of
/// `ceil(dim / num_outputs)` with a smaller last one). One output per part.
pub static SPLIT: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 5]; let (a, b, c) = Split(x, [1, 3, 1], axis = -1); output a; output b; output c; let (d, e) = Split(x, [1, 1]); output d; output e;",
            "opset = 18; input x: f32[2, 3, 5]; let (a, _, c) = Split(x, num_outputs = 3, axis = 2); output a; output c; let (d, e) = Split(x, num_outputs = 2, axis = 1); output d; output e;",
            "input x: i32[6, 2]; input b: bool[4]; let (p, q) = Split(x, [2, 4]); output p; output q; let (r, s) = Split(b, [3, 1]); output r; output s;",
            // A part of size 0 (an empty constant; the others are written).
            "input x: f32[2, 6]; let (p, q, r) = Split(x, [4, 0, 2], axis = 1); output a = Concat(r, q, p, axis = 1); output p;",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "Split",
    inputs: &[input("input"), i64_const("split", true)],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(0)),
        attr("num_outputs", AttrKind::Int, AttrDefault::Absent).since(18),
    ],
    output_names: &[],
    infer: infer_split,
    lower: lower_split,
    macs: no_macs,
    ..BASE
};

/// The normalized axis and the part sizes.
fn split_plan(cx: &InferCtx) -> Result<(usize, Vec<usize>), OpError> {
    let dims = fixed(cx, 0)?;
    let axis = normalize_axis("Split", cx.attrs.int("axis"), dims.len(), "axis")?;
    let len = dims[axis];
    let num = cx
        .attrs
        .get("num_outputs")
        .map(|_| cx.attrs.int("num_outputs"));
    let sizes = match (cx.const_i64(1), num) {
        (Some(_), Some(_)) => {
            return Err(OpError::attr(
                "num_outputs",
                "Split takes either the split input or num_outputs, not both",
            ));
        }
        (Some(split), None) => {
            // A part of size 0 is an empty constant output (the checker's rule).
            if split.iter().any(|&s| s < 0) {
                return Err(OpError::input(
                    1,
                    format!("Split sizes must not be negative, got {split:?}"),
                ));
            }
            let total: i64 = split.iter().sum();
            if total != len as i64 {
                return Err(OpError::input(
                    1,
                    format!(
                        "Split sizes {split:?} sum to {total}, but axis {axis} has {len} values"
                    ),
                ));
            }
            split.iter().map(|&s| s as usize).collect()
        }
        (None, Some(n)) => {
            if n < 1 || n as usize > len {
                return Err(OpError::attr(
                    "num_outputs",
                    format!("Split num_outputs must be in 1..={len} for axis {axis}, got {n}"),
                ));
            }
            let chunk = len.div_ceil(n as usize);
            let mut sizes = Vec::new();
            let mut left = len;
            while left > 0 {
                sizes.push(chunk.min(left));
                left -= chunk.min(left);
            }
            if sizes.len() != n as usize {
                return Err(OpError::attr(
                    "num_outputs",
                    format!(
                        "Split of {len} values into {n} chunks of {chunk} leaves {} parts; choose another num_outputs",
                        sizes.len()
                    ),
                ));
            }
            sizes
        }
        (None, None) => {
            return Err(OpError::op(
                "Split needs its part sizes: the split input (or num_outputs from opset 18)",
            ));
        }
    };
    Ok((axis, sizes))
}

fn infer_split(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let dims = fixed(cx, 0)?;
    let (axis, sizes) = split_plan(cx)?;
    Ok(sizes
        .iter()
        .map(|&s| {
            let mut d = dims.clone();
            d[axis] = s;
            out_type(cx, &d).remove(0)
        })
        .collect())
}

fn lower_split(cx: &LowerCtx) -> TokenStream {
    let types = device_types(cx);
    let icx = infer_ctx_of(cx, &types, &SPLIT);
    let (axis, sizes) = split_plan(&icx).expect("checked during inference");
    let shape = &cx.input(0).shape;
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let in_chunk = shape[axis] * inner;
    let kernels = kernels();
    let x = &cx.input(0).expr;
    let mut offset = 0;
    let parts = sizes.iter().zip(&cx.outputs).filter_map(|(&s, out)| {
        let (chunk, off, y) = (s * inner, offset, &out.expr);
        offset += s * inner;
        // An empty part is a constant with no buffer to write.
        (s > 0).then(|| {
            quote! { #kernels::copy::split_part::<_, #outer, #in_chunk, #chunk, #off>(#x, #y); }
        })
    });
    quote! { #(#parts)* }
}

// ---------------------------------------------------------------- GatherElements, ScatterElements

/// `GatherElements` (opset 13): `out[i] = data[i with axis replaced by indices[i]]`, the
/// indices known at compile time, output shaped like them.
pub static GATHER_ELEMENTS: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 5]; output a = GatherElements(x, [[[0, 4], [1, -1], [2, 2]], [[3, 0], [-5, 1], [4, 4]]], axis = 2); output b = GatherElements(x, [[[1, 0, 1, 0, 1]]], axis = 0);",
            "input x: i64[3, 3]; input b: bool[2, 2]; output y = GatherElements(x, [[1, 2, 0], [2, 0, 0]], axis = 0); output z = GatherElements(b, [[1], [0]], axis = -1);",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "GatherElements",
    inputs: &[input("data"), i64_const("indices", false)],
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Int(0))],
    infer: |cx| {
        element_map(cx)?;
        let dims = fixed(cx, 1)?;
        Ok(out_type(cx, &dims))
    },
    lower: lower_gather_elements,
    macs: no_macs,
    ..BASE
};

/// `ScatterElements` (opset 13; `reduction` add and mul from 16, max and min from 18):
/// a copy of `data` with `updates` written (or combined) at the positions the
/// compile-time `indices` give along `axis`.
pub static SCATTER_ELEMENTS: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 18; input x: f32[2, 3, 5]; weight u: f32[2, 3, 2] = uniform(low = -1.0, high = 1.0, seed = 3); weight u2: f32[1, 1, 3] = uniform(low = -1.0, high = 1.0, seed = 4); weight u3: f32[1, 2, 1] = uniform(low = -1.0, high = 1.0, seed = 5); output a = ScatterElements(x, [[[0, 4], [1, -1], [2, 3]], [[3, 0], [-5, 1], [4, 2]]], u, axis = -1); output b = ScatterElements(x, [[[0, 0, 4]]], u2, axis = 2, reduction = \"add\"); output c = ScatterElements(x, [[[1], [0]]], u3, axis = 1, reduction = \"max\"); output d = ScatterElements(x, [[[1], [1]]], u3, axis = 1, reduction = \"min\");",
            "input x: f32[3, 3]; input u: f32[1, 2]; output y = ScatterElements(x, [[2, 0]], u); output z = ScatterElements(x, [[1, 1]], u, axis = 1, reduction = \"mul\");",
        ])
    },
    op_type: "ScatterElements",
    inputs: &[input("data"), i64_const("indices", false), input("updates")],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(0)),
        attr("reduction", AttrKind::Str, AttrDefault::Str("none")).since(16),
    ],
    infer: infer_scatter,
    lower: lower_scatter,
    macs: no_macs,
    ..BASE
};

/// For every element of `indices` (row-major), the flat offset in `data` it addresses.
fn element_map(cx: &InferCtx) -> Result<Vec<i64>, OpError> {
    let op = cx.op.op_type;
    let data = fixed(cx, 0)?;
    let idx = fixed(cx, 1)?;
    let axis = normalize_axis(op, cx.attrs.int("axis"), data.len(), "axis")?;
    if idx.len() != data.len()
        || idx
            .iter()
            .zip(&data)
            .enumerate()
            .any(|(d, (&i, &n))| d != axis && i > n)
    {
        return Err(OpError::input(
            1,
            format!(
                "{op} indices {idx:?} must have the rank of data {data:?} and no larger size off the axis"
            ),
        ));
    }
    let values = cx.const_i64(1).unwrap_or(&[]);
    let strides = row_major_strides(&data);
    let n = data[axis] as i64;
    let mut pos = vec![0usize; idx.len()];
    let mut map = Vec::with_capacity(values.len());
    for &v in values {
        if v < -n || v >= n {
            return Err(OpError::input(
                1,
                format!(
                    "{op} index {v} is out of range for axis {axis} of size {n}: expected {}..={}",
                    -n,
                    n - 1
                ),
            ));
        }
        let v = if v < 0 { v + n } else { v } as usize;
        let off: usize = (0..pos.len())
            .map(|d| if d == axis { v } else { pos[d] } * strides[d])
            .sum();
        map.push(off as i64);
        for d in (0..pos.len()).rev() {
            pos[d] += 1;
            if pos[d] < idx[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    Ok(map)
}

fn lower_gather_elements(cx: &LowerCtx) -> TokenStream {
    let types = device_types(cx);
    let map =
        element_map(&infer_ctx_of(cx, &types, &GATHER_ELEMENTS)).expect("checked during inference");
    let (decl, m) = node_static_data("map", &Data::I64(map));
    let kernels = kernels();
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    quote! {
        #decl
        #kernels::copy::gather_map::<_>(#x, #y, #m);
    }
}

fn infer_scatter(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let map = element_map(cx)?;
    let since = match cx.attrs.string("reduction") {
        Some("none") => 13,
        Some("add") | Some("mul") => 16,
        Some("max") | Some("min") => 18,
        other => {
            return Err(OpError::attr(
                "reduction",
                format!(
                    "ScatterElements reduction must be none, add, mul, max or min, got \"{}\"",
                    other.unwrap_or_default()
                ),
            ));
        }
    };
    if cx.opset < since {
        return Err(OpError::attr(
            "reduction",
            format!(
                "ScatterElements reduction \"{}\" exists from opset {since} (this model uses opset {})",
                cx.attrs.string("reduction").unwrap_or_default(),
                cx.opset
            ),
        ));
    }
    if cx.input(2).shape != cx.input(1).shape {
        return Err(OpError::input(
            2,
            format!(
                "ScatterElements updates must be shaped like indices {}, got {}",
                cx.input(1).shape,
                cx.input(2).shape
            ),
        ));
    }
    if cx.attrs.string("reduction") == Some("none") {
        let mut seen = map.clone();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(OpError::input(
                1,
                "ScatterElements indices write one position twice, which ONNX leaves undefined without a reduction",
            ));
        }
    }
    Ok(vec![cx.input(0).clone()])
}

fn lower_scatter(cx: &LowerCtx) -> TokenStream {
    let types = device_types(cx);
    let map = element_map(&infer_ctx_of(cx, &types, &SCATTER_ELEMENTS))
        .expect("checked during inference");
    let (decl, m) = node_static_data("map", &Data::I64(map));
    let kernels = kernels();
    let (x, u, y) = (&cx.input(0).expr, &cx.input(2).expr, &cx.outputs[0].expr);
    let r = match cx.attrs.string("reduction") {
        Some("add") => "Add",
        Some("mul") => "Mul",
        Some("max") => "Max",
        Some("min") => "Min",
        _ => "None",
    };
    let r = proc_macro2::Ident::new(r, proc_macro2::Span::call_site());
    quote! {
        #decl
        #kernels::copy::scatter_map(#x, #u, #y, #m, #kernels::copy::Reduction::#r);
    }
}
