//! Operator calls: arity, attributes and their kinds, dtypes, then the operator's own
//! inference and constant folding; the node is added when all of them pass.

use std::collections::HashMap;

use proc_macro2::Span;

use crate::ir::{Data, Node, TensorId, TensorKind};
use crate::layers;
use crate::ops::{
    self, At, AttrDefault, AttrKind, AttrSpec, AttrValue, Attrs, InTy, InferCtx, OpSchema,
};
use crate::suggest;
use crate::syntax::{Call, Expr};
use crate::types::{DType, MAX_DIM, TensorType};

use super::{ALIASES, Checker};

impl<'m> Checker<'m> {
    /// An expression that must denote one tensor.
    pub(crate) fn tensor_expr(&mut self, expr: &Expr) -> Option<TensorId> {
        match expr {
            Expr::Name(name) => {
                if let Expr::Name(_) = self.subst(expr) {
                    self.lookup(name)
                } else {
                    self.error(
                        name.span(),
                        format!("`{name}` is a value parameter of this block, not a tensor"),
                    );
                    None
                }
            }
            Expr::Call(call) => {
                let outs = self.call(call)?;
                Some(outs[0])
            }
            other => {
                self.error(
                    other.span(),
                    format!(
                        "expected a tensor (a name or an operator call), found {}",
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    /// A call: an operator, layer sugar or block. Returns every output.
    pub(super) fn call(&mut self, call: &Call) -> Option<Vec<TensorId>> {
        let hint = self.hint.take();
        let name = call.func.to_string();
        if let Some(op) = ops::lookup(&name) {
            return self.op_call(call, op);
        }
        if let Some((_, op_type)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
            return self.op_call(call, ops::lookup(op_type).expect("aliases name real ops"));
        }
        if layers::is_layer(&name) {
            let call = self.subst_call(call);
            return layers::expand(self, &call, hint);
        }
        if let Some(&block) = self.blocks.get(&name) {
            return self.instantiate(block, call, hint).map(|id| vec![id]);
        }
        if let Some(&def) = self.customs.get(&name) {
            return self.custom_call(def, call);
        }
        if let Some(how) = match name.as_str() {
            "If" => Some("if cond { ... } else { ... }"),
            "Loop" => Some("for i in 0..n with (h = h0) { ... }"),
            "Scan" => Some("for x_t in xs with (h = h0) { ... }"),
            _ => None,
        } {
            self.error(
                call.func.span(),
                format!("{name} is written as a statement: `let y = {how};`, the body ending with `return ...;`"),
            );
            return None;
        }
        let blocks: Vec<String> = self.blocks.keys().cloned().collect();
        let mut known: Vec<&str> = ops::REGISTRY.iter().map(|op| op.op_type).collect();
        known.extend(ALIASES.iter().map(|(a, _)| *a));
        // Pushed one by one: `extend` would ask the block names to be `'static` too.
        for layer in layers::names() {
            known.push(layer);
        }
        known.extend(blocks.iter().map(String::as_str));
        let hint = suggest::did_you_mean(&name, &known)
            .or_else(|| layers::framework_alias(&name))
            .map(|s| format!(": did you mean `{s}`?"))
            .unwrap_or_else(|| {
                // The operators are too many to list in a message; the file lists them.
                format!(
                    ": not one of the {} ONNX operators tinyonnx runs (SUPPORTED_OPS.md lists them), a layer ({}) or a block of this model",
                    ops::REGISTRY.len(),
                    layers::names()
                        .chain(ALIASES.iter().map(|(a, _)| *a))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        self.error(call.func.span(), format!("unknown operator `{name}`{hint}"));
        // Still check the arguments, so mistakes inside are reported too.
        for arg in call.positional() {
            if matches!(arg, Expr::Call(_)) {
                self.tensor_expr(arg);
            }
        }
        None
    }

    pub(super) fn subst_call(&self, call: &Call) -> Call {
        match self.subst(&Expr::Call(call.clone())) {
            Expr::Call(c) => c,
            _ => unreachable!("substitution keeps calls"),
        }
    }

    pub(super) fn op_call(&mut self, call: &Call, op: &'static OpSchema) -> Option<Vec<TensorId>> {
        let call = &self.subst_call(call);
        let positional: Vec<&Expr> = call.positional().collect();
        let (min, max) = if op.variadic {
            (op.inputs.len(), usize::MAX)
        } else {
            (op.min_inputs(), op.inputs.len())
        };
        let mut ok = true;
        if op.since_opset > self.graph.opset {
            ok = false;
            self.error(
                call.func.span(),
                format!(
                    "{} needs opset {} or later; this model uses opset {}",
                    op.op_type, op.since_opset, self.graph.opset
                ),
            );
        }
        if positional.len() > max {
            ok = false;
            let plural = if max == 1 { "input" } else { "inputs" };
            self.error(
                positional[max].span(),
                format!(
                    "{} takes at most {max} {plural} ({}), got {}",
                    op.op_type,
                    op.input_names(),
                    positional.len()
                ),
            );
        } else if positional.len() < min {
            ok = false;
            let plural = if min == 1 { "input" } else { "inputs" };
            self.error(
                call.close,
                format!(
                    "{} needs {}{min} {plural} ({}), got {}",
                    op.op_type,
                    if min == max { "" } else { "at least " },
                    op.input_names(),
                    positional.len()
                ),
            );
        }
        // Tensor arguments first (they may add nodes), then literals, named after the node.
        let mut inputs: Vec<Option<TensorId>> = Vec::with_capacity(positional.len());
        for (i, e) in positional.iter().enumerate() {
            inputs.push(match e {
                Expr::Int(..) | Expr::Float(..) | Expr::List(..) => None,
                Expr::Omit(span) => {
                    if !op.inputs.get(i).is_some_and(|s| s.optional) {
                        ok = false;
                        let name = op.inputs.get(i).map_or("this input", |s| s.name);
                        self.error(
                            *span,
                            format!(
                                "{} input {name} is required and cannot be omitted with `_`",
                                op.op_type
                            ),
                        );
                    }
                    None
                }
                e => self.tensor_expr(e),
            });
        }
        let node_name = format!("{}{}_{}", self.prefix(), op.op_type, self.graph.nodes.len());
        // A literal in an input of the operator's element type takes the dtype of the
        // tensors given for those inputs (`Mul(x_i32, 3)`, `Add(x_f32, 1)`).
        let t_dtype = inputs.iter().enumerate().find_map(|(i, t)| {
            let t = (*t)?;
            (op.input_spec(i)?.ty == InTy::T).then(|| self.graph.tensors[t].ty.dtype)
        });
        for (i, e) in positional.iter().enumerate() {
            if let Expr::Int(..) | Expr::Float(..) | Expr::List(..) = e
                && let Some(spec) = op.input_spec(i)
            {
                let dtype = t_dtype.filter(|_| spec.ty == InTy::T);
                inputs[i] = self.literal(e, format!("{node_name}.{}", spec.name), dtype);
            }
        }
        ok &= inputs
            .iter()
            .zip(&positional)
            .all(|(t, e)| t.is_some() || matches!(e, Expr::Omit(_)));
        let attrs = self.attributes(call, op);
        let attrs = match attrs {
            Some(a) if ok => a,
            _ => return None,
        };
        let spans: Vec<Span> = positional.iter().map(|e| e.span()).collect();
        let attr_span = |name: &str| {
            call.named()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.span())
        };
        let spans_of = |at: At| match at {
            At::Input(i) => spans.get(i).copied().unwrap_or(call.func.span()),
            At::Attr(name) => attr_span(name).unwrap_or(call.func.span()),
            At::Op => call.func.span(),
        };
        self.build(op, node_name, inputs, attrs, &spans_of)
    }

    /// Zero-size tensors known only when the model runs exist only as inputs whose
    /// values no kernel reads: `CastLike`'s target (its type is all it needs), or any
    /// input of a node whose outputs are all known at compile time (an empty reduction,
    /// an empty result); any other use is an error. With `constants`, an empty constant
    /// as the operator's data (its first input) is refused too: the operators outside
    /// `EMPTY_SAFE` infer and plan for values that exist (an empty image to Resize has
    /// no edge to clamp to), except Concat's empty pieces (they add nothing) and
    /// CastLike's (an empty result). Any other compile-time input (an empty `axes`,
    /// Resize's `roi`, Gather's indices) is the operator's to interpret.
    fn check_zero_size(
        &mut self,
        op: &'static OpSchema,
        inputs: &[Option<TensorId>],
        constants: bool,
        span_of: &dyn Fn(At) -> Span,
    ) -> bool {
        let mut ok = true;
        for (i, id) in inputs.iter().enumerate() {
            let Some(id) = *id else { continue };
            let t = &self.graph.tensors[id];
            let data = i == 0
                && !matches!(op.op_type, "Concat" | "CastLike")
                && op.inputs.first().is_some_and(|s| {
                    !s.optional && matches!(s.ty, InTy::T | InTy::Bool | InTy::Any)
                });
            let runtime = t.value.is_none() || (constants && data);
            let empty = runtime && t.ty.shape.0.iter().any(|d| d.fixed() == Some(0));
            if empty && !(op.op_type == "CastLike" && i == 1) {
                let msg = format!(
                    "`{}` has no elements ({}); tinyonnx's {} does not take a zero-size tensor (element-wise operators, reshapes, splits, reductions and CastLike's target type do)",
                    t.name, t.ty, op.op_type
                );
                self.error(span_of(At::Input(i)), msg);
                ok = false;
            }
        }
        ok
    }

    /// Checks dtypes, infers, folds, and adds a node; errors go where `span_of` says.
    pub(crate) fn build(
        &mut self,
        op: &'static OpSchema,
        node_name: String,
        mut inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        span_of: &dyn Fn(At) -> Span,
    ) -> Option<Vec<TensorId>> {
        if !self.check_dtypes(op, &inputs, span_of) {
            return None;
        }
        // Only operators whose inference is written for zero dims see a zero-size value.
        if !EMPTY_SAFE.contains(&op.op_type) && !self.check_zero_size(op, &inputs, true, span_of) {
            return None;
        }
        let n_in = if op.variadic {
            inputs.len()
        } else {
            op.inputs.len()
        };
        inputs.resize(n_in.max(inputs.len()), None);
        let types: Vec<Option<TensorType>> = inputs
            .iter()
            .map(|i| i.map(|id| self.graph.tensors[id].ty.clone()))
            .collect();
        let consts: Vec<Option<&Data>> = inputs
            .iter()
            .map(|i| i.and_then(|id| self.graph.tensors[id].value.as_ref()))
            .collect();
        let infer_cx = InferCtx {
            op,
            inputs: types.iter().map(Option::as_ref).collect(),
            consts,
            attrs: &attrs,
            opset: self.graph.opset,
        };
        let inferred = (op.infer)(&infer_cx).and_then(|t| {
            let values = match op.fold {
                Some(fold) => Some(fold(&infer_cx)?),
                None => None,
            };
            Ok((t, values))
        });
        let (out_types, values) = match inferred {
            Ok(v) => v,
            Err(e) => {
                let mut err = syn::Error::new(span_of(e.at), e.msg);
                if let Some((at, note)) = e.note {
                    err.combine(syn::Error::new(span_of(at), format!("note: {note}")));
                }
                self.sink.push(err);
                return None;
            }
        };
        if let Some(t) = out_types
            .iter()
            .find(|t| self.device_numel(&t.shape).is_none())
        {
            self.error(
                span_of(At::Op),
                format!(
                    "the output of {} would be {}, more than {MAX_DIM} elements on the device",
                    op.op_type, t.shape
                ),
            );
            return None;
        }
        // An output with no elements is known whatever the inputs hold.
        let mut values: Vec<Option<Data>> = match values {
            Some(v) if !v.is_empty() => v.into_iter().map(Some).collect(),
            _ => Vec::new(),
        };
        values.resize(out_types.len(), None);
        for (v, t) in values.iter_mut().zip(&out_types) {
            if v.is_none() && t.shape.0.iter().any(|d| d.fixed() == Some(0)) {
                *v = Some(Data::empty(t.dtype));
            }
        }
        if values.iter().any(Option::is_none) && !self.check_zero_size(op, &inputs, false, span_of)
        {
            return None;
        }
        while inputs.last().is_some_and(Option::is_none) {
            inputs.pop();
        }
        let mut values = values.into_iter();
        let outputs: Vec<TensorId> = out_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| {
                let value = values.next().flatten();
                // Operators with a variable number of outputs (Split) name them by index.
                let out_name = if op.output_names.is_empty() {
                    format!("output_{i}")
                } else {
                    op.output_name(i).to_string()
                };
                let id = self.new_tensor(
                    format!("{node_name}.{out_name}"),
                    ty,
                    TensorKind::Value,
                    "",
                    value,
                );
                self.anonymous.insert(id);
                id
            })
            .collect();
        self.graph.nodes.push(Node {
            name: node_name,
            doc: String::new(),
            instance: self.instance,
            custom: None,
            op,
            inputs,
            outputs: outputs.clone(),
            attrs,
            control: None,
        });
        Some(outputs)
    }

    pub(super) fn check_dtypes(
        &mut self,
        op: &OpSchema,
        inputs: &[Option<TensorId>],
        span_of: &dyn Fn(At) -> Span,
    ) -> bool {
        let mut first: Option<(usize, DType)> = None;
        for (i, id) in inputs.iter().enumerate() {
            let Some(id) = id else { continue };
            let Some(spec) = op.input_spec(i) else {
                continue;
            };
            let t = &self.graph.tensors[*id];
            let dtype = t.ty.dtype;
            let span = span_of(At::Input(i));
            match spec.ty {
                InTy::I64Const => {
                    if dtype != DType::I64 {
                        self.error(
                            span,
                            format!("{} expects {} as i64, got {dtype}", op.op_type, spec.name),
                        );
                        return false;
                    }
                    if t.value.is_none() {
                        self.error(
                            span,
                            format!(
                                "{} needs {} known at compile time: write a literal list such as [1, -1] or use an i64 weight",
                                op.op_type, spec.name
                            ),
                        );
                        return false;
                    }
                }
                InTy::Any => {}
                InTy::Const => {
                    if t.value.is_none() {
                        self.error(
                            span,
                            format!(
                                "{} needs {} known at compile time: use a weight or a Constant",
                                op.op_type, spec.name
                            ),
                        );
                        return false;
                    }
                }
                InTy::Bool => {
                    if dtype != DType::Bool {
                        self.error(
                            span,
                            format!(
                                "{} expects {} as bool, got {dtype} (compare it first, e.g. Greater(x, zero), or Cast(x, to = bool))",
                                op.op_type, spec.name
                            ),
                        );
                        return false;
                    }
                }
                InTy::T => {
                    if !op.dtypes.contains(&dtype) {
                        let allowed: Vec<&str> = op.dtypes.iter().map(|d| d.name()).collect();
                        self.error(
                            span,
                            format!(
                                "{} does not accept {dtype} (input {}); it accepts {}",
                                op.op_type,
                                spec.name,
                                allowed.join(", ")
                            ),
                        );
                        return false;
                    }
                    if let Some(&(_, since)) = op.dtype_since.iter().find(|(d, _)| *d == dtype)
                        && since > self.graph.opset
                    {
                        self.error(
                            span,
                            format!(
                                "{} accepts {dtype} from opset {since}; this model is opset {}",
                                op.op_type, self.graph.opset
                            ),
                        );
                        return false;
                    }
                    match first {
                        None => first = Some((i, dtype)),
                        Some((j, d)) if d != dtype => {
                            let other = op.input_spec(j).map_or("input", |s| s.name);
                            self.error(
                                span,
                                format!(
                                    "{} needs inputs of one dtype: {other} is {d} but {} is {dtype}",
                                    op.op_type, spec.name
                                ),
                            );
                            return false;
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        true
    }

    pub(super) fn attributes(&mut self, call: &Call, op: &'static OpSchema) -> Option<Attrs> {
        let mut explicit = Vec::new();
        let mut ok = true;
        let mut seen: HashMap<String, Span> = HashMap::new();
        for (name, value) in call.named() {
            let key = name.to_string();
            let Some(spec) = op.attr(&key) else {
                ok = false;
                let known: Vec<&str> = op.attrs.iter().map(|a| a.name).collect();
                let msg = if known.is_empty() {
                    format!("{} has no attributes, found `{key}`", op.op_type)
                } else {
                    let hint = suggest::did_you_mean(&key, &known)
                        .map(|s| format!("did you mean `{s}`? "))
                        .unwrap_or_default();
                    format!(
                        "{} has no attribute `{key}`: {hint}its attributes are {}",
                        op.op_type,
                        known.join(", ")
                    )
                };
                self.error(name.span(), msg);
                continue;
            };
            if seen.insert(key.clone(), name.span()).is_some() {
                ok = false;
                self.error(name.span(), format!("attribute `{key}` is given twice"));
                continue;
            }
            if spec.since > self.graph.opset {
                ok = false;
                self.error(
                    name.span(),
                    format!(
                        "{} has `{key}` from opset {} (this model uses opset {})",
                        op.op_type, spec.since, self.graph.opset
                    ),
                );
                continue;
            }
            match attr_value(spec, value) {
                Ok(v) => explicit.push((spec.name, v)),
                Err((span, msg)) => {
                    ok = false;
                    self.error(span, format!("attribute `{key}` of {}: {msg}", op.op_type));
                }
            }
        }
        let missing: Vec<&str> = op
            .attrs
            .iter()
            .filter(|s| matches!(s.default, AttrDefault::Required))
            .filter(|s| !explicit.iter().any(|(n, _)| n == &s.name))
            .map(|s| s.name)
            .collect();
        for m in missing {
            ok = false;
            self.error(
                call.func.span(),
                format!("{} needs the attribute `{m}`", op.op_type),
            );
        }
        ok.then(|| ops::attrs_with_defaults(op, explicit))
    }
}

/// Converts a DSL expression to an attribute value of the kind the spec wants.
pub(crate) fn attr_value(spec: &AttrSpec, value: &Expr) -> Result<AttrValue, (Span, String)> {
    let wrong = |e: &Expr| {
        (
            e.span(),
            format!("expected {}, found {}", spec.kind.describe(), e.describe()),
        )
    };
    let float = |e: &Expr| match e {
        Expr::Int(v, _) => Ok(*v as f32),
        Expr::Float(v, _) => Ok(*v as f32),
        other => Err(wrong(other)),
    };
    match (spec.kind, value) {
        (AttrKind::Int, Expr::Int(v, _)) => Ok(AttrValue::Int(*v)),
        (AttrKind::Int, Expr::Bool(b, _)) => Ok(AttrValue::Int(i64::from(*b))),
        // A dtype name stands for its `TensorProto.DataType` code (`Cast(x, to = i64)`).
        (AttrKind::Int, Expr::Name(id)) if DType::from_name(&id.to_string()).is_some() => {
            let d = DType::from_name(&id.to_string()).expect("checked by the guard");
            Ok(AttrValue::Int(i64::from(d.onnx_code())))
        }
        // So does a narrow storage format's (`Cast(x, to = f16)`).
        (AttrKind::Int, Expr::Name(id))
            if tinyonnx_layout::narrow::Narrow::from_name(&id.to_string()).is_some() =>
        {
            let n = tinyonnx_layout::narrow::Narrow::from_name(&id.to_string())
                .expect("checked by the guard");
            Ok(AttrValue::Int(i64::from(n.onnx_code())))
        }
        (AttrKind::Float, e) => float(e).map(AttrValue::Float),
        (AttrKind::Str, Expr::Str(s)) => Ok(AttrValue::Str(s.value())),
        (AttrKind::Ints, Expr::List(items, _)) => items
            .iter()
            .map(|e| match e {
                Expr::Int(v, _) => Ok(*v),
                other => Err(wrong(other)),
            })
            .collect::<Result<_, _>>()
            .map(AttrValue::Ints),
        (AttrKind::Floats, Expr::List(items, _)) => items
            .iter()
            .map(float)
            .collect::<Result<_, _>>()
            .map(AttrValue::Floats),
        (AttrKind::Strs, Expr::List(items, _)) => items
            .iter()
            .map(|e| match e {
                Expr::Str(s) => Ok(s.value()),
                other => Err(wrong(other)),
            })
            .collect::<Result<_, _>>()
            .map(AttrValue::Strs),
        (_, e) => Err(wrong(e)),
    }
}

/// Operators whose shape inference and folding take a zero-size input known only when
/// the model runs (the reductions fold it to their value over the empty set; the others
/// here infer an empty output, which becomes an empty constant); the others refuse one
/// before inferring.
const EMPTY_SAFE: &[&str] = &[
    // Element-wise: the output's shape is the (broadcast) input's.
    "Abs",
    "Add",
    "And",
    "Cast",
    "Ceil",
    "Cos",
    "Div",
    "Equal",
    "Exp",
    "Floor",
    "Greater",
    "Identity",
    "Less",
    "Log",
    "Mul",
    "Neg",
    "Not",
    "Or",
    "Pow",
    "Reciprocal",
    "Relu",
    "Sigmoid",
    "Sin",
    "Sqrt",
    "Sub",
    "Tanh",
    "Where",
    // Moving elements: an empty input gives empty outputs.
    "Reshape",
    "Split",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceSumSquare",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "Trilu",
];

#[cfg(test)]
mod tests {
    use super::super::testing::errors;
    use quote::quote;

    #[test]
    fn arity_and_attribute_mistakes_in_one_model_are_all_reported() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                let a = Relu(x, x);
                let b = Softmax(x, axes = 1);
                output y = Add(a, b);
            }
        });
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].starts_with("Relu takes at most 1 input"), "{e:?}");
        assert!(e[1].contains("axes"), "{e:?}");
    }

    #[test]
    fn an_unknown_operator_suggests_a_close_one() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                output y = Sigmod(x);
            }
        });
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("unknown operator `Sigmod`: did you mean `Sigmoid`?"),
            "{e:?}"
        );
    }

