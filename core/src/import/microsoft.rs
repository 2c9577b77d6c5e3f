//! Operators of ONNX Runtime's `com.microsoft` domain that its quantizer writes in the
//! operator format, rewritten into the default domain's QDQ form, which the plan then
//! runs as the integer kernel ONNX Runtime runs for either (`plan/qdq.rs` recognizes the
//! group). `QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp)` becomes
//! DequantizeLinear of A and B, a DequantizeLinear of the int32 C at scale `a_scale *
//! b_scale` (zero point 0: the bias form a QDQ file has), Gemm, and a QuantizeLinear of
//! the result (none where `y_scale` is absent: a float output). The element-wise,
//! pooling, concatenation and softmax operators (`QLinearAdd`, `QLinearMul`,
//! `QLinearSigmoid`, `QLinearLeakyRelu`, `QLinearGlobalAveragePool`,
//! `QLinearAveragePool`, `QLinearConcat`, `QLinearSoftmax`, `QLinearWhere`) become
//! DequantizeLinear of each operand (`QLinearWhere`'s condition passes as it is), the
//! float operator and a QuantizeLinear: the definition their names
//! give, which ONNX Runtime computes with other roundings (lookup tables, fixed-point
//! ratios), so an output may be one step from its (README, "int8"); an Add of whole rows
//! the plan forms back into a `QLinearAdd` with ONNX Runtime's arithmetic.

use tinyonnx_proto as pb;

use super::{Importer, Val, proto};
use crate::data::Data;

