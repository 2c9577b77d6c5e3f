//! `quantize = int8(calibration = "file", keep = ["layer", ...]);`: the checked graph
//! rewritten into the QDQ form ONNX Runtime's `quantize_static` writes, once every item
//! is checked. The float model runs on the calibration inputs (`quantize::eval`) to
//! measure the range of every activation; each `Gemm`, `MatMul` of a constant matrix
//! and `Conv` not kept in float then reads `DequantizeLinear(QuantizeLinear(x))` of its
//! input, int8 weights per output channel and an int32 bias, and its output goes
//! through a `QuantizeLinear`/`DequantizeLinear` pair (a `Relu` that is its only reader
//! is folded into that pair's range, as ONNX Runtime's quantizer does: the range starts
//! at 0, so the 8-bit floor is the Relu). The plan runs each such group as one integer
//! kernel; the ONNX written is the QDQ graph, so ONNX Runtime runs the same model.

use std::collections::{HashMap, HashSet};

use proc_macro2::Span;
use syn::Ident;

use crate::data::Data;
use crate::ir::TensorId;
use crate::ops::quant::linear::{DEQUANTIZE_LINEAR, QUANTIZE_LINEAR};
use crate::ops::{At, AttrValue, attrs_with_defaults};
use crate::quantize::{self, MAX_CALIBRATION_MACS, Range, eval};
use crate::syntax::{Arg, Call, Expr};
use crate::types::DType;

use super::Checker;

/// What the setting says.
struct Setting {
    calibration: syn::LitStr,
    /// Node (layer) names kept in float, with their literals.
    keep: Vec<syn::LitStr>,
}

/// Whether `keep` entry `k` names node `name`: the node itself, or a layer or block
/// prefix of it (`k.` followed by the rest).
fn keeps(name: &str, k: &str) -> bool {
    name == k
        || name
            .strip_prefix(k)
            .is_some_and(|rest| rest.starts_with('.'))
}

impl Setting {
    /// Whether the node `name` stays in float.
    fn kept(&self, name: &str) -> bool {
        self.keep.iter().any(|k| keeps(name, &k.value()))
    }
}

/// A node to quantize: where it is and its weight's output-channel axis.
struct Target {
    node: usize,
    /// The weight's output-channel axis (0 for `[out, ...]`, 1 for `[in, out]`).
    axis: usize,
}

