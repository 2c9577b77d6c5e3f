//! Quantization: the linear quantizers (`linear.rs`) and the integer products
//! (`integer.rs`), with the scale and zero-point rules they share.

pub mod add;
pub mod conv;
pub mod integer;
pub mod linear;

use crate::ops::schema::prelude::*;
use crate::types::Dim;

/// The integer types values are quantized to.
pub const QUANT: &[DType] = &[DType::I8, DType::U8, DType::I16, DType::U16];

/// A scale input `i`: f32, one value (per tensor) or, when `axis` is given, one per
/// element of that axis of size `len`. Returns whether it is per axis.
pub fn check_scale(cx: &InferCtx, i: usize, axis: Option<(usize, &Dim)>) -> Result<bool, OpError> {
    let op = cx.op.op_type;
    let name = cx.op.inputs[i].name;
    let s = cx.input(i);
    if s.dtype != DType::F32 {
        return Err(OpError::input(
            i,
            format!("{op} takes {name} as f32, got {}", s.dtype),
        ));
    }
    if s.shape.single() {
        return Ok(false);
    }
    match axis {
        Some((_, len)) if s.shape.rank() == 1 && &s.shape.0[0] == len => Ok(true),
        Some((a, len)) => Err(OpError::input(
            i,
            format!(
                "{op} {name} must hold one value or one per element of axis {a} ({len}), got {}",
                s.shape
            ),
        )),
        None => Err(OpError::input(
            i,
            format!("{op} {name} must hold one value, got {}", s.shape),
        )),
    }
}

/// A zero point input `i`: of dtype `want` and the shape of scale input `scale`.
pub fn check_zero_point(cx: &InferCtx, i: usize, scale: usize, want: DType) -> Result<(), OpError> {
    let Some(z) = cx.opt_input(i) else {
        return Ok(());
    };
    let op = cx.op.op_type;
    let name = cx.op.inputs[i].name;
    if z.dtype != want {
        return Err(OpError::input(
            i,
            format!("{op} {name} must be {want}, got {}", z.dtype),
        ));
    }
    // One value either way (`[]` against `[1]`) is per tensor: ONNX Runtime's own
    // quantizer writes a bias's scale as `[1]` and its zero point as `[]`.
    if z.shape != cx.input(scale).shape && !(z.shape.single() && cx.input(scale).shape.single()) {
        return Err(OpError::input(
            i,
            format!(
                "{op} {name} must have the shape of {} ({}), got {}",
                cx.op.inputs[scale].name,
                cx.input(scale).shape,
                z.shape
            ),
        ));
    }
    Ok(())
}

/// The expression of optional input `i`, or an empty slice.
pub fn or_empty(cx: &LowerCtx, i: usize) -> TokenStream {
    match cx.inputs.get(i).cloned().flatten() {
        Some(o) => o.expr,
        None => quote!(&[]),
    }
}
