//! Operators that only change the shape, not the data: `Reshape` (opset 14: shape as a
//! compile-time int64 input with `-1` and `0`; with `allowzero` = 1 a 0 is a zero-size dimension), `Flatten` (opset 13),
//! `Squeeze` and `Unsqueeze` (opset 13: axes as an int64 input), `Identity`-like
//! `Dropout` at inference. On the device they copy, or do nothing when the planner runs
//! them in place.

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, MAX_DIM, Shape, TensorType};

pub static RESHAPE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output y = Reshape(x, [4, -1]); output z = Reshape(x, [0, 12]); output w = Reshape(x, [24]);",
            "dim batch = 2; input x: f32[batch, 6]; output y = Reshape(x, [0, 2, 3]); output z = Reshape(x, [0, -1]);",
            "input x: i32[2, 3]; input b: bool[6]; input d: f64[3, 2]; output y = Reshape(x, [3, 2]); output z = Reshape(b, [2, 1, 3]); output w = Reshape(d, [-1]);",
            "input x: f32[2, 3, 4]; output y = Reshape(x, [4, -1], allowzero = 1);",
            "input x: f32[0, 3, 4]; input s: i64[2, 0]; output y = Reshape(x, [3, 4, 0], allowzero = 1); output z = Mul(Abs(x), Exp(x)); output w = Reshape(Add(s, s), [0, 5], allowzero = 1);",
        ])
    },
    op_type: "Reshape",
    inputs: &[input("data"), i64_const("shape", false)],
    attrs: &[attr("allowzero", AttrKind::Int, AttrDefault::Int(0)).since(14)],
    output_names: &["reshaped"],
    dtypes: ALL_DTYPES,
    inplace: Some(0),
    infer: infer_reshape,
    lower: lower_view,
    view: true,
    macs: no_macs,
    ..BASE
};

pub static FLATTEN: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output y = Flatten(x); output z = Flatten(x, axis = 0); output w = Flatten(x, axis = -1); output v = Flatten(x, axis = 3);",
            "input x: i8[2, 2, 2]; input u: u8[3]; output y = Flatten(x, axis = 2); output z = Flatten(u);",
        ])
    },
    dtypes: ALL_DTYPES,
    op_type: "Flatten",
    inputs: &[input("input")],
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Int(1))],
    inplace: Some(0),
    infer: infer_flatten,
    lower: lower_view,
    view: true,
    macs: no_macs,
    ..BASE
};

pub static SQUEEZE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[1, 3, 1, 4]; output y = Squeeze(x, [0]); output z = Squeeze(x, [-2, 0]); output w = Squeeze(x);",
            "input x: i64[3, 1]; input b: bool[1, 2]; output y = Squeeze(x, [1]); output z = Squeeze(b);",
        ])
    },
    op_type: "Squeeze",
    inputs: &[input("data"), i64_const("axes", true)],
    output_names: &["squeezed"],
    dtypes: ALL_DTYPES,
    inplace: Some(0),
    infer: infer_squeeze,
    lower: lower_view,
    view: true,
    macs: no_macs,
    ..BASE
};

pub static UNSQUEEZE: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[3, 4]; output y = Unsqueeze(x, [0]); output z = Unsqueeze(x, [-1, 1]); output w = Unsqueeze(x, [0, 3]);",
            "input x: i32[]; input b: bool[2]; output y = Unsqueeze(x, [0]); output z = Unsqueeze(b, [0, -1]);",
        ])
    },
    op_type: "Unsqueeze",
    inputs: &[input("data"), i64_const("axes", false)],
    output_names: &["expanded"],
    dtypes: ALL_DTYPES,
    inplace: Some(0),
    infer: infer_unsqueeze,
    lower: lower_view,
    view: true,
    macs: no_macs,
    ..BASE
};

pub static DROPOUT: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[2, 5]; output y = Dropout(x); output z = Add(Dropout(x, seed = 3), x);",
        ])
    },
    op_type: "Dropout",
    inputs: &[input("data"), optional("ratio")],
    attrs: &[attr("seed", AttrKind::Int, AttrDefault::Absent)],
    inplace: Some(0),
    infer: infer_dropout,
    lower: lower_view,
    view: true,
    macs: no_macs,
    ..BASE
};

