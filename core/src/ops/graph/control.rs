//! The schemas of the control-flow nodes (`If`, `Loop`, `Scan`) and of the entry and
//! exit marks of their bodies. They are not in the registry: the DSL writes control flow
//! as `if` and `for` (see `syntax.rs`), `check` builds the nodes with their bodies
//! (`ir::Control`), and `control.rs` plans and lowers them.

use crate::ops::schema::prelude::*;

fn lowered_elsewhere(_: &LowerCtx) -> TokenStream {
    unreachable!("bug: control-flow nodes are lowered by control::lower")
}

pub static IF: OpSchema = OpSchema {
    op_type: "If",
    dtypes: ALL_DTYPES,
    lower: lowered_elsewhere,
    macs: no_macs,
    output_names: &[],
    ..BASE
};

pub static LOOP: OpSchema = OpSchema {
    op_type: "Loop",
    dtypes: ALL_DTYPES,
    lower: lowered_elsewhere,
    macs: no_macs,
    output_names: &[],
    ..BASE
};

pub static SCAN: OpSchema = OpSchema {
    op_type: "Scan",
    dtypes: ALL_DTYPES,
    lower: lowered_elsewhere,
    macs: no_macs,
    output_names: &[],
    ..BASE
};

/// The first node of a planned body: it "produces" the body's formal inputs, which the
/// control-flow code writes before the body runs. Never in the ONNX; emits nothing.
pub static BODY_ENTRY: OpSchema = OpSchema {
    op_type: "tinyonnx.body_entry",
    lower: |_| TokenStream::new(),
    macs: no_macs,
    ..BASE
};

/// The last node of a planned body: it reads the body's outputs and formal inputs, so
/// they stay alive (and apart) until the control-flow code has copied them.
pub static BODY_EXIT: OpSchema = OpSchema {
    op_type: "tinyonnx.body_exit",
    lower: |_| TokenStream::new(),
    macs: no_macs,
    ..BASE
};
