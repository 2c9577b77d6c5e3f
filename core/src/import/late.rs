//! What opsets after 23 add to operators tinyonnx registers at 23, written with the
//! operators of opset 23, so the plan, the kernels and the emitted ONNX stay as they
//! are (and ONNX Runtime, which has none of these additions, can run the result).
//!
//! - `BitShift` (opset 28) on signed integers, and on u16 (which ONNX Runtime never
//!   had): the value widened to u64 and shifted there. A right shift of a negative value
//!   is the complement of the logical shift of its complement (sign-filling); a count
//!   that is negative or at least the type's width gives the sign fill alone (0 for a
//!   left shift).
//! - `Mod` with `fmod = 0` on floats (opset 28): C's `fmod`, then the divisor added where
//!   the remainder is nonzero and of the other sign, which is `a - floor(a / b) * b`.
//! - `SpaceToDepth`'s `mode` (opset 28): `DCR` is the operator as registered; `CRD`
//!   (channels first) the reference's reshape, transpose and reshape.
//!
//! And element types ONNX names but tinyonnx's operator (and ONNX Runtime's kernel,
//! where noted) lacks, computed exactly in a wider type and cast back:
//! - `Min`/`Max` of i16 and u16 (no ONNX Runtime kernel) in i32;
//! - `ReduceMax`/`ReduceMin` of bool (opset 20) in u8.

use tinyonnx_proto as pb;

use super::proto::int_attr;
use super::{Importer, Val};
use crate::data::Data;
use crate::types::DType;