/// Same data, new shape: a copy, or nothing in place.
fn lower_view(cx: &LowerCtx) -> TokenStream {
    if cx.inplace {
        return TokenStream::new();
    }
    let x = &cx.input(0).expr;
    let y = &cx.outputs[0].expr;
    let kernels = kernels();
    quote! { #kernels::copy::copy(#y, #x); }
}

/// Splits a shape into its fixed product (saturating: sizes beyond [`MAX_DIM`] are
/// rejected after inference) and its symbolic dimensions.
fn parts(s: &[Dim]) -> (usize, Vec<String>) {
    let mut fixed: usize = 1;
    let mut syms = Vec::new();
    for d in s {
        match d {
            Dim::Fixed(n) => fixed = fixed.saturating_mul(*n),
            Dim::Sym(n) => syms.push(n.clone()),
        }
    }
    syms.sort();
    (fixed, syms)
}

fn infer_reshape(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let spec = cx
        .const_i64(1)
        .expect("checked: the shape is a compile-time constant");
    // allowzero = 1 differs only where the shape holds a 0: a zero-size dimension
    // instead of a copy of the input's.
    let allow_zero = cx.attrs.int("allowzero") != 0;
    let mut out: Vec<Option<Dim>> = Vec::with_capacity(spec.len());
    let mut infer_at = None;
    for (i, &v) in spec.iter().enumerate() {
        match v {
            -1 if infer_at.is_some() => {
                return Err(OpError::input(
                    1,
                    format!("Reshape shape {spec:?} has more than one -1"),
                ));
            }
            -1 => {
                infer_at = Some(i);
                out.push(None);
            }
            0 if allow_zero => out.push(Some(Dim::Fixed(0))),
            0 => match x.shape.0.get(i) {
                Some(d) => out.push(Some(d.clone())),
                None => {
                    return Err(OpError::input(
                        1,
                        format!(
                            "Reshape shape {spec:?} copies dimension {i} (0), but the input {} has rank {}",
                            x.shape,
                            x.shape.rank()
                        ),
                    ));
                }
            },
            v if v < -1 || v as u64 > MAX_DIM as u64 => {
                return Err(OpError::input(
                    1,
                    format!("Reshape shape {spec:?} has the invalid value {v}"),
                ));
            }
            v => out.push(Some(Dim::Fixed(v as usize))),
        }
    }
    let (in_fixed, in_syms) = parts(&x.shape.0);
    let known: Vec<Dim> = out.iter().flatten().cloned().collect();
    let (out_fixed, mut out_syms) = parts(&known);
    let mismatch = || {
        OpError::input(
            1,
            format!(
                "Reshape cannot turn {} ({} elements) into {spec:?}",
                x.shape,
                describe_count(in_fixed, &in_syms)
            ),
        )
    };
    // Symbolic dimensions must be carried over (by 0 or -1), each exactly once.
    let mut rest = in_syms.clone();
    for s in &out_syms {
        match rest.iter().position(|r| r == s) {
            Some(p) => {
                rest.remove(p);
            }
            None => return Err(mismatch()),
        }
    }
    if let Some(i) = infer_at {
        if out_fixed == 0 || in_fixed % out_fixed != 0 {
            return Err(mismatch());
        }
        let q = in_fixed / out_fixed;
        out[i] = Some(match (rest.len(), q) {
            (0, q) => Dim::Fixed(q),
            (1, 1) => Dim::Sym(rest.remove(0)),
            _ => return Err(mismatch()),
        });
        out_syms.clear();
    } else if in_fixed != out_fixed || !rest.is_empty() {
        return Err(mismatch());
    }
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out.into_iter().map(|d| d.expect("filled above")).collect()),
    }])
}

fn describe_count(fixed: usize, syms: &[String]) -> String {
    if syms.is_empty() {
        fixed.to_string()
    } else {
        format!("{} x {fixed}", syms.join(" x "))
    }
}

fn infer_flatten(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let r = x.shape.rank() as i64;
    let axis = cx.attrs.int("axis");
    if axis < -r || axis > r {
        return Err(OpError::attr(
            "axis",
            format!(
                "Flatten axis = {axis} is out of range for {}: expected {}..={r}",
                x.shape, -r
            ),
        ));
    }
    let a = if axis < 0 { axis + r } else { axis } as usize;
    let fold = |dims: &[Dim], side: &str| -> Result<Dim, OpError> {
        let (fixed, syms) = parts(dims);
        match syms.len() {
            0 => Ok(Dim::Fixed(fixed)),
            1 if fixed == 1 => Ok(Dim::Sym(syms[0].clone())),
            _ => Err(OpError::input(
                0,
                format!(
                    "Flatten of {} at axis {axis}: the {side} dimensions mix the symbolic {} with others, which tinyonnx cannot name",
                    x.shape,
                    syms.join(", ")
                ),
            )),
        }
    };
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(vec![
            fold(&x.shape.0[..a], "leading")?,
            fold(&x.shape.0[a..], "trailing")?,
        ]),
    }])
}

fn infer_squeeze(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let dims = &x.shape.0;
    let axes = if cx.opt_input(1).is_some() {
        let axes = const_axes(cx, 1, dims.len(), 0)?;
        for &a in &axes {
            if dims[a] != Dim::Fixed(1) {
                return Err(OpError::input(
                    1,
                    format!(
                        "Squeeze axis {a} of {} has size {}, not 1",
                        x.shape, dims[a]
                    ),
                ));
            }
        }
        axes
    } else {
        (0..dims.len())
            .filter(|&a| dims[a] == Dim::Fixed(1))
            .collect()
    };
    let out = dims
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .map(|(_, d)| d.clone())
        .collect();
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out),
    }])
}

fn infer_unsqueeze(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let x = cx.input(0);
    let n = cx.const_i64(1).map_or(0, <[i64]>::len);
    let rank = x.shape.rank() + n;
    let axes = const_axes(cx, 1, rank, 0)?;
    let mut src = x.shape.0.iter();
    let out = (0..rank)
        .map(|i| {
            if axes.contains(&i) {
                Dim::Fixed(1)
            } else {
                src.next().expect("counted").clone()
            }
        })
        .collect();
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out),
    }])
}

fn infer_dropout(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    if let Some(r) = cx.opt_input(1)
        && r.shape.rank() != 0
    {
        return Err(OpError::input(
            1,
            format!("Dropout ratio must be a scalar, got {}", r.shape),
        ));
    }
    Ok(vec![cx.input(0).clone()])
}
