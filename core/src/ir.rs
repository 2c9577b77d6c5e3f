//! The checked model: span-free, in declaration order. Nothing after `check` fails on
//! user input.

use std::collections::BTreeMap;

use crate::ops::{Attrs, OpSchema};
use crate::types::TensorType;

pub use crate::data::{Data, TensorId};

/// A checked model.
#[derive(Debug, Clone)]
pub struct Graph {
    pub name: String,
    pub doc: String,
    pub opset: i64,
    /// `ModelProto.model_version`, `domain` and `metadata_props` (`model_version`,
    /// `domain` and `meta` items).
    pub model_version: Option<i64>,
    pub domain: Option<String>,
    pub metadata: Vec<(String, String)>,
    /// The `winograd = ...;` setting.
    pub winograd: Winograd,
    /// The `optimize = ...;` setting.
    pub optimize: Optimize,
    /// Instances of `function` blocks: the nodes tagged with one become one call of an
    /// ONNX function.
    pub instances: Vec<Instance>,
    /// Device values of the symbolic dimensions (declared with `dim`, else 1).
    pub device_dims: BTreeMap<String, usize>,
    pub tensors: Vec<Tensor>,
    pub inputs: Vec<TensorId>,
    pub weights: Vec<TensorId>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<TensorId>,
}

/// A model-level setting: the enum, its values' DSL names ([`name`](Winograd::name),
/// what `eject` writes) and [`CHOICES`](Winograd::CHOICES) (what `check` accepts and the
/// xtask's flags take), all from one list, so no value can be left out of either.
macro_rules! setting {
    (
        $(#[$meta:meta])*
        pub enum $ty:ident {
            $($(#[$vmeta:meta])* $variant:ident = $name:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub enum $ty {
            $($(#[$vmeta])* $variant,)+
        }

        impl $ty {
            /// The value's DSL name.
            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }

            /// Every value, by [`Self::name`].
            pub const CHOICES: &'static [(&'static str, $ty)] = &[$(($name, $ty::$variant),)+];
        }
    };
}

setting! {
    /// When a 3x3 stride-1 convolution runs as Winograd F(2x2, 3x3) (fewer products,
    /// more scratch, and its kernel stored transformed: 16 values for every 9), the
    /// model's `winograd = auto | always | never;`.
    pub enum Winograd {
        /// Wherever the arena does not grow.
        Auto = "auto",
        /// Wherever the convolution allows it.
        Always = "always",
        /// Nowhere: the weights stay as declared (the default, so a model stores no
        /// transformed copy its author did not ask for).
        #[default]
        Never = "never",
    }
}

setting! {
    /// What the microcontroller code favours where a kernel can be compiled either way,
    /// the model's `optimize = speed | size;` (the plan's [`crate::plan::sized`]).
    pub enum Optimize {
        /// A copy of a convolution kernel per distinct node on the cores with an FPU,
        /// its sizes constants (the default).
        #[default]
        Speed = "speed",
        /// Convolutions of one kernel that would compile two or more copies share one
        /// copy that reads its sizes at run time, on every core. (Not the recurrent
        /// nodes: with an FPU their shared copy took more flash than the constant ones.)
        Size = "size",
    }
}

/// A named value of the graph.
#[derive(Debug, Clone)]
pub struct Tensor {
    pub name: String,
    pub ty: TensorType,
    pub kind: TensorKind,
    pub doc: String,
    /// The values, when known at compile time: always for weights, and for the outputs
    /// of nodes that fold (`Constant`).
    pub value: Option<Data>,
    /// For a weight loaded unchanged from an f32 array: the file bytes that are its values.
    pub file: Option<crate::data::FileSlice>,
}

/// Where a tensor comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorKind {
    Input,
    /// A weight (an ONNX initializer).
    Weight,
    /// Computed by a node.
    Value,
}

/// What the ONNX names a custom operator's node.
#[derive(Debug, Clone)]
pub struct CustomInfo {
    pub op_type: String,
    pub domain: String,
    pub version: i64,
}

/// One use of a `function` block.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The block's name (the function's name, before deduplication).
    pub block: String,
    /// The instance's name prefix (`stage1.`).
    pub prefix: String,
    /// The block's doc comments.
    pub doc: String,
}

/// An `If`, `Loop` or `Scan` node's subgraphs and how its inputs split.
#[derive(Debug, Clone)]
pub struct Control {
    pub kind: ControlKind,
    /// How many of the node's inputs are its ONNX inputs; the rest are the outer-scope
    /// tensors its bodies read (listed so they live until the node has run).
    pub explicit: usize,
    /// `If`: the then and the else branch; `Loop` and `Scan`: the body.
    pub bodies: Vec<Body>,
}