    #[test]
    fn a_newer_operator_needs_its_opset() {
        // Gelu is in the default domain from opset 20.
        let e = errors(quote! {
            model M {
                opset = 17;
                input x: f32[1, 4];
                output y = Gelu(x);
            }
        });
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("Gelu needs opset 20 or later; this model uses opset 17"),
            "{e:?}"
        );
    }

    #[test]
    fn an_empty_constant_as_an_operators_data_is_an_error_not_a_crash() {
        // Resize planned its taps by clamping into an axis of 0 values and panicked; an
        // edge Pad compiled into a kernel that would panic on the board.
        let e = errors(quote! {
            model M {
                input x: f32[1, 1, 2, 2];
                let c = Slice(Reshape(Constant(value_floats = [1.0, 2.0]), [1, 1, 1, 2]), [1], [1], [2]);
                output y = Add(x, Resize(c, _, _, [1, 1, 2, 2], mode = "nearest"));
                output z = Add(x, Pad(c, [0, 0, 1, 0, 0, 0, 1, 0], mode = "edge"));
            }
        });
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e.iter().all(|m| m.starts_with("`c` has no elements")),
            "{e:?}"
        );
        assert!(e[0].contains("Resize") && e[1].contains("Pad"), "{e:?}");
        // Concat's empty pieces add nothing: still accepted.
        let e = errors(quote! {
            model M {
                input x: f32[3];
                let c = Slice(Constant(value_floats = [1.0, 2.0]), [1], [1]);
                output y = Concat(x, c, axis = 0);
            }
        });
        assert!(e.is_empty(), "{e:?}");
    }
}
