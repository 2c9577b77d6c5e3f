//! Matrix patterns: `Trilu` (opset 14: keep the upper or lower triangle of the last two
//! axes, shifted by the diagonal offset `k`) and `EyeLike` (opset 9: ones on a diagonal).

use crate::ops::elementwise::cast::dtype_of_code;
use crate::ops::schema::prelude::*;

pub static TRILU: OpSchema = OpSchema {
    op_type: "Trilu",
    inputs: &[input("input"), i64_const("k", true)],
    dtypes: &[DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool],
    attrs: &[attr("upper", AttrKind::Int, AttrDefault::Int(1))],
    since_opset: 14,
    infer: |cx| {
        let x = cx.input(0);
        if x.shape.rank() < 2 {
            return Err(OpError::input(
                0,
                format!("Trilu needs a rank of 2 or more, got {}", x.shape),
            ));
        }
        if let Some(k) = cx.const_i64(1)
            && k.len() != 1
        {
            return Err(OpError::input(
                1,
                format!("Trilu k must hold one value, got {}", k.len()),
            ));
        }
        Ok(vec![x.clone()])
    },
    lower: |cx| {
        let x = cx.input(0);
        let r = x.shape.len();
        let (rows, cols) = (x.shape[r - 2], x.shape[r - 1]);
        let k = cx.const_i64(1).map_or(0, |k| k[0]);
        let upper = cx.attrs.int("upper") != 0;
        let (xe, y) = (&x.expr, &cx.outputs[0].expr);
        let kernels = kernels();
        quote! { #kernels::copy::trilu(#xe, #y, #rows, #cols, #k, #upper); }
    },
    cases: |_| {
        cases(&[
            "opset = 14; input x: f32[2, 3, 4]; output a = Trilu(x); output b = Trilu(x, upper = 0); output c = Trilu(x, [1]); output d = Trilu(x, [-1], upper = 0); output e = Trilu(x, [-7]);",
            "opset = 14; input x: i64[5, 2]; output a = Trilu(x, [1], upper = 0);",
            "opset = 14; input x: bool[3, 3]; output a = Trilu(x);",
            "opset = 14; input x: f32[0, 3]; output a = Trilu(x); output b = ReduceSum(Trilu(x, upper = 0), [0]);",
        ])
    },
    ..BASE
};

/// What ONNX Runtime computes `EyeLike` on (input and output).
const EYE_DTYPES: &[DType] = &[DType::F32, DType::F64, DType::I64, DType::I32, DType::U64];

pub static EYE_LIKE: OpSchema = OpSchema {
    op_type: "EyeLike",
    inputs: &[input("input")],
    dtypes: EYE_DTYPES,
    attrs: &[
        attr("dtype", AttrKind::Int, AttrDefault::Absent),
        attr("k", AttrKind::Int, AttrDefault::Int(0)),
    ],
    since_opset: 9,
    infer: |cx| {
        let x = cx.input(0);
        if x.shape.rank() != 2 {
            return Err(OpError::input(
                0,
                format!("EyeLike takes a matrix (rank 2), got {}", x.shape),
            ));
        }
        let dtype = match cx.attrs.get("dtype") {
            Some(AttrValue::Int(code)) => dtype_of_code(*code)
                .filter(|d| EYE_DTYPES.contains(d))
                .ok_or_else(|| {
                    OpError::attr(
                        "dtype",
                        format!("EyeLike dtype = {code} is not one of the types it makes (f32, f64, i64, i32, u64)"),
                    )
                })?,
            _ => x.dtype,
        };
        Ok(vec![TensorType {
            dtype,
            shape: x.shape.clone(),
        }])
    },
    lower: |cx| {
        let y = &cx.outputs[0];
        let cols = y.shape[1];
        let k = cx.attrs.int("k");
        let t = elem(y.dtype);
        let (ye, kernels) = (&y.expr, kernels());
        quote! { #kernels::copy::eye::<#t>(#ye, #cols, #k, 0 as #t, 1 as #t); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[3, 4]; output a = EyeLike(x); output b = EyeLike(x, k = 2); output c = EyeLike(x, k = -1, dtype = 7); output d = EyeLike(x, k = 9);",
            "input x: i32[2, 2]; output a = EyeLike(x, dtype = 11);",
        ])
    },
    ..BASE
};
