//! The checked model: span-free, in declaration order. Nothing after `check` fails on
//! user input.

use std::collections::BTreeMap;

use crate::ops::{Attrs, OpSchema};
use crate::types::TensorType;

/// Index of a tensor in [`Graph::tensors`].
pub type TensorId = usize;

/// A checked model.
#[derive(Debug)]
pub struct Graph {
    pub name: String,
    pub doc: String,
    pub opset: i64,
    /// Device values of the symbolic dimensions (declared with `dim`, else 1).
    pub device_dims: BTreeMap<String, usize>,
    pub tensors: Vec<Tensor>,
    pub inputs: Vec<TensorId>,
    pub weights: Vec<TensorId>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<TensorId>,
}

/// A named value of the graph.
#[derive(Debug)]
pub struct Tensor {
    pub name: String,
    pub ty: TensorType,
    pub kind: TensorKind,
    pub doc: String,
}

/// Where a tensor comes from.
#[derive(Debug)]
pub enum TensorKind {
    Input,
    /// A weight and its values (f32, row-major).
    Weight(Vec<f32>),
    /// Computed by a node.
    Value,
}

/// One ONNX node.
#[derive(Debug)]
pub struct Node {
    pub name: String,
    pub op: &'static OpSchema,
    /// Inputs in ONNX order; `None` for an omitted optional input.
    pub inputs: Vec<Option<TensorId>>,
    pub outputs: Vec<TensorId>,
    pub attrs: Attrs,
}

impl Graph {
    /// The device shape of a tensor (symbolic dimensions resolved).
    pub fn device_shape(&self, id: TensorId) -> Vec<usize> {
        self.tensors[id]
            .ty
            .shape
            .resolve(&|s| self.device_dims.get(s).copied().unwrap_or(1))
    }

    /// Number of elements of a tensor on the device.
    pub fn device_numel(&self, id: TensorId) -> usize {
        self.device_shape(id).iter().product()
    }

    /// Total number of weight values.
    pub fn params(&self) -> usize {
        self.weights
            .iter()
            .map(|&w| match &self.tensors[w].kind {
                TensorKind::Weight(v) => v.len(),
                _ => 0,
            })
            .sum()
    }

    /// Whether a tensor is a graph output.
    pub fn is_output(&self, id: TensorId) -> bool {
        self.outputs.contains(&id)
    }
}
