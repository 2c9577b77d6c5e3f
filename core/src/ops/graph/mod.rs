//! Nodes that are not plain operators: control flow (`If`, `Loop`, `Scan` and the body marks, outside the registry) and custom operators.

pub mod control;
pub mod custom;
