//! Nodes that become other nodes: an If whose condition is known (its branch), Softmax
//! and friends before opset 13, Sum and Mean, scikit-learn's `ai.onnx.ml` operators, and
//! Constant.

use tinyonnx_layout::narrow::Narrow;
use tinyonnx_proto as pb;

use super::proto::Const;
use super::proto::int_attr;
use super::{Importer, MAX_IF_DEPTH, Val, proto};
use crate::data::Data;
use crate::ops;

impl Importer<'_> {
    /// A Constant node: its value, under its output's name.
    pub(super) fn constant(&mut self, node: &pb::NodeProto) {
        match constant(node) {
            Ok(c) => self.define(node, 0, Val::Const(c)),
            Err(e) => self.error(e),
        }
    }

    /// An If whose condition is known: the branch taken, inlined.
    /// (One whose condition the model's data decides becomes an If node: `data_if`.)
    pub(super) fn constant_if(&mut self, node: &pb::NodeProto, name: &str) {
        let cond = match node.input.first().and_then(|c| self.vals.get(c)) {
            Some(Val::Const(c)) => c.data.clone(),
            Some(Val::Poisoned) => return,
            Some(&Val::Tensor(id)) => {
                self.data_if(node, name, id);
                return;
            }
            _ => {
                self.error("has no condition");
                return;
            }
        };
        let taken = match cond {
            Data::Typed { values, .. } if values.len() == 1 => values[0] != 0.0,
            Data::I64(v) if v.len() == 1 => v[0] != 0,
            Data::F32(v) if v.len() == 1 => v[0] != 0.0,
            _ => {
                self.error("has a condition of more than one value");
                return;
            }
        };
        let branch = if taken { "then_branch" } else { "else_branch" };
        let Some(g) = proto::find(node, branch).and_then(|a| a.g.as_ref()) else {
            self.error(format!("has no {branch}"));
            return;
        };
        if self.depth >= MAX_IF_DEPTH {
            self.error(format!("nests If more than {MAX_IF_DEPTH} deep"));
            return;
        }
        if g.output.len() != node.output.len() {
            self.error(format!(
                "has {} outputs but its {branch} returns {}",
                node.output.len(),
                g.output.len()
            ));
            return;
        }
        self.initializers(&g.initializer, &format!(" of its {branch}"));
        let outs: Vec<&str> = g.output.iter().filter_map(|o| o.name.as_deref()).collect();
        let context = format!("{} > {branch}", node.name.as_deref().unwrap_or("If"));
        self.depth += 1;
        let before = self.cx.error_count();
        let saved = std::mem::replace(&mut self.branch, context);
        self.run_nodes(&g.node, &outs);
        self.branch = saved;
        self.depth -= 1;
        if self.cx.error_count() > before {
            return;
        }
        for (k, o) in g.output.iter().enumerate() {
            let v = o
                .name
                .as_deref()
                .and_then(|n| self.vals.get(n))
                .cloned()
                .unwrap_or(Val::Poisoned);
            self.define(node, k, v);
        }
    }

    /// Builds `op(inputs) -> output` for a rewrite, with `attrs`, as node `name` (`op`
    /// is a registered operator).
    pub(super) fn emit(
        &mut self,
        op: &str,
        inputs: Vec<String>,
        output: String,
        attrs: Vec<pb::AttributeProto>,
        name: String,
    ) {
        let schema = ops::lookup(op).expect("rewrites make registered operators");
        let node = pb::NodeProto {
            op_type: Some(op.into()),
            input: inputs,
            output: vec![output],
            attribute: attrs,
            ..Default::default()
        };
        self.build(schema, &node, name);
    }

    /// QuantizeLinear to a 4- or 2-bit integer (its zero point's type, or `output_dtype`):
    /// the registered 8-bit quantization, then a `Clip` to the format's range, as ONNX
    /// saturates to the output type (the 8-bit carrier keeps the result).
    pub(super) fn quantize_narrow_int(&mut self, node: &pb::NodeProto, name: &str, n: Narrow) {
        let Some(y) = node.output.first().filter(|y| !y.is_empty()) else {
            return;
        };
        let carrier = ops::elementwise::cast::carrier(n);
        let wide = format!("{y}::8bit");
        let mut q = node.clone();
        q.output = vec![wide.clone()];
        for a in &mut q.attribute {
            if a.name.as_deref() == Some("output_dtype") {
                a.i = Some(i64::from(carrier.onnx_code()));
            }
        }
        let schema = ops::lookup("QuantizeLinear").expect("registered");
        self.build(schema, &q, format!("{name}::8bit"));
        let (lo, hi) = n.int_range();
        let (lo, hi) = (lo as f64, hi as f64);
        let (min, max) = (format!("{y}::min"), format!("{y}::max"));
        for (c, v) in [(&min, lo), (&max, hi)] {
            let data = Data::Typed {
                dtype: carrier,
                values: vec![v],
            };
            self.define_const(c, Vec::new(), data);
        }
        self.emit(
            "Clip",
            vec![wide, min, max],
            y.clone(),
            Vec::new(),
            name.to_string(),
        );
    }

    /// Quantize/DequantizeLinear to or from a narrow float format (float 8, FLOAT4E2M1),
    /// whose values the graph carries in f32, as the arithmetic the ONNX reference does:
    /// `Cast(x / scale, to = format, saturate)` (FLOAT4E2M1 adds its zero point first;
    /// a float 8 zero point is 0 by the spec), and `(x - zero_point) * scale`. A 1-D
    /// scale along `axis` is unsqueezed to broadcast over the axes after it. Returns
    /// false, having built nothing, for blocked quantization (the registered operator's
    /// check explains it).
    pub(super) fn quantize_float(
        &mut self,
        node: &pb::NodeProto,
        name: &str,
        n: Narrow,
        dequantize: bool,
    ) -> bool {
        if proto::int(node, "block_size").unwrap_or(0) != 0 {
            return false;
        }
        let (Some(x), Some(scale), Some(y)) = (
            node.input.first(),
            node.input.get(1).filter(|s| !s.is_empty()),
            node.output.first().filter(|y| !y.is_empty()),
        ) else {
            return false;
        };
        let rank = self.dims_of(x).map_or(0, |d| d.len());
        let axis = proto::int(node, "axis").unwrap_or(1);
        let axis = if axis < 0 { axis + rank as i64 } else { axis };
        let along = |me: &mut Self, v: &str, what: &str| -> String {
            let per_axis = me.dims_of(v).is_some_and(|d| d.len() == 1 && d[0] > 1);
            let after: Vec<i64> = ((axis + 1).max(1)..rank as i64).collect();
            if !per_axis || after.is_empty() {
                return v.to_string();
            }
            let (axes, out) = (format!("{y}::{what}_axes"), format!("{y}::{what}"));
            me.define_const(&axes, vec![after.len()], Data::I64(after));
            me.emit(
                "Unsqueeze",
                vec![v.to_string(), axes],
                out.clone(),
                Vec::new(),
                format!("{name}::{what}"),
            );
            out
        };
        let scale = along(self, scale, "scale");
        let zp = node
            .input
            .get(2)
            .filter(|z| !z.is_empty())
            .map(|z| along(self, z, "zero_point"));
        if dequantize {
            let shifted = match zp {
                Some(zp) => {
                    let d = format!("{y}::shifted");
                    self.emit(
                        "Sub",
                        vec![x.clone(), zp],
                        d.clone(),
                        Vec::new(),
                        format!("{name}::shift"),
                    );
                    d
                }
                None => x.clone(),
            };
            self.emit(
                "Mul",
                vec![shifted, scale],
                y.clone(),
                Vec::new(),
                name.to_string(),
            );
            return true;
        }
        let mut q = format!("{y}::scaled");
        self.emit(
            "Div",
            vec![x.clone(), scale],
            q.clone(),
            Vec::new(),
            format!("{name}::scale"),
        );
        if let Some(zp) = zp.filter(|_| n == Narrow::F4E2M1) {
            let shifted = format!("{y}::shifted");
            self.emit(
                "Add",
                vec![q, zp],
                shifted.clone(),
                Vec::new(),
                format!("{name}::shift"),
            );
            q = shifted;
        }
        let mut attrs = vec![int_attr("to", i64::from(n.onnx_code()))];
        if let Some(sat) = proto::int(node, "saturate") {
            attrs.push(int_attr("saturate", sat));
        }
        self.emit("Cast", vec![q], y.clone(), attrs, name.to_string());
        true
    }

    /// Names a constant a rewrite makes.
    pub(super) fn define_const(&mut self, name: &str, dims: Vec<usize>, data: Data) {
        self.vals
            .insert(name.to_string(), Val::Const(Const { dims, data }));
    }

    /// Split without part sizes before opset 18 means equal parts, one per output; the
    /// sizes become the `split` input (the registered Split needs them, or
    /// `num_outputs`, which older opsets lack). Returns the node to build.
    pub(super) fn split_equal_parts(&mut self, node: &pb::NodeProto) -> Option<pb::NodeProto> {
        let Some(dims) = node.input.first().and_then(|i| self.dims_of(i)) else {
            self.error("needs its input's dims fixed to split it into equal parts");
            return None;
        };
        let rank = dims.len() as i64;
        let axis = proto::int(node, "axis").unwrap_or(0);
        let a = if axis < 0 { axis + rank } else { axis };
        let n = node.output.len();
        let Some(&d) = usize::try_from(a).ok().and_then(|a| dims.get(a)) else {
            self.error(format!("has axis {axis} outside the input's rank {rank}"));
            return None;
        };
        if n == 0 || d % n != 0 {
            self.error(format!(
                "splits a dimension of {d} into {n} equal parts; it must divide evenly"
            ));
            return None;
        }
        let name = format!("{}::split", node.output[0]);
        self.define_const(&name, vec![n], Data::I64(vec![(d / n) as i64; n]));
        let mut node = node.clone();
        node.input.truncate(1);
        node.input.push(name);
        Some(node)
    }

    /// LayerNormalization whose Mean or InvStdDev output is read (tinyonnx's operator
    /// makes only Y): Y from the operator, the statistics from ReduceMean, Sub, Mul,
    /// Add, Sqrt and Reciprocal over the normalized axes, kept as dims of 1.
    pub(super) fn layer_norm_stats(&mut self, node: &pb::NodeProto, name: &str) {
        let Some(x) = node.input.first().cloned() else {
            self.error("has no input");
            return;
        };
        let Some(dims) = self.dims_of(&x) else {
            if matches!(self.vals.get(&x), Some(Val::Tensor(_) | Val::Const(_))) {
                self.error("needs an input of known shape for its Mean and InvStdDev outputs");
            }
            return;
        };
        let r = dims.len() as i64;
        let axis = proto::int(node, "axis").unwrap_or(-1);
        let a = if axis < 0 { axis + r } else { axis };
        if !(0..r).contains(&a) {
            self.error(format!("has axis {axis}, out of range for rank {r}"));
            return;
        }
        if proto::int(node, "stash_type").is_some_and(|t| t != 1) {
            self.error("computes its statistics in f32 only (stash_type = 1)");
            return;
        }
        let eps = proto::float(node, "epsilon").unwrap_or(1e-5);
        let out = |k: usize| node.output.get(k).filter(|o| !o.is_empty()).cloned();
        let y = out(0).unwrap_or_else(|| format!("{name}::Y"));
        let mean = out(1).unwrap_or_else(|| format!("{name}::Mean"));
        let (x_in, rest) = (x.clone(), node.input[1..].to_vec());
        self.emit(
            "LayerNormalization",
            [vec![x_in], rest].concat(),
            y,
            node.attribute.clone(),
            name.to_string(),
        );
        let axes: Vec<i64> = (a..r).collect();
        self.reduce_mean(&x, &mean, &axes, format!("{name}::mean"));
        let t = |s: &str| format!("{name}::{s}");
        self.emit(
            "Sub",
            vec![x, mean],
            t("centered"),
            Vec::new(),
            t("centered"),
        );
        self.emit(
            "Mul",
            vec![t("centered"), t("centered")],
            t("squared"),
            Vec::new(),
            t("squared"),
        );
        self.reduce_mean(&t("squared"), &t("var"), &axes, t("var"));
        self.define_const(&t("epsilon"), Vec::new(), Data::F32(vec![eps]));
        self.emit(
            "Add",
            vec![t("var"), t("epsilon")],
            t("var_eps"),
            Vec::new(),
            t("var_eps"),
        );
        self.emit("Sqrt", vec![t("var_eps")], t("std"), Vec::new(), t("std"));
        let inv = out(2).unwrap_or_else(|| t("InvStdDev"));
        self.emit("Reciprocal", vec![t("std")], inv, Vec::new(), t("inv_std"));
    }

    /// LSTM, GRU or RNN with `layout = 1` (batch first): the same operator in
    /// `layout = 0` between Transposes of X, the initial states and the outputs.
    pub(super) fn recurrent_batch_first(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.clone().unwrap_or_default();
        let Some(schema) = ops::lookup(&op) else {
            return;
        };
        let t = |s: &str| format!("{name}::{s}");
        let transpose = |this: &mut Self, from: String, to: String, perm: &[i64], n: String| {
            let attr = pb::AttributeProto {
                name: Some("perm".into()),
                r#type: Some(7),
                ints: perm.to_vec(),
                ..Default::default()
            };
            this.emit("Transpose", vec![from], to, vec![attr], n);
        };
        let mut inner = node.clone();
        inner
            .attribute
            .retain(|a| a.name.as_deref() != Some("layout"));
        // X [batch, seq, in] and the states [batch, dirs, hidden] swap their first axes.
        let swapped: &[usize] = if op == "LSTM" { &[0, 5, 6] } else { &[0, 5] };
        for &k in swapped {
            if let Some(i) = node.input.get(k).filter(|i| !i.is_empty()) {
                let to = t(&format!("in{k}_seq_first"));
                transpose(
                    self,
                    i.clone(),
                    to.clone(),
                    &[1, 0, 2],
                    t(&format!("in{k}_t")),
                );
                inner.input[k] = to;
            }
        }
        // Y [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden]; the final states
        // [dirs, batch, hidden] -> [batch, dirs, hidden].
        let mut back = Vec::new();
        for (k, o) in node.output.iter().enumerate() {
            if o.is_empty() {
                continue;
            }
            let seq_first = t(&format!("out{k}_seq_first"));
            inner.output[k] = seq_first.clone();
            let perm: &[i64] = if k == 0 { &[2, 0, 1, 3] } else { &[1, 0, 2] };
            back.push((seq_first, o.clone(), perm, t(&format!("out{k}_t"))));
        }
        self.build(schema, &inner, name.to_string());
        for (from, to, perm, n) in back {
            if matches!(self.vals.get(&from), Some(Val::Tensor(_) | Val::Const(_))) {
                transpose(self, from, to, perm, n);
            }
        }
    }

    /// Dropout at inference with its `mask` output read, or its `training_mode` input
    /// given: the mask is all true (a constant), the data passes through.
    pub(super) fn dropout_inference(&mut self, node: &pb::NodeProto, name: &str) {
        let Some(schema) = ops::lookup("Dropout") else {
            return;
        };
        let mut inner = node.clone();
        if let Some(t) = node.input.get(2).filter(|t| !t.is_empty()) {
            match self.vals.get(t) {
                Some(Val::Const(c)) if c.data.len() == 1 => {
                    let training = match &c.data {
                        Data::Typed { values, .. } => values[0] != 0.0,
                        Data::I64(v) => v[0] != 0,
                        Data::F32(v) => v[0] != 0.0,
                    };
                    if training {
                        self.error(
                            "runs in training mode (random masks); tinyonnx runs inference only",
                        );
                        return;
                    }
                }
                Some(Val::Poisoned) => return,
                _ => {
                    self.error(
                        "has a training_mode known only when the model runs; tinyonnx runs \
                         inference only",
                    );
                    return;
                }
            }
            inner.input.truncate(2);
        }
        if let Some(mask) = node.output.get(1).filter(|m| !m.is_empty()) {
            let Some(dims) = node.input.first().and_then(|x| self.dims_of(x)) else {
                self.error("needs an input of known shape for its mask output");
                return;
            };
            let n = dims.iter().product();
            let values = vec![1.0; n];
            let data = Data::Typed {
                dtype: crate::types::DType::Bool,
                values,
            };
            self.define_const(&mask.clone(), dims, data);
            inner.output.truncate(1);
        }
        self.build(schema, &inner, name.to_string());
    }

    /// Pow whose exponent has another element type than its base (ONNX allows it;
    /// tinyonnx's Pow takes one type): an integer exponent is cast to the base's type
    /// (exact for the exponents that keep a result finite); an integer base to a float
    /// exponent computes in f64. Returns the node to build, if any is left.
    pub(super) fn pow_mixed(&mut self, node: &pb::NodeProto, name: &str) -> Option<pb::NodeProto> {
        // Anything unusual (a missing or failed input) is the builder's to report.
        let (Some(b), Some(ta), Some(tb)) = (
            node.input.get(1),
            node.input.first().and_then(|a| self.dtype_of(a)),
            node.input.get(1).and_then(|b| self.dtype_of(b)),
        ) else {
            return Some(node.clone());
        };
        if ta == tb {
            return Some(node.clone());
        }
        if !ta.is_float() && tb.is_float() {
            // In f64, then truncated to the base's type (the reference's `astype`).
            let to = |d: crate::types::DType| vec![int_attr("to", i64::from(d.onnx_code()))];
            let (a, out) = (
                &node.input[0],
                node.output.first().cloned().unwrap_or_default(),
            );
            let f64 = crate::types::DType::F64;
            let a64 = self.step_with("Cast", name, "base_f64", vec![a.clone()], to(f64));
            let b64 = self.step_with("Cast", name, "exponent_f64", vec![b.clone()], to(f64));
            let p = self.step("Pow", name, "f64", vec![a64, b64]);
            self.emit("Cast", vec![p], out, to(ta), name.to_string());
            return None;
        }
        let cast = format!("{name}::exponent");
        self.emit(
            "Cast",
            vec![b.clone()],
            cast.clone(),
            vec![int_attr("to", i64::from(ta.onnx_code()))],
            cast.clone(),
        );
        let mut node = node.clone();
        node.input[1] = cast;
        Some(node)
    }

    /// ReduceMean over `axes` keeping them, in the model opset's form (axes an input
    /// from 18, an attribute before).
    fn reduce_mean(&mut self, x: &str, out: &str, axes: &[i64], name: String) {
        if self.cx.graph.opset >= 18 {
            let axes_name = format!("{name}::axes");
            self.define_const(&axes_name, vec![axes.len()], Data::I64(axes.to_vec()));
            self.emit(
                "ReduceMean",
                vec![x.into(), axes_name],
                out.into(),
                Vec::new(),
                name,
            );
        } else {
            let attr = pb::AttributeProto {
                name: Some("axes".into()),
                r#type: Some(7),
                ints: axes.to_vec(),
                ..Default::default()
            };
            self.emit("ReduceMean", vec![x.into()], out.into(), vec![attr], name);
        }
    }

    /// Softmax, LogSoftmax and Hardmax before opset 13 work on the input flattened to
    /// 2-D at `axis` (default 1); after, on one axis. The same values come from the new
    /// operator over the last axis of that 2-D view, reshaped back.
    pub(super) fn softmax_before_13(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.clone().unwrap_or_default();
        let Some(input) = node.input.first() else {
            self.error("has no input");
            return;
        };
        let Some(dims) = self.dims_of(input) else {
            if !matches!(self.vals.get(input), Some(Val::Tensor(_) | Val::Const(_))) {
                return;
            }
            self.error("needs an input of known shape");
            return;
        };
        if ops::lookup(&op).is_none() {
            self.error(format!("tinyonnx does not support {op}"));
            return;
        }
        let r = dims.len() as i64;
        let a = proto::int(node, "axis").unwrap_or(1);
        let a = if a < 0 { a + r } else { a };
        if !(0..r.max(1)).contains(&a) {
            self.error(format!("has axis {a}, out of range for rank {r}"));
            return;
        }
        // The new operator over the last axis (its default is the same).
        let last_axis = || vec![int_attr("axis", -1)];
        let out = node.output.first().cloned().unwrap_or_default();
        if a == r - 1 || r <= 1 {
            self.emit(&op, vec![input.clone()], out, last_axis(), name.to_string());
            return;
        }
        let a = a as usize;
        let outer: usize = dims[..a].iter().product();
        let inner: usize = dims[a..].iter().product();
        let flat = format!("{out}::2d");
        let soft = format!("{out}::2d_{op}");
        let shape2 = format!("{out}::shape2d");
        let shape_back = format!("{out}::shape");
        self.define_const(
            &shape2,
            vec![2],
            Data::I64(vec![outer as i64, inner as i64]),
        );
        let back: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        self.define_const(&shape_back, vec![dims.len()], Data::I64(back));
        let input = input.clone();
        self.emit(
            "Reshape",
            vec![input, shape2],
            flat.clone(),
            Vec::new(),
            format!("{name}::flatten"),
        );
        self.emit(&op, vec![flat], soft.clone(), last_axis(), name.to_string());
        self.emit(
            "Reshape",
            vec![soft, shape_back],
            out,
            Vec::new(),
            format!("{name}::unflatten"),
        );
    }

    /// The two `ai.onnx.ml` operators scikit-learn pipelines put around a network:
    /// `Scaler` (`(x - offset) * scale` per feature) as Sub and Mul, and
    /// `ArrayFeatureExtractor` on class labels 0..k (what the label of an argmax is) as
    /// the indices themselves, shaped `[1, n]` as ONNX Runtime gives them.
    pub(super) fn ml(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.clone().unwrap_or_default();
        let out = node.output.first().cloned().unwrap_or_default();
        let Some(x) = node.input.first().cloned() else {
            self.error("has no input");
            return;
        };
        if op == "Scaler" {
            let floats = |k: &str| {
                proto::find(node, k)
                    .map(|a| a.floats.clone())
                    .unwrap_or_default()
            };
            let (offset, scale) = (floats("offset"), floats("scale"));
            let (offset_name, scale_name) = (format!("{out}::offset"), format!("{out}::scale"));
            for (n, v, default) in [(&offset_name, offset, 0.0), (&scale_name, scale, 1.0)] {
                let v = if v.is_empty() { vec![default] } else { v };
                let dims = if v.len() == 1 {
                    Vec::new()
                } else {
                    vec![v.len()]
                };
                self.define_const(n, dims, Data::F32(v));
            }
            let centred = format!("{out}::centred");
            self.emit(
                "Sub",
                vec![x, offset_name],
                centred.clone(),
                Vec::new(),
                format!("{name}::offset"),
            );
            self.emit(
                "Mul",
                vec![centred, scale_name],
                out,
                Vec::new(),
                name.to_string(),
            );
            return;
        }
        // ArrayFeatureExtractor(labels, indices).
        let labels = match self.vals.get(&x) {
            Some(Val::Const(c)) => c.clone(),
            Some(Val::Poisoned) => return,
            _ => {
                self.error("extracts from a tensor only known when the model runs, which tinyonnx does not support yet (Gather on runtime indices)");
                return;
            }
        };
        let label_values: Option<Vec<i64>> = match &labels.data {
            Data::I64(v) => Some(v.clone()),
            Data::Typed { dtype, values } if *dtype != crate::types::DType::F64 => {
                Some(values.iter().map(|&v| v as i64).collect())
            }
            _ => None,
        };
        let identity = label_values.is_some_and(|v| {
            labels.dims.len() == 1 && v.iter().enumerate().all(|(i, &l)| l == i as i64)
        });
        if !identity {
            self.error("maps indices to labels other than 0, 1, 2, ...; tinyonnx does not support this yet (Gather on runtime indices)");
            return;
        }
        let Some(idx) = node.input.get(1).cloned() else {
            self.error("has no indices");
            return;
        };
        let Some(dims) = self.dims_of(&idx) else {
            return;
        };
        let n: usize = dims.iter().product();
        let shape = format!("{out}::shape");
        self.define_const(&shape, vec![2], Data::I64(vec![1, n as i64]));
        let dtype = labels.data.dtype();
        if dtype == crate::types::DType::I64 {
            self.emit(
                "Reshape",
                vec![idx, shape],
                out,
                Vec::new(),
                name.to_string(),
            );
            return;
        }
        // Labels of another integer type: the indices cast to it.
        let flat = format!("{out}::indices");
        self.emit(
            "Reshape",
            vec![idx, shape],
            flat.clone(),
            Vec::new(),
            format!("{name}::reshape"),
        );
        let to = vec![int_attr("to", i64::from(dtype.onnx_code()))];
        self.emit("Cast", vec![flat], out, to, name.to_string());
    }

    /// Sum and Mean (any number of inputs, broadcasting) as a chain of Adds, divided
    /// by the count for Mean.
    pub(super) fn sum(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.clone().unwrap_or_default();
        let out = node.output.first().cloned().unwrap_or_default();
        let inputs: Vec<String> = node
            .input
            .iter()
            .filter(|i| !i.is_empty())
            .cloned()
            .collect();
        let Some(first) = inputs.first() else {
            self.error("has no inputs");
            return;
        };
        let last_add = if op == "Mean" {
            format!("{out}::sum")
        } else {
            out.clone()
        };
        if inputs.len() == 1 {
            let first = vec![first.clone()];
            self.emit(
                "Identity",
                first,
                last_add.clone(),
                Vec::new(),
                name.to_string(),
            );
        }
        let mut acc = first.clone();
        for (k, x) in inputs.iter().enumerate().skip(1) {
            let o = if k + 1 == inputs.len() {
                last_add.clone()
            } else {
                format!("{out}::sum{k}")
            };
            let add = vec![acc, x.clone()];
            self.emit("Add", add, o.clone(), Vec::new(), format!("{name}::add{k}"));
            acc = o;
        }
        if op == "Mean" {
            let count = format!("{out}::count");
            self.define_const(&count, Vec::new(), Data::F32(vec![inputs.len() as f32]));
            self.emit(
                "Div",
                vec![last_add, count],
                out,
                Vec::new(),
                name.to_string(),
            );
        }
    }
}

/// The value of a Constant node (any `value*` attribute).
fn constant(node: &pb::NodeProto) -> Result<Const, String> {
    let a = node
        .attribute
        .first()
        .filter(|_| node.attribute.len() == 1)
        .ok_or("needs exactly one value attribute")?;
    let scalar = |data| Const {
        dims: Vec::new(),
        data,
    };
    Ok(match a.name.as_deref().unwrap_or("") {
        "value" => proto::tensor(a.t.as_ref().ok_or("has no tensor in `value`")?)
            .map_err(|e| format!("its value {e}"))?,
        "value_float" => scalar(Data::F32(vec![a.f.unwrap_or(0.0)])),
        "value_int" => scalar(Data::I64(vec![a.i.unwrap_or(0)])),
        "value_floats" => Const {
            dims: vec![a.floats.len()],
            data: Data::F32(a.floats.clone()),
        },
        "value_ints" => Const {
            dims: vec![a.ints.len()],
            data: Data::I64(a.ints.clone()),
        },
        other => {
            return Err(format!(
                "has `{other}`, which tinyonnx does not read (sparse or string values)"
            ));
        }
    })
}
