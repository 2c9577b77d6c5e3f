//! `ReverseSequence` (opset 10: each batch entry's first `sequence_lens[b]` steps
//! reversed, the lengths read at run time) and `CenterCropPad` (opset 18: crop or pad
//! each axis to a compile-time size around the centre).

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static REVERSE_SEQUENCE: OpSchema = OpSchema {
    op_type: "ReverseSequence",
    inputs: &[input("input"), any_input("sequence_lens", false)],
    dtypes: ALL_DTYPES,
    attrs: &[
        attr("batch_axis", AttrKind::Int, AttrDefault::Int(1)),
        attr("time_axis", AttrKind::Int, AttrDefault::Int(0)),
    ],
    since_opset: 10,
    infer: |cx| {
        let x = cx.input(0);
        let (b, t) = (cx.attrs.int("batch_axis"), cx.attrs.int("time_axis"));
        if x.shape.rank() < 2 || !matches!((b, t), (0, 1) | (1, 0)) {
            return Err(OpError::attr(
                "batch_axis",
                format!(
                    "ReverseSequence takes a rank of 2 or more and batch_axis, time_axis 0 and 1 in either order, got {} with {b}, {t}",
                    x.shape
                ),
            ));
        }
        let lens = cx.input(1);
        if lens.dtype != DType::I64 || lens.shape.0 != [x.shape.0[b as usize].clone()] {
            return Err(OpError::input(
                1,
                format!(
                    "ReverseSequence sequence_lens must be i64 [{}], got {} {}",
                    x.shape.0[b as usize], lens.dtype, lens.shape
                ),
            ));
        }
        Ok(vec![x.clone()])
    },
    lower: |cx| {
        let x = cx.input(0);
        let batch_first = cx.attrs.int("batch_axis") == 0;
        let (d0, d1) = (x.shape[0], x.shape[1]);
        let inner: usize = x.shape[2..].iter().product();
        let (time, batch, time_stride, batch_stride) = if batch_first {
            (d1, d0, inner, d1 * inner)
        } else {
            (d0, d1, d1 * inner, inner)
        };
        let (xe, l, y, kernels) = (&x.expr, &cx.input(1).expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::copy::reverse_sequence(#xe, #y, #l, #time, #batch, #time_stride, #batch_stride, #inner); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[4, 3, 2]; output y = ReverseSequence(x, Constant(value_ints = [4, 1, 2]));",
            "input x: i64[3, 5]; output y = ReverseSequence(x, Constant(value_ints = [5, 0, 3]), batch_axis = 0, time_axis = 1);",
        ])
    },
    ..BASE
};

pub static CENTER_CROP_PAD: OpSchema = OpSchema {
    op_type: "CenterCropPad",
    inputs: &[input("input_data"), i64_const("shape", false)],
    dtypes: ALL_DTYPES,
    attrs: &[attr("axes", AttrKind::Ints, AttrDefault::Absent)],
    since_opset: 18,
    infer: |cx| {
        let x = cx.input(0);
        let (out, _) = crop_plan(cx.attrs, &x.shape.0, cx.const_i64(1).unwrap_or(&[]))?;
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape(out),
        }])
    },
    lower: |cx| {
        let x = cx.input(0);
        let dims: Vec<Dim> = x.shape.iter().map(|&d| Dim::Fixed(d)).collect();
        let shape = cx.input_consts[1].and_then(Data::as_i64).unwrap_or(&[]);
        let (_, begin) = crop_plan(cx.attrs, &dims, shape).expect("checked during inference");
        let rank = x.shape.len();
        let (inp, out) = (&x.shape, &cx.outputs[0].shape);
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! {
            #kernels::copy::pad::<_, #rank>(#xe, #y, &[#(#inp),*], &[#(#out),*], &[#(#begin),*], #kernels::copy::PadMode::Constant, ::core::default::Default::default());
        }
    },
    cases: |_| {
        cases(&[
            "opset = 18; input x: f32[4, 5, 3]; output a = CenterCropPad(x, [2, 8, 3]); output b = CenterCropPad(x, [7, 2], axes = [0, -2]); output c = CenterCropPad(x, [6], axes = [1]);",
            "opset = 18; input x: i32[3, 3]; output a = CenterCropPad(x, [4, 1]);",
        ])
    },
    ..BASE
};

/// CenterCropPad's output dims and, per axis, where the input starts in the output
/// (negative: crop).
fn crop_plan(
    attrs: &Attrs,
    dims: &[Dim],
    shape: &[i64],
) -> Result<(Vec<Dim>, Vec<isize>), OpError> {
    let r = dims.len();
    let axes: Vec<usize> = match attrs.ints("axes") {
        Some(a) => a
            .iter()
            .map(|&v| normalize_axis("CenterCropPad", v, r, "axes"))
            .collect::<Result<_, _>>()?,
        None => (0..r).collect(),
    };
    if shape.len() != axes.len() {
        return Err(OpError::input(
            1,
            format!(
                "CenterCropPad shape must have {} values (one per axis), got {}",
                axes.len(),
                shape.len()
            ),
        ));
    }
    let mut out = dims.to_vec();
    let mut begin = vec![0isize; r];
    for (&a, &s) in axes.iter().zip(shape) {
        let Some(n) = dims[a].fixed() else {
            return Err(OpError::input(
                0,
                format!("CenterCropPad needs axis {a} fixed"),
            ));
        };
        if s < 1 {
            return Err(OpError::input(
                1,
                format!("CenterCropPad sizes must be positive, got {s}"),
            ));
        }
        let (n, s) = (n as isize, s as isize);
        begin[a] = if s < n { -((n - s) / 2) } else { (s - n) / 2 };
        out[a] = Dim::Fixed(s as usize);
    }
    Ok((out, begin))
}