impl Checker<'_> {
    /// Reads the setting's call; errors at its arguments.
    fn quantize_setting(&mut self, value: &Expr) -> Option<Setting> {
        let usage = "write `quantize = int8(calibration = \"inputs.npy\");`, optionally with `keep = [\"layer\", ...]` for layers to keep in float";
        let Expr::Call(Call { func, args, close }) = value else {
            self.error(value.span(), format!("unknown quantization: {usage}"));
            return None;
        };
        if func != "int8" {
            self.error(
                func.span(),
                format!("unknown quantization `{func}`: tinyonnx quantizes to `int8`; {usage}"),
            );
            return None;
        }
        let (mut calibration, mut keep, mut ok) = (None, Vec::new(), true);
        for arg in args {
            match arg {
                Arg::Named(n, Expr::Str(s)) if n == "calibration" => calibration = Some(s.clone()),
                Arg::Named(n, Expr::List(items, _)) if n == "keep" => {
                    for item in items {
                        match item {
                            Expr::Str(s) => keep.push(s.clone()),
                            other => {
                                self.error(
                                    other.span(),
                                    "`keep` lists layer names as strings, as in keep = [\"fc2\"]",
                                );
                                ok = false;
                            }
                        }
                    }
                }
                Arg::Named(n, e) => {
                    self.error(
                        e.span().join(n.span()).unwrap_or(n.span()),
                        format!("int8 takes `calibration = \"file\"` and `keep = [\"layer\", ...]`, not `{n}` of this form"),
                    );
                    ok = false;
                }
                Arg::Pos(e) => {
                    self.error(e.span(), format!("int8's arguments are named: {usage}"));
                    ok = false;
                }
            }
        }
        let Some(calibration) = calibration else {
            if ok {
                self.error(*close, format!("int8 needs calibration inputs: {usage}"));
            }
            return None;
        };
        ok.then_some(Setting { calibration, keep })
    }

    /// Applies `quantize = ...` to the checked graph (called when every item checked).
    pub(super) fn quantize(&mut self, kw: &Ident, value: &Expr) {
        let Some(setting) = self.quantize_setting(value) else {
            return;
        };
        let span = kw.span();
        self.fold_batch_norms(&setting);
        let Some(targets) = self.quantize_targets(&setting, span) else {
            return;
        };
        let Some(ranges) = self.calibrate(&setting.calibration) else {
            return;
        };
        self.rewrite(&targets, &ranges, span);
    }

    /// Folds each inference `BatchNormalization` that alone reads a `Conv` (not kept in
    /// float) into the convolution's weights and bias, as ONNX Runtime's pre-processing
    /// does before quantizing: the convolution's int8 weights then carry the
    /// normalization, and its output range is the normalized one.
    fn fold_batch_norms(&mut self, setting: &Setting) {
        loop {
            let g = &self.graph;
            let readers = g.all_consumers();
            let value = |t: Option<TensorId>| self.f32_values(t?);
            let found = g.nodes.iter().enumerate().find_map(|(ci, c)| {
                if c.op.op_type != "Conv" || c.custom.is_some() || setting.kept(&c.name) {
                    return None;
                }
                let y = c.outputs[0];
                let &[bi] = readers[y].as_slice() else {
                    return None;
                };
                let bn = &g.nodes[bi];
                if bn.op.op_type != "BatchNormalization"
                    || bn.custom.is_some()
                    || bn.outputs.len() != 1
                    || bn.inputs.first() != Some(&Some(y))
                    || g.outputs.contains(&y)
                {
                    return None;
                }
                let w = value(c.inputs.get(1).copied().flatten())?;
                let m = g.device_shape(y).get(1).copied()?;
                let bias = match c.inputs.get(2).copied().flatten() {
                    Some(b) => value(Some(b))?,
                    None => vec![0.0; m],
                };
                let p: Vec<Vec<f32>> = (1..5)
                    .map(|k| value(bn.inputs.get(k).copied().flatten()))
                    .collect::<Option<_>>()?;
                (p.iter().all(|v| v.len() == m) && bias.len() == m).then(|| {
                    let (w2, b2) = crate::ops::norm::batchnorm::fold_into_conv(
                        &w,
                        &bias,
                        [&p[0], &p[1], &p[2], &p[3]],
                        bn.attrs.float("epsilon"),
                    );
                    (ci, bi, w2, b2, m)
                })
            });
            let Some((ci, bi, w2, b2, m)) = found else {
                return;
            };
            let conv = &self.graph.nodes[ci];
            let (w, name) = (conv.inputs[1], conv.name.clone());
            let shape = w.map(|w| self.graph.device_shape(w)).unwrap_or_default();
            let wt = self.add_weight(format!("{name}.weight_bn_folded"), &shape, Data::F32(w2));
            let bt = self.add_weight(format!("{name}.bias_bn_folded"), &[m], Data::F32(b2));
            let bn = self.graph.nodes.remove(bi);
            let conv = &mut self.graph.nodes[ci];
            let old: Vec<TensorId> = conv.inputs.iter().skip(1).flatten().copied().collect();
            conv.inputs.truncate(1);
            conv.inputs.extend([Some(wt), Some(bt)]);
            conv.outputs[0] = bn.outputs[0];
            self.drop_unread(
                old.into_iter()
                    .chain(bn.inputs.iter().skip(1).flatten().copied()),
            );
        }
    }

    /// Drops the weights among `replaced` that nothing reads any more (and their
    /// unused-declaration warnings: their values live on in the rewritten ones).
    fn drop_unread(&mut self, replaced: impl IntoIterator<Item = TensorId>) {
        let readers = self.graph.all_consumers();
        let unread: HashSet<TensorId> = replaced
            .into_iter()
            .filter(|&t| readers[t].is_empty())
            .collect();
        self.graph.weights.retain(|w| !unread.contains(w));
        self.declared.retain(|(id, _, _)| !unread.contains(id));
    }

    /// The nodes to quantize; errors for names in `keep` that name none, and for
    /// products that cannot be written in the integer form.
    fn quantize_targets(&mut self, setting: &Setting, span: Span) -> Option<Vec<Target>> {
        let g = &self.graph;
        let is_const = |t: Option<TensorId>| t.is_some_and(|t| g.tensors[t].value.is_some());
        let f32_value = |t: Option<TensorId>| {
            t.is_some_and(|t| g.tensors[t].ty.dtype == DType::F32 && g.tensors[t].value.is_none())
        };
        let mut candidates = Vec::new();
        let mut refused = Vec::new();
        for (i, n) in g.nodes.iter().enumerate() {
            if n.custom.is_some() || n.control.is_some() {
                continue;
            }
            let (a, b) = (
                n.inputs.first().copied().flatten(),
                n.inputs.get(1).copied().flatten(),
            );
            let rank = |t: Option<TensorId>| t.map_or(0, |t| g.tensors[t].ty.shape.rank());
            let axis = match n.op.op_type {
                "Gemm" if f32_value(a) && is_const(b) => {
                    let bias = n.inputs.get(2).copied().flatten();
                    let n_out = g.device_shape(n.outputs[0]).last().copied().unwrap_or(0);
                    let row = bias.is_none_or(|c| {
                        let s = g.device_shape(c);
                        is_const(Some(c))
                            && s.iter().product::<usize>() == n_out
                            && s.last() == Some(&n_out)
                    });
                    if n.attrs.int("transA") != 0 {
                        refused.push((n.name.clone(), "its A is transposed (transA = 1)"));
                        continue;
                    }
                    if bias.is_some() && (!row || n.attrs.float("beta") != 1.0) {
                        refused.push((
                            n.name.clone(),
                            "its C is not a constant row of one value per output added with beta = 1",
                        ));
                        continue;
                    }
                    usize::from(n.attrs.int("transB") == 0)
                }
                "MatMul" if f32_value(a) && is_const(b) && rank(a) >= 2 && rank(b) == 2 => 1,
                "Conv" if f32_value(a) && is_const(b) && (3..=4).contains(&rank(a)) => {
                    let bias = n.inputs.get(2).copied().flatten();
                    if bias.is_some() && !is_const(bias) {
                        refused.push((n.name.clone(), "its bias is not a constant"));
                        continue;
                    }
                    0
                }
                _ => continue,
            };
            candidates.push((i, axis));
        }
        let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        let mut errors = Vec::new();
        for k in &setting.keep {
            let key = k.value();
            if !names.iter().any(|n| keeps(n, &key)) {
                let hint = crate::suggest::did_you_mean(&key, &names)
                    .map(|s| format!(": did you mean `{s}`?"))
                    .unwrap_or_default();
                errors.push((k.span(), format!("`keep` names no layer `{key}`{hint}")));
            }
        }
        for (name, why) in refused.iter().filter(|(n, _)| !setting.kept(n)) {
            errors.push((
                span,
                format!(
                    "layer `{name}` cannot be quantized: {why}; keep it in float with keep = [\"{name}\"]"
                ),
            ));
        }
        let targets: Vec<Target> = candidates
            .into_iter()
            .filter(|&(i, _)| !setting.kept(&g.nodes[i].name))
            .map(|(node, axis)| Target { node, axis })
            .collect();
        if targets.is_empty() && errors.is_empty() {
            errors.push((
                span,
                "nothing to quantize: no Gemm, MatMul of a constant matrix or Conv outside `keep`"
                    .to_string(),
            ));
        }
        let failed = !errors.is_empty();
        for (s, m) in errors {
            self.error(s, m);
        }
        (!failed).then_some(targets)
    }

    /// The range of every tensor over the calibration inputs.
    fn calibrate(&mut self, path: &syn::LitStr) -> Option<Vec<Range>> {
        let file = path.value();
        let container = !file.to_ascii_lowercase().ends_with(".npy");
        let inputs = self.graph.inputs.clone();
        if !container && inputs.len() != 1 {
            self.error(
                path.span(),
                format!(
                    "a .npy holds one array, and the model has {} inputs: give an .npz or .safetensors with an array per input",
                    inputs.len()
                ),
            );
            return None;
        }
        let mut samples: Option<usize> = None;
        let mut arrays = Vec::new();
        for &id in &inputs {
            let t = &self.graph.tensors[id];
            let name = t.name.clone();
            if t.ty.dtype != DType::F32 {
                self.error(
                    path.span(),
                    format!(
                        "input `{name}` is {}: calibration feeds f32 inputs",
                        t.ty.dtype
                    ),
                );
                return None;
            }
            let shape = self.graph.device_shape(id);
            let loaded = match self.files.load(&file, container.then_some(name.as_str())) {
                Ok(l) => l,
                Err(e) => {
                    self.error(path.span(), e);
                    return None;
                }
            };
            let per = shape.iter().product::<usize>();
            let stacked = loaded.shape.len() == shape.len() + 1 && loaded.shape[1..] == shape[..];
            let batch_of_one = shape.first() == Some(&1)
                && loaded.shape.len() == shape.len()
                && loaded.shape[1..] == shape[1..];
            let n = loaded.shape.first().copied().unwrap_or(0);
            if !(stacked || batch_of_one) || n == 0 || per == 0 {
                self.error(
                    path.span(),
                    format!(
                        "calibration array `{name}` is {:?}; `{name}` is {shape:?} on the device, so the samples are [N, {}]",
                        loaded.shape,
                        if shape.first() == Some(&1) {
                            format!("{:?}", &shape[1..])
                        } else {
                            format!("{shape:?}")
                        }
                        .trim_matches(['[', ']'])
                    ),
                );
                return None;
            }
            if samples.is_some_and(|s| s != n) {
                self.error(
                    path.span(),
                    format!(
                        "calibration array `{name}` has {n} samples, the one before it {}",
                        samples.unwrap_or(0)
                    ),
                );
                return None;
            }
            samples = Some(n);
            arrays.push((loaded.values, per));
        }
        let samples = samples.unwrap_or(0);
        let macs = self.calibration_macs().saturating_mul(samples as u64);
        if macs > MAX_CALIBRATION_MACS {
            let most = (MAX_CALIBRATION_MACS / (macs / samples.max(1) as u64).max(1)).max(1);
            self.error(
                path.span(),
                format!(
                    "calibrating on {samples} samples takes {macs} multiply-accumulates, more than the {MAX_CALIBRATION_MACS} the compiler spends on it: give at most {most} samples"
                ),
            );
            return None;
        }
        let mut ranges = vec![Range::EMPTY; self.graph.tensors.len()];
        for s in 0..samples {
            let sample: Vec<Vec<f64>> = arrays
                .iter()
                .map(|(v, per)| {
                    v[s * per..(s + 1) * per]
                        .iter()
                        .map(|&x| f64::from(x))
                        .collect()
                })
                .collect();
            let mut seen = |t: TensorId, v: &[f64]| ranges[t].add(v);
            if let Err(e) = eval::run(&self.graph, &sample, &mut seen) {
                self.error(path.span(), format!("calibration: {e}"));
                return None;
            }
        }
        Some(ranges)
    }

    /// Multiply-accumulates of one float run (products only; the rest is linear).
    fn calibration_macs(&self) -> u64 {
        let g = &self.graph;
        g.nodes
            .iter()
            .map(|n| {
                let out = n.outputs.first().map_or(0, |&o| g.device_numel(o)) as u64;
                let depth = match (n.op.op_type, n.inputs.get(1).copied().flatten()) {
                    ("Gemm" | "MatMul", _) => n
                        .inputs
                        .first()
                        .copied()
                        .flatten()
                        .and_then(|a| g.device_shape(a).last().copied())
                        .unwrap_or(1),
                    ("Conv", Some(w)) => {
                        let s = g.device_shape(w);
                        s.iter().skip(1).product()
                    }
                    _ => 1,
                };
                out.saturating_mul(depth as u64)
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Writes the QDQ graph: quantized inputs and outputs of the targets, their int8
    /// weights and int32 biases; the float weights they replace go.
    fn rewrite(&mut self, targets: &[Target], ranges: &[Range], span: Span) {
        let span_of = move |_: At| span;
        let mut taken: HashSet<String> =
            self.graph.tensors.iter().map(|t| t.name.clone()).collect();
        taken.extend(self.graph.nodes.iter().map(|n| n.name.clone()));
        let mut fresh = move |base: String| {
            let mut name = base.clone();
            let mut k = 1;
            while !taken.insert(name.clone()) {
                name = format!("{base}_{k}");
                k += 1;
            }
            name
        };
        let readers = self.graph.all_consumers();
        let outputs = self.graph.outputs.clone();
        // Each activation to quantize (the tensor its readers read) and the tensor its
        // QuantizeLinear reads: the product's output, past a Relu folded in.
        let mut source: HashMap<TensorId, TensorId> = HashMap::new();
        let mut folded = HashSet::new();
        for t in targets {
            let y = self.graph.nodes[t.node].outputs[0];
            match readers[y].as_slice() {
                [r] if !outputs.contains(&y)
                    && self.graph.nodes[*r].op.op_type == "Relu"
                    && self.graph.nodes[*r].custom.is_none() =>
                {
                    folded.insert(*r);
                    source.insert(self.graph.nodes[*r].outputs[0], y);
                }
                _ => {
                    source.insert(y, y);
                }
            }
        }
        // Inputs after outputs: an input that is a folded Relu's output keeps its source.
        for t in targets {
            if let Some(a) = self.graph.nodes[t.node].inputs[0] {
                source.entry(a).or_insert(a);
            }
        }
        let by_source: HashMap<TensorId, TensorId> = source.iter().map(|(&k, &s)| (s, k)).collect();
        let params: HashMap<TensorId, (f32, i8)> = source
            .keys()
            .map(|&k| (k, quantize::activation(ranges[k])))
            .collect();
        let mut dq: HashMap<TensorId, TensorId> = HashMap::new();
        let old = std::mem::take(&mut self.graph.nodes);
        let mut replaced = Vec::new();
        let target_at: HashMap<usize, &Target> = targets.iter().map(|t| (t.node, t)).collect();
        for &i in &self.graph.inputs.clone() {
            if source.get(&i) == Some(&i) {
                let Some(d) = self.qdq_pair(i, i, params[&i], &mut fresh, &span_of) else {
                    return;
                };
                dq.insert(i, d);
            }
        }
        for (i, mut node) in old.into_iter().enumerate() {
            if folded.contains(&i) {
                continue;
            }
            let a0 = node.inputs.first().copied().flatten();
            for t in node.inputs.iter_mut().flatten() {
                if let Some(&d) = dq.get(t) {
                    *t = d;
                }
            }
            if let Some(target) = target_at.get(&i) {
                // The input was quantized before this node (an input, or an earlier
                // node's output): its scale is the bias's.
                let Some(&(sx, _)) = a0.and_then(|a| params.get(&a)) else {
                    return;
                };
                if self
                    .weight_dq(
                        &mut node,
                        target.axis,
                        sx,
                        &mut fresh,
                        &span_of,
                        &mut replaced,
                    )
                    .is_none()
                {
                    return;
                }
            }
            let outs = node.outputs.clone();
            self.graph.nodes.push(node);
            for o in outs {
                if let Some(&key) = by_source.get(&o) {
                    let Some(d) = self.qdq_pair(key, o, params[&key], &mut fresh, &span_of) else {
                        return;
                    };
                    dq.insert(key, d);
                }
            }
        }
        // Outputs read the dequantized values, under their own names.
        for k in 0..self.graph.outputs.len() {
            let out = self.graph.outputs[k];
            if let Some(&d) = dq.get(&out) {
                let name = std::mem::take(&mut self.graph.tensors[out].name);
                self.graph.tensors[out].name =
                    std::mem::replace(&mut self.graph.tensors[d].name, name);
                self.graph.tensors[d].doc = std::mem::take(&mut self.graph.tensors[out].doc);
                self.graph.outputs[k] = d;
            }
        }
        self.drop_unread(replaced);
    }

    /// `QuantizeLinear` of `src` and its `DequantizeLinear`, at the scale and zero point
    /// of the activation `key` (named after it): the dequantized tensor.
    fn qdq_pair(
        &mut self,
        key: TensorId,
        src: TensorId,
        (s, z): (f32, i8),
        fresh: &mut dyn FnMut(String) -> String,
        span_of: &dyn Fn(At) -> Span,
    ) -> Option<TensorId> {
        let base = self.graph.tensors[key].name.clone();
        let st = self.add_weight(fresh(format!("{base}_scale")), &[], Data::F32(vec![s]));
        let zt = self.add_weight(
            fresh(format!("{base}_zero_point")),
            &[],
            Data::Typed {
                dtype: DType::I8,
                values: vec![f64::from(z)],
            },
        );
        let inputs = vec![Some(src), Some(st), Some(zt)];
        let q = self.linear_node(&QUANTIZE_LINEAR, &base, inputs, None, fresh, span_of)?;
        let inputs = vec![Some(q), Some(st), Some(zt)];
        self.linear_node(&DEQUANTIZE_LINEAR, &base, inputs, None, fresh, span_of)
    }

    /// A `QuantizeLinear` or `DequantizeLinear` node named after `base`
    /// (`{base}_QuantizeLinear`, its output `{base}_quantized`, and so on), per channel
    /// along `axis` if given: its output.
    fn linear_node(
        &mut self,
        op: &'static crate::ops::OpSchema,
        base: &str,
        inputs: Vec<Option<TensorId>>,
        axis: Option<usize>,
        fresh: &mut dyn FnMut(String) -> String,
        span_of: &dyn Fn(At) -> Span,
    ) -> Option<TensorId> {
        let attrs = axis
            .map(|a| ("axis", AttrValue::Int(a as i64)))
            .into_iter()
            .collect();
        let name = fresh(format!("{base}_{}", op.op_type));
        let t = self.build(op, name, inputs, attrs_with_defaults(op, attrs), span_of)?[0];
        let out = if op.op_type == "QuantizeLinear" {
            "quantized"
        } else {
            "dequantized"
        };
        self.graph.tensors[t].name = fresh(format!("{base}_{out}"));
        Some(t)
    }

    /// The values of an f32 constant (`None` when not known or of another dtype).
    fn f32_values(&self, t: TensorId) -> Option<Vec<f32>> {
        let t = &self.graph.tensors[t];
        let v = t.value.as_ref().filter(|_| t.ty.dtype == DType::F32)?;
        Some(v.to_f64().iter().map(|&v| v as f32).collect())
    }

    /// The int8 weight (per channel along `axis`) and int32 bias of a target `node`,
    /// each through a DequantizeLinear; the node then reads those.
    fn weight_dq(
        &mut self,
        node: &mut crate::ir::Node,
        axis: usize,
        input_scale: f32,
        fresh: &mut dyn FnMut(String) -> String,
        span_of: &dyn Fn(At) -> Span,
        replaced: &mut Vec<TensorId>,
    ) -> Option<()> {
        let w = node.inputs[1]?;
        let shape = self.graph.device_shape(w);
        let values = self.f32_values(w)?;
        let channels = shape.get(axis).copied().unwrap_or(1);
        let outer: usize = shape[..axis.min(shape.len())].iter().product();
        let inner: usize = shape.get(axis + 1..).map_or(1, |d| d.iter().product());
        let (q, scales) = quantize::weights_per_channel(&values, outer, channels, inner);
        let base = self.graph.tensors[w].name.clone();
        let qt = self.add_weight(
            fresh(format!("{base}_quantized")),
            &shape,
            Data::Typed {
                dtype: DType::I8,
                values: q.iter().map(|&v| f64::from(v)).collect(),
            },
        );
        let st = self.add_weight(
            fresh(format!("{base}_scale")),
            &[channels],
            Data::F32(scales.clone()),
        );
        let zt = self.add_weight(
            fresh(format!("{base}_zero_point")),
            &[channels],
            Data::Typed {
                dtype: DType::I8,
                values: vec![0.0; channels],
            },
        );
        let inputs = vec![Some(qt), Some(st), Some(zt)];
        let d = self.linear_node(
            &DEQUANTIZE_LINEAR,
            &base,
            inputs,
            Some(axis),
            fresh,
            span_of,
        )?;
        node.inputs[1] = Some(d);
        replaced.push(w);
        if let Some(b) = node.inputs.get(2).copied().flatten() {
            let bv = self.f32_values(b)?;
            let (bq, bs) = quantize::bias(&bv, input_scale, &scales);
            let base = self.graph.tensors[b].name.clone();
            let n = bq.len();
            let qt = self.add_weight(
                fresh(format!("{base}_quantized")),
                &[n],
                Data::Typed {
                    dtype: DType::I32,
                    values: bq.iter().map(|&v| f64::from(v)).collect(),
                },
            );
            let st = self.add_weight(fresh(format!("{base}_scale")), &[n], Data::F32(bs));
            let inputs = vec![Some(qt), Some(st)];
            let d = self.linear_node(&DEQUANTIZE_LINEAR, &base, inputs, Some(0), fresh, span_of)?;
            node.inputs[2] = Some(d);
            replaced.push(b);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::super::testing::errors;
    use crate::types::DType;

    /// A safetensors file of f32 arrays, written as the format says: the header's
    /// length, its JSON, the little-endian data.
    fn safetensors(arrays: &[(&str, &[usize], &[f32])]) -> crate::scratch::TempFile {
        let (mut header, mut data) = (Vec::new(), Vec::new());
        for (name, shape, values) in arrays {
            let start = data.len();
            data.extend(values.iter().flat_map(|v| v.to_le_bytes()));
            header.push(format!(
                "\"{name}\":{{\"dtype\":\"F32\",\"shape\":{shape:?},\"data_offsets\":[{start},{}]}}",
                data.len()
            ));
        }
        let json = format!("{{{}}}", header.join(","));
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend(json.as_bytes());
        bytes.extend(data);
        crate::scratch::TempFile::new("calibration.safetensors", &bytes)
    }

    #[test]
    fn a_two_input_model_calibrates_from_arrays_named_as_its_inputs() {
        let a: Vec<f32> = (0..12).map(|i| i as f32 / 4.0 - 1.0).collect();
        let b: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let path = safetensors(&[("a", &[4, 3], &a), ("b", &[4, 1, 2], &b)]);
        let file = path.to_string();
        let tokens = quote! {
            model M {
                quantize = int8(calibration = #file);
                input a: f32[1, 3];
                input b: f32[1, 2];
                let h = relu(linear(a, 2, name = "fc1"));
                output y = Add(h, b);
            }
        };
        let model = crate::syntax::parse_model(tokens).expect("parses");
        let (graph, warnings, _) = super::super::check(&model).expect("checks");
        assert!(warnings.is_empty(), "{warnings:?}");
        let ops: Vec<&str> = graph.nodes.iter().map(|n| n.op.op_type).collect();
        // a quantized, fc1's weight and bias dequantized, the product, its output
        // quantized with the Relu folded in, the Add (not a product) in float.
        assert_eq!(
            ops,
            [
                "QuantizeLinear",
                "DequantizeLinear",
                "DequantizeLinear",
                "DequantizeLinear",
                "Gemm",
                "QuantizeLinear",
                "DequantizeLinear",
                "Add"
            ]
        );
        let weights: Vec<(&str, DType)> = graph
            .weights
            .iter()
            .map(|&w| (graph.tensors[w].name.as_str(), graph.tensors[w].ty.dtype))
            .collect();
        assert!(
            weights.contains(&("fc1.weight_quantized", DType::I8)),
            "{weights:?}"
        );
        assert!(
            weights.contains(&("fc1.bias_quantized", DType::I32)),
            "{weights:?}"
        );
        assert!(
            !weights.iter().any(|(n, _)| *n == "fc1.weight"),
            "{weights:?}"
        );
        // a's range is [-1, 1.75]: 255 steps over 2.75, 0 at level -128 + 1 / scale.
        let scale = graph.tensors.iter().find(|t| t.name == "a_scale").unwrap();
        let s = scale.value.as_ref().unwrap().to_f64()[0];
        assert!((s - 2.75 / 255.0).abs() < 1e-7, "{s}");
        let zp = graph
            .tensors
            .iter()
            .find(|t| t.name == "a_zero_point")
            .unwrap();
        assert_eq!(
            zp.value.as_ref().unwrap().to_f64(),
            [(-128.0f64 + 1.0 / s).round()]
        );

        // Without b's array: an error that names it.
        let path = safetensors(&[("a", &[4, 3], &a)]);
        let file = path.to_string();
        let e = errors(quote! {
            model M {
                quantize = int8(calibration = #file);
                input a: f32[1, 3];
                input b: f32[1, 2];
                output y = Add(linear(a, 2), b);
            }
        });
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("`b`"), "{e:?}");
    }
}
