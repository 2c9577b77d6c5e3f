//! `MeanVarianceNormalization` (opset 13): zero mean and unit variance over `axes`
//! (default `[0, 2, 3]`), with the variance as `E[x^2] - E[x]^2` and 1e-9 added to the
//! standard deviation, as ONNX's function body computes it.

use crate::ops::schema::prelude::*;

pub static MEAN_VARIANCE_NORMALIZATION: OpSchema = OpSchema {
    op_type: "MeanVarianceNormalization",
    inputs: &[input("X")],
    attrs: &[attr("axes", AttrKind::Ints, AttrDefault::Absent)],
    infer: |cx| {
        let x = cx.input(0);
        axes(cx.attrs, x.shape.rank())?;
        Ok(vec![x.clone()])
    },
    scratch: |cx| {
        let shape = &cx.inputs[0].as_ref().map_or(&[][..], |s| s.as_slice());
        let axes = axes(cx.attrs, shape.len()).unwrap_or_default();
        2 * kept(shape, &axes)
    },
    lower: |cx| {
        let x = cx.input(0);
        let shape = &x.shape;
        let rank = shape.len();
        let axes = axes(cx.attrs, rank).expect("checked during inference");
        let mut strides = vec![0usize; rank];
        let mut s = 1usize;
        for d in (0..rank).rev() {
            if !axes.contains(&d) {
                strides[d] = s;
                s *= shape[d];
            }
        }
        let kept = kept(shape, &axes);
        let scratch = &cx
            .scratch
            .as_ref()
            .expect("MeanVarianceNormalization asks for scratch")
            .expr;
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! {
            #kernels::norm::mean_variance::<#rank>(#xe, #y, &[#(#shape),*], &[#(#strides),*], #kept, #scratch);
        }
    },
    macs: |cx| 3 * cx.input(0).numel() as u64,
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4, 2]; output a = MeanVarianceNormalization(x); output b = MeanVarianceNormalization(x, axes = [1]); output c = MeanVarianceNormalization(Mul(x, 5.0), axes = [0, 1, 2, 3]);",
            "input x: f32[3, 5]; output a = MeanVarianceNormalization(x, axes = [-1]);",
        ])
    },
    ..BASE
};

/// The normalized axes, checked.
fn axes(attrs: &Attrs, rank: usize) -> Result<Vec<usize>, OpError> {
    let given = attrs.ints("axes").map_or(vec![0, 2, 3], <[i64]>::to_vec);
    let mut out = Vec::new();
    for a in given {
        let a = normalize_axis("MeanVarianceNormalization", a, rank, "axes")?;
        if out.contains(&a) {
            return Err(OpError::attr(
                "axes",
                format!("MeanVarianceNormalization repeats axis {a}"),
            ));
        }
        out.push(a);
    }
    Ok(out)
}

/// The number of statistics: the product of the axes not normalized over.
fn kept(shape: &[usize], axes: &[usize]) -> usize {
    shape
        .iter()
        .enumerate()
        .filter(|(d, _)| !axes.contains(d))
        .map(|(_, &n)| n)
        .product()
}
