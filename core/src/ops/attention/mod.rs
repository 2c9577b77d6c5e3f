//! Transformer building blocks: `Attention` (`sdpa.rs`), `RotaryEmbedding`
//! (`rotary.rs`).

pub mod rotary;
pub mod sdpa;
