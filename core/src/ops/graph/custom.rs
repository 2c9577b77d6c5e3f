//! The schema behind every `custom` operator: its inputs are any tensors, its output
//! types were decided by the declaration's rules (carried in the hidden `__types`
//! attribute). `emit_rust` lowers its nodes to a call of the user's
//! `tinyonnx::CustomKernel` (the declaration's path, with its spans). The ONNX name and
//! domain live on the node (`ir::CustomInfo`).

use crate::ops::schema::prelude::*;
use crate::types::TensorType;

pub static CUSTOM: OpSchema = OpSchema {
    op_type: "custom",
    inputs: &[InputSpec {
        name: "inputs",
        optional: true,
        ty: InTy::Any,
    }],
    variadic: true,
    dtypes: ALL_DTYPES,
    infer,
    lower,
    macs: no_macs,
    output_names: &[],
    ..BASE
};

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    Ok(cx
        .attrs
        .strings("__types")
        .unwrap_or_default()
        .iter()
        .map(|t| decode_type(t))
        .collect())
}

fn lower(_: &LowerCtx) -> TokenStream {
    unreachable!("bug: custom nodes are lowered by emit_rust, with the kernel path's spans")
}
