//! Data movement driven by indices: `GatherND` and `ScatterND` (opset 13/18: indices
//! read at run time), `OneHot` (opset 11: depth known at compile time) and `Compress`
//! (opset 11: the condition known at compile time).

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

/// The fixed dims of input `i`, or an error naming it.
fn fixed(cx: &InferCtx, i: usize) -> Result<Vec<usize>, OpError> {
    let t = cx.input(i);
    t.shape
        .0
        .iter()
        .map(Dim::fixed)
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| {
            OpError::input(
                i,
                format!(
                    "{} needs {}'s dims fixed, got {}",
                    cx.op.op_type, cx.op.inputs[i].name, t.shape
                ),
            )
        })
}

/// An int64 index input read at run time.
fn indices(cx: &InferCtx, i: usize) -> Result<Vec<usize>, OpError> {
    let t = cx.input(i);
    if t.dtype != DType::I64 {
        return Err(OpError::input(
            i,
            format!(
                "{} takes {} as i64, got {}",
                cx.op.op_type, cx.op.inputs[i].name, t.dtype
            ),
        ));
    }
    fixed(cx, i)
}

/// GatherND's kernel arguments: batch entries, index tuples per entry, the dims a tuple
/// indexes, values per slice.
type GatherArgs = (usize, usize, Vec<usize>, usize);

/// GatherND's kernel arguments and output dims.
fn gather_plan(
    data: &[usize],
    idx: &[usize],
    b: usize,
) -> Result<(GatherArgs, Vec<usize>), String> {
    let q = *idx.last().unwrap_or(&0);
    if idx.is_empty()
        || b >= idx.len()
        || b > data.len()
        || data[..b] != idx[..b]
        || b + q > data.len()
    {
        return Err(format!(
            "GatherND cannot index data {data:?} with indices {idx:?} (batch_dims {b}): the indices' last dim must be at most the data's rank minus batch_dims, and the batch dims equal"
        ));
    }
    let batch: usize = data[..b].iter().product();
    let count: usize = idx[b..idx.len() - 1].iter().product();
    let slice: usize = data[b + q..].iter().product();
    let mut out = idx[..idx.len() - 1].to_vec();
    out.extend(&data[b + q..]);
    Ok(((batch, count, data[b..b + q].to_vec(), slice), out))
}

pub static GATHER_ND: OpSchema = OpSchema {
    op_type: "GatherND",
    inputs: &[input("data"), any_input("indices", false)],
    dtypes: ALL_DTYPES,
    attrs: &[attr("batch_dims", AttrKind::Int, AttrDefault::Int(0))],
    since_opset: 11,
    infer: |cx| {
        let (data, idx) = (fixed(cx, 0)?, indices(cx, 1)?);
        let b = usize::try_from(cx.attrs.int("batch_dims"))
            .map_err(|_| OpError::attr("batch_dims", "GatherND batch_dims must not be negative"))?;
        let (_, out) = gather_plan(&data, &idx, b).map_err(|m| OpError::input(1, m))?;
        Ok(vec![TensorType {
            dtype: cx.input(0).dtype,
            shape: Shape::fixed(&out),
        }])
    },
    lower: |cx| {
        let (data, idx) = (cx.input(0), cx.input(1));
        let b = cx.attrs.int("batch_dims") as usize;
        let ((batch, count, dims, slice), _) =
            gather_plan(&data.shape, &idx.shape, b).expect("checked during inference");
        let (x, i, y, kernels) = (&data.expr, &idx.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::copy::gather_nd(#x, #i, #y, #batch, #count, &[#(#dims),*], #slice); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[3, 4, 2]; input i: i64[5, 2]; output y = GatherND(x, Abs(Div(i, Cast(Constant(value_int = 3), to = i64))));",
            "input x: i32[2, 3, 4]; input i: i64[2, 2, 1]; output y = GatherND(x, Abs(Div(i, Cast(Constant(value_int = 4), to = i64))), batch_dims = 1);",
            "input x: u8[4, 3]; input i: i64[2, 1]; output y = GatherND(x, Neg(Abs(Div(i, Cast(Constant(value_int = 3), to = i64)))));",
        ])
    },
    ..BASE
};

