//! Which weights the generated code takes straight from their files, by the assembler
//! (`.incbin`), instead of as literal bytes through rustc: f32 weights loaded unchanged
//! from an `.npy` or `.safetensors` array, of at least [`STREAM_MIN_BYTES`]. A literal
//! costs rustc many times its size in memory; the assembler reads the file itself.

use crate::data::Data;
use crate::ir::{Graph, TensorId};

/// The smallest weight taken from its file (smaller ones are cheap as literals).
pub const STREAM_MIN_BYTES: u64 = 64 << 10;

/// The weights whose ONNX raw data (and kernel view) come from their files, in the
/// order of `graph.weights`.
pub fn streamed_weights(graph: &Graph) -> Vec<TensorId> {
    graph
        .weights
        .iter()
        .copied()
        .filter(|&w| {
            let t = &graph.tensors[w];
            match (&t.file, &t.value) {
                (Some(f), Some(Data::F32(v))) => {
                    f.len == 4 * v.len() as u64
                        && f.len >= STREAM_MIN_BYTES
                        // The path is written into the assembly as text.
                        && f.path.to_str().is_some()
                }
                _ => false,
            }
        })
        .collect()
}