impl Importer<'_> {
    /// The element type of a value, when it has one (not a failed or absent input).
    pub(super) fn dtype_of(&self, name: &str) -> Option<DType> {
        match self.vals.get(name)? {
            Val::Tensor(id) => Some(self.cx.graph.tensors[*id].ty.dtype),
            Val::Const(c) => Some(c.data.dtype()),
            Val::Poisoned | Val::Absent => None,
        }
    }

    /// A scalar constant named `{base}::{what}`; returns its name.
    fn scalar(&mut self, base: &str, what: &str, dtype: DType, v: f64) -> String {
        let name = format!("{base}::{what}");
        let data = match dtype {
            DType::F32 => Data::F32(vec![v as f32]),
            DType::I64 => Data::I64(vec![v as i64]),
            dtype => Data::Typed {
                dtype,
                values: vec![v],
            },
        };
        self.define_const(&name, Vec::new(), data);
        name
    }

    /// `op(inputs)` into a new value `{base}::{what}`; returns its name.
    fn step(&mut self, op: &str, base: &str, what: &str, inputs: Vec<String>) -> String {
        self.step_with(op, base, what, inputs, Vec::new())
    }

    fn step_with(
        &mut self,
        op: &str,
        base: &str,
        what: &str,
        inputs: Vec<String>,
        attrs: Vec<pb::AttributeProto>,
    ) -> String {
        let out = format!("{base}::{what}");
        self.emit(op, inputs, out.clone(), attrs, out.clone());
        out
    }

    /// `BitShift` of a type the registered operator lacks (signed, u16); `false` when
    /// the node is one the registered operator takes as it is.
    pub(super) fn bit_shift_wide(&mut self, node: &pb::NodeProto, name: &str) -> bool {
        let (Some(x), Some(y), Some(out)) =
            (node.input.first(), node.input.get(1), node.output.first())
        else {
            return false;
        };
        let Some(t) = self.dtype_of(x) else {
            return false;
        };
        // Signed types are opset 28's; u16 every opset names.
        let signed = t.is_signed_int() && self.file_opset >= 28;
        if !signed && t != DType::U16 {
            return false;
        }
        let left = match super::proto::string(node, "direction").as_deref() {
            Some("LEFT") => true,
            Some("RIGHT") => false,
            _ => return false,
        };
        let bits = t.size() as f64 * 8.0;
        let u64c = |v: DType| vec![int_attr("to", i64::from(v.onnx_code()))];
        let base = name.to_string();
        let xu = self.step_with("Cast", &base, "x_u64", vec![x.clone()], u64c(DType::U64));
        // A negative count becomes a huge one; past 63 the clamp keeps ONNX Runtime's u64
        // shift defined (its count is taken modulo 64 on x86).
        let yu = self.step_with("Cast", &base, "y_u64", vec![y.clone()], u64c(DType::U64));
        let max = self.scalar(&base, "63", DType::U64, 63.0);
        let yc = self.step("Min", &base, "y_clamped", vec![yu.clone(), max]);
        // ONNX Runtime has no u64 `Where`: selections are a multiplication by 0 or 1
        // and an exclusive or with 0 or all ones.
        let shifted = if left {
            let s = self.step_with(
                "BitShift",
                &base,
                "shifted",
                vec![xu, yc],
                vec![string_attr("direction", "LEFT")],
            );
            // At least the width: every bit leaves the type.
            let width = self.scalar(&base, "width", DType::U64, bits);
            let inside = self.step("Less", &base, "in_range", vec![yu, width]);
            let keep = self.step_with("Cast", &base, "keep", vec![inside], u64c(DType::U64));
            self.step("Mul", &base, "kept", vec![s, keep])
        } else if signed {
            // All ones for a negative x, else 0: -(x < 0) in i64, as u64.
            let zero = self.scalar(&base, "zero", t, 0.0);
            let neg = self.step("Less", &base, "negative", vec![x.clone(), zero]);
            let neg = self.step_with("Cast", &base, "negative_i64", vec![neg], u64c(DType::I64));
            let ones = self.step("Neg", &base, "sign_i64", vec![neg]);
            let ones = self.step_with("Cast", &base, "sign", vec![ones], u64c(DType::U64));
            let pos = self.step("BitwiseXor", &base, "magnitude", vec![xu, ones.clone()]);
            let s = self.step_with(
                "BitShift",
                &base,
                "shifted",
                vec![pos, yc],
                vec![string_attr("direction", "RIGHT")],
            );
            self.step("BitwiseXor", &base, "filled", vec![s, ones])
        } else {
            self.step_with(
                "BitShift",
                &base,
                "shifted",
                vec![xu, yc],
                vec![string_attr("direction", "RIGHT")],
            )
        };
        self.emit(
            "Cast",
            vec![shifted],
            out.clone(),
            u64c(t),
            name.to_string(),
        );
        true
    }

    /// `Mod` of floats with `fmod = 0` (opset 28): the remainder with the divisor's sign.
    pub(super) fn float_mod(&mut self, node: &pb::NodeProto, name: &str) -> bool {
        let (Some(a), Some(b), Some(out)) =
            (node.input.first(), node.input.get(1), node.output.first())
        else {
            return false;
        };
        let Some(t) = self.dtype_of(a).filter(|t| t.is_float()) else {
            return false;
        };
        if super::proto::int(node, "fmod").unwrap_or(0) != 0 {
            return false;
        }
        let base = name.to_string();
        let r = self.step_with(
            "Mod",
            &base,
            "fmod",
            vec![a.clone(), b.clone()],
            vec![int_attr("fmod", 1)],
        );
        let zero = self.scalar(&base, "zero", t, 0.0);
        let is_zero = self.step("Equal", &base, "is_zero", vec![r.clone(), zero.clone()]);
        let nonzero = self.step("Not", &base, "nonzero", vec![is_zero]);
        let r_neg = self.step("Less", &base, "r_negative", vec![r.clone(), zero.clone()]);
        let b_neg = self.step("Less", &base, "b_negative", vec![b.clone(), zero]);
        let differ = self.step("Xor", &base, "signs_differ", vec![r_neg, b_neg]);
        let fix = self.step("And", &base, "adjust", vec![nonzero, differ]);
        let moved = self.step("Add", &base, "moved", vec![r.clone(), b.clone()]);
        self.emit(
            "Where",
            vec![fix, moved, r],
            out.clone(),
            Vec::new(),
            name.to_string(),
        );
        true
    }
}