pub static SCATTER_ND: OpSchema = OpSchema {
    op_type: "ScatterND",
    inputs: &[input("data"), any_input("indices", false), input("updates")],
    dtypes: NUMERIC_WIDE,
    attrs: &[attr("reduction", AttrKind::Str, AttrDefault::Str("none")).since(16)],
    since_opset: 11,
    infer: |cx| {
        let (data, idx, upd) = (fixed(cx, 0)?, indices(cx, 1)?, fixed(cx, 2)?);
        let q = *idx.last().unwrap_or(&0);
        let mut want = idx[..idx.len().saturating_sub(1)].to_vec();
        if idx.is_empty() || q > data.len() {
            return Err(OpError::input(
                1,
                format!("ScatterND cannot index data {data:?} with indices {idx:?}"),
            ));
        }
        want.extend(&data[q..]);
        if upd != want {
            return Err(OpError::input(
                2,
                format!("ScatterND updates must have shape {want:?}, got {upd:?}"),
            ));
        }
        reduction(cx.attrs.string("reduction").unwrap_or("none"), cx.opset)?;
        Ok(vec![cx.input(0).clone()])
    },
    lower: |cx| {
        let (data, idx) = (cx.input(0), cx.input(1));
        let q = *idx.shape.last().unwrap_or(&0);
        let count: usize = idx.shape[..idx.shape.len() - 1].iter().product();
        let dims = &data.shape[..q];
        let slice: usize = data.shape[q..].iter().product();
        let r = reduction(cx.attrs.string("reduction").unwrap_or("none"), i64::MAX)
            .expect("checked during inference");
        let r = proc_macro2::Ident::new(r, proc_macro2::Span::call_site());
        let (x, i, u, y, kernels) = (
            &data.expr,
            &idx.expr,
            &cx.input(2).expr,
            &cx.outputs[0].expr,
            kernels(),
        );
        quote! { #kernels::copy::scatter_nd(#x, #i, #u, #y, #count, &[#(#dims),*], #slice, #kernels::copy::Reduction::#r); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[4, 3]; input u: f32[2, 3]; output y = ScatterND(x, Reshape(Constant(value_ints = [3, 1]), [2, 1]), u);",
            "opset = 18; input x: f32[2, 3, 2]; input u: f32[3, 2]; output a = ScatterND(x, Reshape(Constant(value_ints = [0, 1, 1, 2, 0, 1]), [3, 2]), u, reduction = \"add\"); output b = ScatterND(x, Reshape(Constant(value_ints = [0, 1, 1, 2, 0, 1]), [3, 2]), u, reduction = \"mul\"); output c = ScatterND(x, Reshape(Constant(value_ints = [0, 1, 1, 2, 0, 1]), [3, 2]), u, reduction = \"max\"); output d = ScatterND(x, Reshape(Constant(value_ints = [0, 1, 1, 2, 0, 1]), [3, 2]), u, reduction = \"min\");",
            "input x: i64[5]; input u: i64[2]; output y = ScatterND(x, Reshape(Constant(value_ints = [-1, 0]), [2, 1]), u);",
        ])
    },
    ..BASE
};

/// The kernel's name of a ScatterND reduction valid at `opset`.
fn reduction(r: &str, opset: i64) -> Result<&'static str, OpError> {
    let (name, since) = match r {
        "none" => ("None", 11),
        "add" => ("Add", 16),
        "mul" => ("Mul", 16),
        "max" => ("Max", 18),
        "min" => ("Min", 18),
        other => {
            return Err(OpError::attr(
                "reduction",
                format!("ScatterND reduction must be none, add, mul, max or min, got \"{other}\""),
            ));
        }
    };
    if opset < since {
        return Err(OpError::attr(
            "reduction",
            format!(
                "ScatterND reduction \"{r}\" needs opset {since} (this model uses opset {opset})"
            ),
        ));
    }
    Ok(name)
}

pub static ONE_HOT: OpSchema = OpSchema {
    op_type: "OneHot",
    inputs: &[
        any_input("indices", false),
        i64_const("depth", false),
        input("values"),
    ],
    dtypes: &[DType::F32, DType::I64, DType::I32],
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Int(-1))],
    since_opset: 11,
    infer: |cx| {
        let idx = cx.input(0);
        if !matches!(idx.dtype, DType::I64 | DType::I32 | DType::F32) {
            return Err(OpError::input(
                0,
                format!("OneHot takes indices as i64, i32 or f32, got {}", idx.dtype),
            ));
        }
        let depth = match cx.const_i64(1) {
            Some(&[d]) if d >= 1 => d as usize,
            _ => return Err(OpError::input(1, "OneHot depth must be one positive value")),
        };
        if cx.input(2).shape.0 != [Dim::Fixed(2)] {
            return Err(OpError::input(
                2,
                format!(
                    "OneHot values must be [off, on] (2 values), got {}",
                    cx.input(2).shape
                ),
            ));
        }
        let r = idx.shape.rank() + 1;
        let axis = normalize_axis("OneHot", cx.attrs.int("axis"), r, "axis")?;
        let mut shape = idx.shape.0.clone();
        shape.insert(axis, Dim::Fixed(depth));
        Ok(vec![TensorType {
            dtype: cx.input(2).dtype,
            shape: Shape(shape),
        }])
    },
    lower: |cx| {
        let out = &cx.outputs[0];
        let r = out.shape.len();
        let axis = normalize_axis("OneHot", cx.attrs.int("axis"), r, "axis").expect("checked");
        let depth = out.shape[axis];
        let inner: usize = out.shape[axis + 1..].iter().product();
        let (i, v, y, kernels) = (&cx.input(0).expr, &cx.input(2).expr, &out.expr, kernels());
        quote! { #kernels::copy::one_hot(#i, #y, #depth, #inner, (#v)[0], (#v)[1]); }
    },
    cases: |_| {
        cases(&[
            "input i: i64[2, 3]; output a = OneHot(i, [5], Constant(value_floats = [-1.0, 3.5])); output b = OneHot(i, [12], Constant(value_floats = [-1.0, 3.5]), axis = 0); output c = OneHot(i, [4], Constant(value_floats = [0.0, 1.0]), axis = 1);",
            // ONNX Runtime's f32 and i32 indices are left out: it has no kernel for most
            // combinations and gives all `off` for f32 indices with i64 values; the node
            // suite checks those against the reference.
            "input i: i64[4]; output a = OneHot(i, [3], Constant(value_ints = [0, 1]));",
        ])
    },
    ..BASE
};

