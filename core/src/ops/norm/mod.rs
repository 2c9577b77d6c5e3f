//! Normalizations: `BatchNormalization`, `LayerNormalization`.

pub mod batchnorm;
pub mod instance_norm;
pub mod layernorm;
pub mod lp_norm;
pub mod lrn;
pub mod mvn;
