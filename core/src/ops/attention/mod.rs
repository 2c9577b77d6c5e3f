//! Transformer building blocks: `RotaryEmbedding` (`rotary.rs`).

pub mod rotary;
