//! `LpNormalization` (opset 1 semantics): each vector along `axis` divided by its L1
//! (`p = 1`) or L2 (`p = 2`) norm.

use crate::ops::schema::prelude::*;

pub static LP_NORMALIZATION: OpSchema = OpSchema {
    op_type: "LpNormalization",
    inputs: &[input("input")],
    dtypes: &[DType::F32, DType::F64],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(-1)),
        attr("p", AttrKind::Int, AttrDefault::Int(2)),
    ],
    infer: |cx| {
        let x = cx.input(0);
        normalize_axis(
            "LpNormalization",
            cx.attrs.int("axis"),
            x.shape.rank(),
            "axis",
        )?;
        let p = cx.attrs.int("p");
        if !matches!(p, 1 | 2) {
            return Err(OpError::attr(
                "p",
                format!("LpNormalization p must be 1 or 2, got {p}"),
            ));
        }
        Ok(vec![x.clone()])
    },
    lower: |cx| {
        let x = cx.input(0);
        let axis = normalize_axis(
            "LpNormalization",
            cx.attrs.int("axis"),
            x.shape.len(),
            "axis",
        )
        .expect("checked during inference");
        let outer: usize = x.shape[..axis].iter().product();
        let inner: usize = x.shape[axis + 1..].iter().product();
        let n = x.shape[axis];
        let p = cx.attrs.int("p") as u8;
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::reduce::lp_normalize(#xe, #y, #outer, #n, #inner, #p); }
    },
    macs: |cx| 2 * cx.input(0).numel() as u64,
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output a = LpNormalization(x); output b = LpNormalization(x, axis = 1, p = 1); output c = LpNormalization(Mul(x, 0.0), axis = 0);",
            "input x: f64[3, 4]; output a = LpNormalization(x, axis = 0);",
        ])
    },
    ..BASE
};