impl Importer<'_> {
    /// `SpaceToDepth` with a `mode`; `false` when the node has none.
    pub(super) fn space_to_depth_mode(&mut self, node: &pb::NodeProto, name: &str) -> bool {
        let Some(mode) = super::proto::string(node, "mode") else {
            return false;
        };
        let mut plain = node.clone();
        plain
            .attribute
            .retain(|a| a.name.as_deref() != Some("mode"));
        let schema = crate::ops::lookup("SpaceToDepth").expect("registered");
        match mode.as_str() {
            "DCR" => self.build(schema, &plain, name.to_string()),
            "CRD" => {
                let (Some(x), Some(out)) = (node.input.first(), node.output.first()) else {
                    return false;
                };
                let b = super::proto::int(node, "blocksize").unwrap_or(0);
                let dims: Vec<i64> = self
                    .dims_of(x)
                    .unwrap_or_default()
                    .iter()
                    .map(|&d| d as i64)
                    .collect();
                let &[n, c, h, w] = dims.as_slice() else {
                    self.error("needs a 4-D input of known shape for mode CRD");
                    return true;
                };
                if b <= 0 || h % b != 0 || w % b != 0 {
                    self.error(format!(
                        "has blocksize {b}, which must be positive and divide the input's height {h} and width {w}"
                    ));
                    return true;
                }
                let six = format!("{name}::blocks_shape");
                self.define_const(&six, vec![6], Data::I64(vec![n, c, h / b, b, w / b, b]));
                let four = format!("{name}::out_shape");
                self.define_const(&four, vec![4], Data::I64(vec![n, c * b * b, h / b, w / b]));
                let blocks = self.step("Reshape", name, "blocks", vec![x.clone(), six]);
                let perm = pb::AttributeProto {
                    name: Some("perm".into()),
                    r#type: Some(7),
                    ints: vec![0, 1, 3, 5, 2, 4],
                    ..Default::default()
                };
                let moved = self.step_with("Transpose", name, "crd", vec![blocks], vec![perm]);
                self.emit(
                    "Reshape",
                    vec![moved, four],
                    out.clone(),
                    Vec::new(),
                    name.to_string(),
                );
            }
            other => self.error(format!(
                "has mode \"{other}\"; SpaceToDepth's mode is \"DCR\" or \"CRD\""
            )),
        }
        true
    }
}

/// The wider type an operator computes `dtype` in, where tinyonnx's lacks `dtype`.
fn wider(op: &str, dtype: DType) -> Option<DType> {
    match (op, dtype) {
        ("Min" | "Max", DType::I16 | DType::U16) => Some(DType::I32),
        ("ReduceMax" | "ReduceMin", DType::Bool) => Some(DType::U8),
        _ => None,
    }
}

impl Importer<'_> {
    /// `node` on a type its operator lacks, in the type [`wider`] names: every input of
    /// the narrow type cast up, every output cast back. `false` when not such a node.
    pub(super) fn widened(&mut self, node: &pb::NodeProto, name: &str) -> bool {
        let op = node.op_type.as_deref().unwrap_or("");
        let Some(t) = node.input.first().and_then(|x| self.dtype_of(x)) else {
            return false;
        };
        let Some(via) = wider(op, t) else {
            return false;
        };
        let to = |d: DType| vec![int_attr("to", i64::from(d.onnx_code()))];
        let mut wide = node.clone();
        for (k, x) in node.input.iter().enumerate() {
            if !x.is_empty() && self.dtype_of(x) == Some(t) {
                wide.input[k] =
                    self.step_with("Cast", name, &format!("in{k}"), vec![x.clone()], to(via));
            }
        }
        for o in &mut wide.output {
            if !o.is_empty() {
                *o = format!("{o}::{via}");
            }
        }
        let schema = crate::ops::lookup(op).expect("the widened operators are registered");
        self.build(schema, &wide, format!("{name}::{via}"));
        for (o, w) in node.output.iter().zip(&wide.output) {
            if !o.is_empty() {
                self.emit(
                    "Cast",
                    vec![w.clone()],
                    o.clone(),
                    to(t),
                    format!("{name}::{o}"),
                );
            }
        }
        true
    }
}

fn string_attr(name: &str, value: &str) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.into()),
        r#type: Some(3),
        s: Some(value.as_bytes().to_vec()),
        ..Default::default()
    }
}
