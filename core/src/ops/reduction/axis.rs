//! Operators along one axis of `x` viewed as `[outer, n, inner]`: `CumSum` (opset 14; the
//! axis an int64 input known at compile time), `Hardmax` (opset 13 semantics: that axis
//! alone) and `TopK` (opset 11: `k` an input known at compile time, the values sorted).

use crate::ops::schema::prelude::*;
use crate::types::{Dim, TensorType};

/// `[outer, n, inner]` of `shape` around `axis`.
fn view(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

pub static CUM_SUM: OpSchema = OpSchema {
    op_type: "CumSum",
    inputs: &[input("x"), i64_const("axis", false)],
    dtypes: &[DType::F32, DType::F64, DType::I64, DType::I32],
    attrs: &[
        attr("exclusive", AttrKind::Int, AttrDefault::Int(0)),
        attr("reverse", AttrKind::Int, AttrDefault::Int(0)),
    ],
    infer: |cx| {
        let x = cx.input(0);
        cum_axis(cx.const_i64(1), x.shape.rank())?;
        Ok(vec![x.clone()])
    },
    lower: |cx| {
        let x = cx.input(0);
        let a = cx.input_consts[1].and_then(Data::as_i64);
        let axis = cum_axis(a, x.shape.len()).expect("checked during inference");
        let (outer, n, inner) = view(&x.shape, axis);
        let exclusive = cx.attrs.int("exclusive") != 0;
        let reverse = cx.attrs.int("reverse") != 0;
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::reduce::cumsum(#xe, #y, #outer, #n, #inner, #exclusive, #reverse); }
    },
    macs: |cx| cx.input(0).numel() as u64,
    cases: |op| {
        let mut c: Vec<String> = op
            .dtypes
            .iter()
            .map(|d| format!("opset = 14; input x: {d}[2, 3, 4]; output y = CumSum(x, [1]);"))
            .collect();
        c.extend(cases(&[
            "opset = 14; input x: f32[2, 3, 4]; output a = CumSum(x, [-1], exclusive = 1); output b = CumSum(x, [0], reverse = 1); output c = CumSum(x, [2], exclusive = 1, reverse = 1);",
            "opset = 14; input x: f32[5]; output a = CumSum(x, Constant(value_int = 0));",
        ]));
        c
    },
    ..BASE
};

/// CumSum's axis: one value (a scalar or a one-element list) in `-rank..rank`.
fn cum_axis(axis: Option<&[i64]>, rank: usize) -> Result<usize, OpError> {
    match axis {
        Some(&[a]) => normalize_axis("CumSum", a, rank, "axis").map_err(|mut e| {
            e.at = At::Input(1);
            e
        }),
        _ => Err(OpError::input(1, "CumSum axis must be one value")),
    }
}

pub static HARDMAX: OpSchema = OpSchema {
    op_type: "Hardmax",
    inputs: &[input("input")],
    attrs: &[attr("axis", AttrKind::Int, AttrDefault::Int(-1))],
    infer: |cx| {
        let x = cx.input(0);
        normalize_axis("Hardmax", cx.attrs.int("axis"), x.shape.rank(), "axis")?;
        Ok(vec![x.clone()])
    },
    lower: |cx| {
        let x = cx.input(0);
        let axis = normalize_axis("Hardmax", cx.attrs.int("axis"), x.shape.len(), "axis")
            .expect("checked during inference");
        let (outer, n, inner) = view(&x.shape, axis);
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::reduce::hardmax(#xe, #y, #outer, #n, #inner); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output a = Hardmax(x); output b = Hardmax(x, axis = 0); output c = Hardmax(Round(x), axis = 1);",
            "input x: f32[6]; output a = Hardmax(x);",
        ])
    },
    ..BASE
};

pub static TOP_K: OpSchema = OpSchema {
    op_type: "TopK",
    inputs: &[input("X"), i64_const("K", false)],
    outputs: 2,
    output_names: &["Values", "Indices"],
    dtypes: &[DType::F32, DType::F64, DType::I64, DType::I32],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(-1)),
        attr("largest", AttrKind::Int, AttrDefault::Int(1)),
        attr("sorted", AttrKind::Int, AttrDefault::Int(1)),
    ],
    infer: |cx| {
        let x = cx.input(0);
        let axis = normalize_axis("TopK", cx.attrs.int("axis"), x.shape.rank(), "axis")?;
        let k = match cx.const_i64(1) {
            Some(&[k]) if k >= 0 => k as usize,
            _ => return Err(OpError::input(1, "TopK K must be one non-negative value")),
        };
        match x.shape.0[axis].fixed() {
            Some(n) if k <= n => {}
            Some(n) => {
                return Err(OpError::input(
                    1,
                    format!("TopK K = {k} exceeds the {n} values along axis {axis}"),
                ));
            }
            None => {
                return Err(OpError::input(
                    0,
                    format!("TopK needs axis {axis} of {} fixed", x.shape),
                ));
            }
        }
        let mut values = x.clone();
        values.shape.0[axis] = Dim::Fixed(k);
        let indices = TensorType {
            dtype: DType::I64,
            shape: values.shape.clone(),
        };
        Ok(vec![values, indices])
    },
    lower: |cx| {
        let x = cx.input(0);
        let axis = normalize_axis("TopK", cx.attrs.int("axis"), x.shape.len(), "axis")
            .expect("checked during inference");
        let (outer, n, inner) = view(&x.shape, axis);
        let k = cx.outputs[0].shape[axis];
        let largest = cx.attrs.int("largest") != 0;
        let (xe, v, i, kernels) = (&x.expr, &cx.outputs[0].expr, &cx.outputs[1].expr, kernels());
        // Sorted or not, the values come in order (ONNX leaves the unsorted order open).
        quote! { #kernels::reduce::top_k(#xe, #v, #i, #outer, #n, #inner, #k, #largest); }
    },
    cases: |op| {
        let mut c: Vec<String> = op
            .dtypes
            .iter()
            .map(|d| format!("input x: {d}[3, 5]; let (v, i) = TopK(x, [3]); output v; output i;"))
            .collect();
        c.extend(cases(&[
            "input x: f32[2, 4, 3]; let (v, i) = TopK(x, [2], axis = 1, largest = 0); output v; output i; let (w, j) = TopK(Round(Mul(x, 2.0)), [3], axis = 2); output w; output j;",
            "input x: f32[4]; let (v, i) = TopK(x, [4], largest = 0); output v; output i; let (w, j) = TopK(x, [0]); output w; output j;",
        ]));
        c
    },
    ..BASE
};