pub static COMPRESS: OpSchema = OpSchema {
    op_type: "Compress",
    inputs: &[input("input"), any_const("condition", false)],
    dtypes: ALL_DTYPES,
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Absent)],
    since_opset: 11,
    infer: |cx| {
        let x = fixed(cx, 0)?;
        let (map, out) = compress_plan(cx.attrs, &x, cx.consts[1])?;
        if map.is_empty() {
            return Err(OpError::input(
                1,
                "Compress selects nothing: tinyonnx has no empty tensors",
            ));
        }
        Ok(vec![TensorType {
            dtype: cx.input(0).dtype,
            shape: Shape::fixed(&out),
        }])
    },
    lower: |cx| {
        let (map, _) = compress_plan(cx.attrs, &cx.input(0).shape, cx.input_consts[1])
            .expect("checked during inference");
        let (x, y, kernels) = (&cx.input(0).expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::copy::gather_map(#x, #y, &[#(#map),*]); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[3, 4]; output a = Compress(x, Cast(Constant(value_ints = [1, 0, 1]), to = bool), axis = 0); output b = Compress(x, Cast(Constant(value_ints = [0, 1, 1, 1]), to = bool), axis = -1); output e = Compress(x, Cast(Constant(value_ints = [0, 1, 1, 0, 1]), to = bool));",
            "input x: i64[2, 3]; output a = Compress(x, Cast(Constant(value_ints = [0, 1]), to = bool));",
        ])
    },
    ..BASE
};

/// The flat input index of every output element of Compress, and the output dims.
fn compress_plan(
    attrs: &Attrs,
    x: &[usize],
    cond: Option<&Data>,
) -> Result<(Vec<i64>, Vec<usize>), OpError> {
    let Some(cond) = cond else {
        return Err(OpError::input(
            1,
            "Compress needs condition known at compile time",
        ));
    };
    if cond.dtype() != DType::Bool {
        return Err(OpError::input(
            1,
            format!("Compress takes condition as bool, got {}", cond.dtype()),
        ));
    }
    let keep: Vec<bool> = cond.to_f64().into_iter().map(|v| v != 0.0).collect();
    match attrs.get("axis") {
        Some(AttrValue::Int(a)) => {
            let axis = normalize_axis("Compress", *a, x.len(), "axis")?;
            let n = x[axis];
            if keep.len() > n {
                return Err(OpError::input(
                    1,
                    format!(
                        "Compress condition has {} values for an axis of {n}",
                        keep.len()
                    ),
                ));
            }
            let picked: Vec<usize> = (0..n)
                .filter(|&k| keep.get(k).copied().unwrap_or(false))
                .collect();
            let outer: usize = x[..axis].iter().product();
            let inner: usize = x[axis + 1..].iter().product();
            let mut map = Vec::new();
            for o in 0..outer {
                for &k in &picked {
                    for i in 0..inner {
                        map.push(((o * n + k) * inner + i) as i64);
                    }
                }
            }
            let mut out = x.to_vec();
            out[axis] = picked.len();
            Ok((map, out))
        }
        _ => {
            let n: usize = x.iter().product();
            if keep.len() > n {
                return Err(OpError::input(
                    1,
                    format!(
                        "Compress condition has {} values for {n} elements",
                        keep.len()
                    ),
                ));
            }
            let map: Vec<i64> = (0..n)
                .filter(|&k| keep.get(k).copied().unwrap_or(false))
                .map(|k| k as i64)
                .collect();
            let len = map.len();
            Ok((map, vec![len]))
        }
    }
}