impl Importer<'_> {
    /// Whether `op` of `com.microsoft` is one the importer rewrites.
    pub(super) fn microsoft_op(op: &str) -> bool {
        op == "QGemm" || float_op(op).is_some()
    }

    /// A `com.microsoft` operator [`Importer::microsoft_op`] accepts, rewritten.
    pub(super) fn microsoft(&mut self, node: &pb::NodeProto, name: &str) {
        let op = node.op_type.as_deref().unwrap_or_default();
        match float_op(op) {
            Some(float) => self.qlinear_float(node, name, op, float),
            None => self.qgemm(node, name),
        }
    }

    /// `DequantizeLinear` of each operand, `float`, `QuantizeLinear`.
    fn qlinear_float(&mut self, node: &pb::NodeProto, name: &str, op: &str, float: &str) {
        let given = |k: usize| node.input.get(k).filter(|i| !i.is_empty()).cloned();
        let Some(y) = node.output.first().filter(|y| !y.is_empty()).cloned() else {
            return;
        };
        if proto::int(node, "channels_last").unwrap_or(0) != 0 {
            self.error("has channels_last = 1; tinyonnx takes the NCHW layout");
            return;
        }
        // Operand triples (x, scale, zero point) and the output's (scale, zero point),
        // as input positions.
        let (operands, out): (Vec<[usize; 3]>, [usize; 2]) = match op {
            "QLinearAdd" | "QLinearMul" => (vec![[0, 1, 2], [3, 4, 5]], [6, 7]),
            // (condition, x, x_scale, x_zp, y, y_scale, y_zp, z_scale, z_zp)
            "QLinearWhere" => (vec![[1, 2, 3], [4, 5, 6]], [7, 8]),
            "QLinearConcat" => {
                let n = node.input.len().saturating_sub(2) / 3;
                (
                    (0..n).map(|i| [2 + 3 * i, 3 + 3 * i, 4 + 3 * i]).collect(),
                    [0, 1],
                )
            }
            _ => (vec![[0, 1, 2]], [3, 4]),
        };
        let mut floats = Vec::with_capacity(operands.len() + 1);
        if float == "Where" {
            let Some(cond) = given(0) else {
                self.error("has no condition (input 0)");
                return;
            };
            floats.push(cond);
        }
        for (i, [x, s, z]) in operands.into_iter().enumerate() {
            let (Some(xv), Some(sv)) = (given(x), given(s)) else {
                self.error(format!(
                    "has no value or scale for operand {i} (inputs {x}, {s})"
                ));
                return;
            };
            let f = format!("{y}::in{i}");
            self.emit(
                "DequantizeLinear",
                std::iter::once(xv).chain([sv]).chain(given(z)).collect(),
                f.clone(),
                Vec::new(),
                format!("{name}::in{i}"),
            );
            floats.push(f);
        }
        let Some(y_scale) = given(out[0]) else {
            self.error(format!("has no output scale (input {})", out[0]));
            return;
        };
        let keep: &[&str] = match float {
            "LeakyRelu" => &["alpha"],
            "Concat" | "Softmax" => &["axis"],
            "AveragePool" => &[
                "auto_pad",
                "ceil_mode",
                "count_include_pad",
                "kernel_shape",
                "pads",
                "strides",
            ],
            _ => &[],
        };
        let attrs: Vec<pb::AttributeProto> = node
            .attribute
            .iter()
            .filter(|a| a.name.as_deref().is_some_and(|n| keep.contains(&n)))
            .cloned()
            .collect();
        let g = format!("{y}::float");
        // QLinearSoftmax states the opset of the Softmax it stands for: before 13 the
        // input is flattened at `axis` (the default 1), as for such a file's Softmax.
        let opset = proto::int(node, "opset").unwrap_or(1);
        if float == "Softmax" && opset < 13 {
            let softmax = pb::NodeProto {
                op_type: Some(float.into()),
                input: floats,
                output: vec![g.clone()],
                attribute: attrs,
                ..Default::default()
            };
            self.softmax_before_13(&softmax, &format!("{name}::float"));
        } else {
            self.emit(float, floats, g.clone(), attrs, format!("{name}::float"));
        }
        self.emit(
            "QuantizeLinear",
            std::iter::once(g)
                .chain([y_scale])
                .chain(given(out[1]))
                .collect(),
            y,
            Vec::new(),
            name.to_string(),
        );
    }

    pub(super) fn qgemm(&mut self, node: &pb::NodeProto, name: &str) {
        let given = |k: usize| node.input.get(k).filter(|i| !i.is_empty()).cloned();
        let (Some(a), Some(a_scale), Some(b), Some(b_scale)) =
            (given(0), given(1), given(3), given(4))
        else {
            self.error("needs A, a_scale, B and b_scale (inputs 0, 1, 3 and 4)");
            return;
        };
        let Some(y) = node.output.first().filter(|y| !y.is_empty()).cloned() else {
            return;
        };
        let trans_b = proto::int(node, "transB").unwrap_or(0);
        let scales = |s: &str| match self.vals.get(s) {
            Some(Val::Const(c)) => c.data.as_f32().map(<[f32]>::to_vec),
            _ => None,
        };
        let (Some(sa), Some(sb)) = (scales(&a_scale), scales(&b_scale)) else {
            self.error("has a scale known only when the model runs; tinyonnx takes QGemm's scales as constants");
            return;
        };
        if sa.len() != 1 {
            self.error(format!(
                "has {} values of a_scale; QGemm takes one",
                sa.len()
            ));
            return;
        }
        // B's scale per output column: along axis 0 of B [N, K] (transB) or 1 of [K, N].
        let per_column = sb.len() > 1;
        let axis = vec![proto::int_attr("axis", if trans_b != 0 { 0 } else { 1 })];
        let zero = |k: usize| given(k).into_iter();
        let a_f = format!("{y}::a");
        self.emit(
            "DequantizeLinear",
            std::iter::once(a).chain([a_scale]).chain(zero(2)).collect(),
            a_f.clone(),
            Vec::new(),
            format!("{name}::a"),
        );
        let b_f = format!("{y}::b");
        self.emit(
            "DequantizeLinear",
            std::iter::once(b).chain([b_scale]).chain(zero(5)).collect(),
            b_f.clone(),
            if per_column { axis } else { Vec::new() },
            format!("{name}::b"),
        );
        let mut gemm_in = vec![a_f, b_f];
        if let Some(c) = given(6) {
            // The bias at scale a_scale * b_scale, as ONNX Runtime's QGemm reads it.
            let product: Vec<f32> = sb.iter().map(|&s| sa[0] * s).collect();
            let c_scale = format!("{y}::c_scale");
            let dims = if per_column {
                vec![product.len()]
            } else {
                Vec::new()
            };
            self.define_const(&c_scale, dims, Data::F32(product));
            let c_f = format!("{y}::c");
            // C is [N]: one scale per element along its only axis.
            let along = if per_column {
                vec![proto::int_attr("axis", 0)]
            } else {
                Vec::new()
            };
            self.emit(
                "DequantizeLinear",
                vec![c, c_scale],
                c_f.clone(),
                along,
                format!("{name}::c"),
            );
            gemm_in.push(c_f);
        }
        let mut attrs: Vec<pb::AttributeProto> = ["alpha", "transA", "transB"]
            .into_iter()
            .filter_map(|k| proto::find(node, k).cloned())
            .collect();
        attrs.retain(|a| a.name.as_deref() != Some("alpha") || a.f != Some(1.0));
        match given(7) {
            Some(y_scale) => {
                let g = format!("{y}::float");
                self.emit("Gemm", gemm_in, g.clone(), attrs, format!("{name}::gemm"));
                self.emit(
                    "QuantizeLinear",
                    std::iter::once(g).chain([y_scale]).chain(zero(8)).collect(),
                    y,
                    Vec::new(),
                    name.to_string(),
                );
            }
            None => self.emit("Gemm", gemm_in, y, attrs, name.to_string()),
        }
    }
}

/// The float operator a `com.microsoft` quantized one stands for.
fn float_op(op: &str) -> Option<&'static str> {
    Some(match op {
        "QLinearAdd" => "Add",
        "QLinearMul" => "Mul",
        "QLinearSigmoid" => "Sigmoid",
        "QLinearLeakyRelu" => "LeakyRelu",
        "QLinearGlobalAveragePool" => "GlobalAveragePool",
        "QLinearAveragePool" => "AveragePool",
        "QLinearConcat" => "Concat",
        "QLinearSoftmax" => "Softmax",
        "QLinearWhere" => "Where",
        _ => return None,
    })
}
