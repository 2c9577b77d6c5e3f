//! `QuantizeLinear` and `DequantizeLinear` (opset 13 semantics: per tensor or per axis;
//! the int16/uint16 of opset 21; no blocked quantization) and `DynamicQuantizeLinear`.

use super::{QUANT, check_scale, check_zero_point, or_empty};
use crate::ops::elementwise::cast::dtype_of_code;
use crate::ops::schema::prelude::*;
use crate::types::Shape;

pub static QUANTIZE_LINEAR: OpSchema = OpSchema {
    op_type: "QuantizeLinear",
    inputs: &[
        input("x"),
        any_input("y_scale", false),
        any_input("y_zero_point", true),
    ],
    dtypes: &[DType::F32],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(1)),
        attr("saturate", AttrKind::Int, AttrDefault::Int(1)).since(19),
        attr("block_size", AttrKind::Int, AttrDefault::Int(0)).since(21),
        attr("output_dtype", AttrKind::Int, AttrDefault::Int(0)).since(21),
    ],
    since_opset: 10,
    infer: |cx| {
        let x = cx.input(0);
        let axis = per_axis(cx)?;
        check_scale(cx, 1, axis.as_ref().map(|(a, d)| (*a, d)))?;
        let out = match cx.attrs.get("output_dtype") {
            Some(AttrValue::Int(c)) if *c != 0 => Some(
                dtype_of_code(*c)
                    .filter(|d| QUANT.contains(d))
                    .ok_or_else(|| {
                        OpError::attr(
                            "output_dtype",
                            format!(
                                "QuantizeLinear output_dtype = {c} is not one of i8, u8, i16, u16"
                            ),
                        )
                    })?,
            ),
            _ => None,
        };
        let dtype = match (cx.opt_input(2).map(|z| z.dtype), out) {
            (Some(z), Some(o)) if z != o => {
                return Err(OpError::attr(
                    "output_dtype",
                    format!("QuantizeLinear output_dtype {o} differs from the zero point's {z}"),
                ));
            }
            (Some(z), _) => z,
            (None, Some(o)) => o,
            (None, None) => DType::U8,
        };
        if !QUANT.contains(&dtype) {
            return Err(OpError::input(
                2,
                format!("QuantizeLinear quantizes to i8, u8, i16 or u16, not {dtype}"),
            ));
        }
        check_zero_point(cx, 2, 1, dtype)?;
        Ok(vec![TensorType {
            dtype,
            shape: x.shape.clone(),
        }])
    },
    lower: |cx| lower_linear(cx, "quantize", cx.outputs[0].dtype),
    cases: |_| {
        cases(&[
            "input x: f32[2, 3, 4]; output a = QuantizeLinear(x, Constant(value_float = 0.01)); output b = QuantizeLinear(x, Constant(value_float = 0.02), Cast(Constant(value_int = -3), to = i8)); output c = QuantizeLinear(x, Constant(value_float = 0.004), Cast(Constant(value_int = 128), to = u8));",
            "input x: f32[2, 3, 4]; output a = QuantizeLinear(x, Constant(value_floats = [0.01, 0.005, 0.1]), Cast(Constant(value_ints = [1, -2, 0]), to = i8)); output b = QuantizeLinear(x, Constant(value_floats = [0.01, 0.02, 0.03, 0.001]), Cast(Constant(value_ints = [0, 10, 200, 30]), to = u8), axis = -1);",
            "opset = 21; input x: f32[6]; output a = QuantizeLinear(Mul(x, 300.0), Constant(value_float = 0.01), Cast(Constant(value_int = 7), to = i16)); output b = QuantizeLinear(x, Constant(value_float = 0.0001), output_dtype = 4);",
        ])
    },
    ..BASE
};