/// Which control-flow operator, with its static trip count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlKind {
    If,
    /// `Loop`; the body's inputs are the iteration number, the condition and the
    /// carried values. Without `exit`: a static trip count (`M`, a weight) and no
    /// condition input, the body passing its condition through. With `exit` (imported
    /// files only): `M` and the condition are read when the model runs (`M` absent: no
    /// bound) and the body's condition output ends the loop; only carried values, whose
    /// shapes the trips do not change, come out (`trips` is then not read).
    Loop {
        trips: usize,
        exit: bool,
    },
    /// `Scan` over axis 0 of `scan_inputs` inputs, `trips` steps.
    Scan {
        trips: usize,
        scan_inputs: usize,
    },
}

/// A subgraph: its formal inputs (tensors only its entry defines), its nodes and its
/// outputs (tensors its nodes produce, each once).
#[derive(Debug, Clone)]
pub struct Body {
    /// The graph attribute (`then_branch`, `else_branch`, `body`).
    pub attr: &'static str,
    /// The subgraph's name.
    pub name: String,
    pub inputs: Vec<TensorId>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<TensorId>,
}

/// One ONNX node.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// Doc comments of the statement that created the node (its `doc_string`).
    pub doc: String,
    /// The `function` block instance (index into `Graph::instances`) that created it.
    pub instance: Option<usize>,
    /// A custom operator's name, domain and domain version (the node's `op` is then
    /// `ops::custom::CUSTOM`).
    pub custom: Option<CustomInfo>,
    pub op: &'static OpSchema,
    /// Inputs in ONNX order; `None` for an omitted optional input.
    pub inputs: Vec<Option<TensorId>>,
    pub outputs: Vec<TensorId>,
    pub attrs: Attrs,
    /// The subgraphs of a control-flow node (`If`, `Loop`, `Scan`).
    pub control: Option<Box<Control>>,
}

/// Every node, those of control-flow bodies included (each node before its bodies').
pub fn all_nodes(nodes: &[Node]) -> Vec<&Node> {
    let mut all = Vec::new();
    for n in nodes {
        all.push(n);
        for body in n.control.iter().flat_map(|c| &c.bodies) {
            all.extend(all_nodes(&body.nodes));
        }
    }
    all
}

impl Node {
    /// The inputs the ONNX node lists (a control-flow node's captured tensors are not).
    pub fn onnx_inputs(&self) -> &[Option<TensorId>] {
        match &self.control {
            Some(c) => &self.inputs[..c.explicit],
            None => &self.inputs,
        }
    }

    /// Renames every tensor id of the node and its bodies (for merging graphs).
    pub fn map_ids(&mut self, f: &dyn Fn(TensorId) -> TensorId) {
        for t in self.inputs.iter_mut().flatten() {
            *t = f(*t);
        }
        for t in &mut self.outputs {
            *t = f(*t);
        }
        for body in self.control.iter_mut().flat_map(|c| &mut c.bodies) {
            for t in body.inputs.iter_mut().chain(&mut body.outputs) {
                *t = f(*t);
            }
            for n in &mut body.nodes {
                n.map_ids(f);
            }
        }
    }

    /// Prefixes the node's name and those of its bodies' nodes.
    pub fn prefix_names(&mut self, prefix: &str) {
        self.name = format!("{prefix}{}", self.name);
        for body in self.control.iter_mut().flat_map(|c| &mut c.bodies) {
            body.name = format!("{prefix}{}", body.name);
            for n in &mut body.nodes {
                n.prefix_names(prefix);
            }
        }
    }
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
            .map(|&w| self.tensors[w].value.as_ref().map_or(0, Data::len))
            .sum()
    }

    /// The node that writes `t` (none for an input or a constant).
    pub fn producer(&self, t: TensorId) -> Option<usize> {
        self.nodes.iter().position(|n| n.outputs.contains(&t))
    }

    /// [`Graph::consumers`] of every tensor at once, indexed by tensor: for passes that
    /// ask for many (asking one tensor at a time scans every node each time).
    pub fn all_consumers(&self) -> Vec<Vec<usize>> {
        let mut readers = vec![Vec::new(); self.tensors.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for &t in n.inputs.iter().flatten() {
                if readers[t].last() != Some(&i) {
                    readers[t].push(i);
                }
            }
        }
        readers
    }

    /// The nodes that read a tensor, in order.
    pub fn consumers(&self, id: TensorId) -> Vec<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.inputs.contains(&Some(id)))
            .map(|(i, _)| i)
            .collect()
    }

    /// Whether a tensor is a graph output.
    pub fn is_output(&self, id: TensorId) -> bool {
        self.outputs.contains(&id)
    }
}