pub static DEQUANTIZE_LINEAR: OpSchema = OpSchema {
    op_type: "DequantizeLinear",
    inputs: &[
        input("x"),
        any_input("x_scale", false),
        any_input("x_zero_point", true),
    ],
    dtypes: &[DType::I8, DType::U8, DType::I32, DType::I16, DType::U16],
    dtype_since: &[(DType::I16, 21), (DType::U16, 21)],
    attrs: &[
        attr("axis", AttrKind::Int, AttrDefault::Int(1)),
        attr("block_size", AttrKind::Int, AttrDefault::Int(0)).since(21),
    ],
    since_opset: 10,
    infer: |cx| {
        let x = cx.input(0);
        let axis = per_axis(cx)?;
        check_scale(cx, 1, axis.as_ref().map(|(a, d)| (*a, d)))?;
        check_zero_point(cx, 2, 1, x.dtype)?;
        Ok(vec![TensorType {
            dtype: DType::F32,
            shape: x.shape.clone(),
        }])
    },
    lower: |cx| lower_linear(cx, "dequantize", cx.input(0).dtype),
    cases: |_| {
        cases(&[
            "input x: i8[2, 3, 4]; output a = DequantizeLinear(x, Constant(value_float = 0.5)); output b = DequantizeLinear(x, Constant(value_float = 0.25), Cast(Constant(value_int = -3), to = i8)); output c = DequantizeLinear(x, Constant(value_floats = [0.1, 0.2, 0.3]), Cast(Constant(value_ints = [1, -2, 0]), to = i8));",
            "input x: u8[2, 3, 4]; output a = DequantizeLinear(x, Constant(value_floats = [0.01, 0.02, 0.03, 0.5]), Cast(Constant(value_ints = [0, 10, 200, 3]), to = u8), axis = 2);",
            "input x: i32[5]; output a = DequantizeLinear(x, Constant(value_float = 0.125)); output b = DequantizeLinear(x, Constant(value_float = 2.0), Cast(Constant(value_int = 3), to = i32));",
            "opset = 21; input x: u16[5]; input y: i16[5]; output a = DequantizeLinear(x, Constant(value_float = 0.125), Cast(Constant(value_int = 9), to = u16)); output b = DequantizeLinear(y, Constant(value_float = 3.0));",
            // Round trip through a quantizer.
            "input x: f32[4, 3]; output a = DequantizeLinear(QuantizeLinear(x, Constant(value_float = 0.02), Cast(Constant(value_int = 5), to = i8)), Constant(value_float = 0.02), Cast(Constant(value_int = 5), to = i8));",
        ])
    },
    ..BASE
};

/// The quantized axis `(index, dim)` when the scale has more than one value.
fn per_axis(cx: &InferCtx) -> Result<Option<(usize, crate::types::Dim)>, OpError> {
    let x = cx.input(0);
    let scale = cx.input(1);
    if cx.attrs.int("block_size") != 0 {
        return Err(OpError::attr(
            "block_size",
            format!(
                "{} with blocks (block_size > 0) is not supported: quantize per tensor or per axis",
                cx.op.op_type
            ),
        ));
    }
    if scale.shape.rank() == 0 || scale.shape.0.iter().all(|d| d.fixed() == Some(1)) {
        return Ok(None);
    }
    let a = normalize_axis(cx.op.op_type, cx.attrs.int("axis"), x.shape.rank(), "axis")?;
    Ok(Some((a, x.shape.0[a].clone())))
}

/// `kernels::quant::<kernel>::<q>(x, y, scale, zero_point, inner)`, `q` the integer type.
fn lower_linear(cx: &LowerCtx, kernel: &str, q: DType) -> TokenStream {
    let (x, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let s = &cx.input(1).expr;
    let z = or_empty(cx, 2);
    let inner = inner(cx);
    let (q, f) = (
        elem(q),
        proc_macro2::Ident::new(kernel, proc_macro2::Span::call_site()),
    );
    let kernels = kernels();
    quote! { #kernels::quant::#f::<#q>(#x, #y, #s, #z, #inner); }
}

/// Elements per step of the quantized axis (1 per tensor: the kernel then uses channel 0).
fn inner(cx: &LowerCtx) -> usize {
    let x = &cx.input(0).shape;
    let scale: usize = cx.input(1).shape.iter().product();
    if scale <= 1 {
        return 1;
    }
    let a = normalize_axis("QuantizeLinear", cx.attrs.int("axis"), x.len(), "axis")
        .expect("checked during inference");
    x[a + 1..].iter().product()
}

pub static DYNAMIC_QUANTIZE_LINEAR: OpSchema = OpSchema {
    op_type: "DynamicQuantizeLinear",
    inputs: &[input("x")],
    outputs: 3,
    output_names: &["y", "y_scale", "y_zero_point"],
    since_opset: 11,
    infer: |cx| {
        let x = cx.input(0);
        Ok(vec![
            TensorType {
                dtype: DType::U8,
                shape: x.shape.clone(),
            },
            TensorType {
                dtype: DType::F32,
                shape: Shape(vec![]),
            },
            TensorType {
                dtype: DType::U8,
                shape: Shape(vec![]),
            },
        ])
    },
    lower: |cx| {
        let x = &cx.input(0).expr;
        let (y, s, z) = (
            &cx.outputs[0].expr,
            &cx.outputs[1].expr,
            &cx.outputs[2].expr,
        );
        let kernels = kernels();
        quote! { #kernels::quant::dynamic_quantize(#x, #y, #s, #z); }
    },
    cases: |_| {
        cases(&[
            "input x: f32[3, 4]; let (y, s, z) = DynamicQuantizeLinear(x); output y; output s; output z;",
            "input x: f32[5]; let (y, s, z) = DynamicQuantizeLinear(Abs(x)); output y; output s; output z; let (u, v, w) = DynamicQuantizeLinear(Neg(Abs(x))); output u; output v; output w;",
        ])
    },
    ..BASE
};
