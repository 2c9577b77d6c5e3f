//! Forms of operators that tinyonnx's registered operators lack, written with the ones
//! they have (opset 23), so the plan, the kernels and the emitted ONNX stay as they are
//! (and ONNX Runtime, which has none of the later opsets' additions, can run the
//! result). What opsets after 23 add:
//!
//! - `BitShift` (opset 28) on signed integers, and on u16 (which ONNX Runtime never
//!   had): the value widened to u64 and shifted there. A right shift of a negative value
//!   is the complement of the logical shift of its complement (sign-filling); a count
//!   that is negative or at least the type's width gives the sign fill alone (0 for a
//!   left shift).
//! - `Mod` with `fmod = 0` on floats (opset 28): C's `fmod`, then the divisor added where
//!   the remainder is nonzero and of the other sign, which is `a - floor(a / b) * b`.
//! - `Attention`'s seventh input `nonpad_kv_seqlen` (opset 24) and its window attributes
//!   `left_window_size`/`right_window_size` (25): the keys each query may see, as a
//!   boolean mask (a constant, or computed from the lengths when the model runs) joined
//!   to the file's mask, with the causal rule folded in at the offset those opsets
//!   define (the past's length, or a batch's length minus the queries).
//! - `SpaceToDepth`'s `mode` (opset 28): `DCR` is the operator as registered; `CRD`
//!   (channels first) the reference's reshape, transpose and reshape.
//!
//! Blocked quantization (`block_size > 0`, opset 21): each scale (and zero point) repeated
//! over its block by a `Gather` along the axis, then the formula element-wise:
//! `(x - zero_point) * scale` to dequantize, `saturate(round(x / scale) + zero_point)`
//! (ties to even) to quantize.
//!
//! And element types ONNX names but tinyonnx's operator (and ONNX Runtime's kernel,
//! where noted) lacks, computed exactly in a wider type and cast back:
//! - `Min`/`Max` of i16 and u16 (no ONNX Runtime kernel) in i32;
//! - `ReduceMax`/`ReduceMin` of bool (opset 20) in u8;
//! - `TopK` of u64 in i64 with the top bit flipped (an order-keeping map).
//!
//! And a recurrent operator's `sequence_lens` that the fixed inputs show to be the whole
//! sequence everywhere is left out (the operator without it is the same).

use tinyonnx_proto as pb;

use super::fold::MAX_FOLD_VALUES;
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
    pub(super) fn step(&mut self, op: &str, base: &str, what: &str, inputs: Vec<String>) -> String {
        self.step_with(op, base, what, inputs, Vec::new())
    }

    pub(super) fn step_with(
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

impl Importer<'_> {
    /// `Attention` with `nonpad_kv_seqlen` or a window; `false` when it has neither.
    pub(super) fn attention_late(&mut self, node: &pb::NodeProto, name: &str) -> bool {
        let lengths = node.input.get(6).filter(|s| !s.is_empty()).cloned();
        let left = super::proto::int(node, "left_window_size").unwrap_or(-1);
        let right = super::proto::int(node, "right_window_size").unwrap_or(-1);
        let windowed = node.attribute.iter().any(|a| {
            matches!(
                a.name.as_deref(),
                Some("left_window_size" | "right_window_size")
            )
        });
        if lengths.is_none() && !windowed {
            return false;
        }
        let causal = super::proto::int(node, "is_causal").unwrap_or(0) != 0;
        let input = |k: usize| node.input.get(k).filter(|s| !s.is_empty()).cloned();
        let dims = |this: &Self, k: usize| input(k).and_then(|x| this.dims_of(&x));
        let (Some(q), Some(kd)) = (dims(self, 0), dims(self, 1)) else {
            self.error("needs Q and K of known shape");
            return true;
        };
        let seq = |d: &[usize]| if d.len() == 4 { d.get(2) } else { d.get(1) }.copied();
        let past = dims(self, 4).and_then(|d| d.get(2).copied()).unwrap_or(0);
        let (Some(batch), Some(sq), Some(skv)) = (q.first().copied(), seq(&q), seq(&kd)) else {
            self.error("has Q or K of a rank other than 3 or 4");
            return true;
        };
        let mask = input(3);
        let mask_dims = mask.as_ref().and_then(|m| self.dims_of(m));
        // The visible keys of every query, a constant made before the node's own checks.
        if sq
            .checked_mul(past + skv)
            .is_none_or(|n| n > MAX_FOLD_VALUES)
        {
            self.error(format!(
                "has {sq} queries over {} keys: a mask of more than {MAX_FOLD_VALUES} values, which tinyonnx does not build",
                past + skv
            ));
            return true;
        }
        // A mask shorter than the keys masks the rest: padded to all of them (ONNX
        // Runtime's opset-23 Attention takes no shorter mask).
        let width = past + skv;
        let seen = if let Some(lengths) = &lengths {
            self.attention_lengths_mask(name, lengths, batch, sq, width, causal, left, right)
        } else {
            let mut values = Vec::with_capacity(sq * width);
            for i in 0..sq as i64 {
                let p = i + past as i64;
                for j in 0..width as i64 {
                    let ok = (!causal || j <= p)
                        && (left < 0 || j >= p - left)
                        && (right < 0 || j <= p + right);
                    values.push(f64::from(u8::from(ok)));
                }
            }
            let m = format!("{name}::visible");
            let data = Data::Typed {
                dtype: DType::Bool,
                values,
            };
            self.define_const(&m, vec![1, 1, sq, width], data);
            m
        };
        let joined = match (&mask, mask.as_ref().and_then(|m| self.dtype_of(m))) {
            (None, _) => seen,
            (Some(m), Some(DType::Bool)) => {
                let m = self.mask_prefix(name, m, mask_dims.as_deref(), width);
                self.step("And", name, "mask", vec![seen, m])
            }
            (Some(m), Some(t)) => {
                let m = self.mask_prefix(name, m, mask_dims.as_deref(), width);
                let hidden = self.scalar(name, "hidden", t, f64::NEG_INFINITY);
                self.step("Where", name, "mask", vec![seen, m, hidden])
            }
            // A failed mask was reported.
            (Some(_), None) => return true,
        };
        let mut plain = node.clone();
        plain.input.truncate(6);
        if plain.input.len() < 4 {
            plain.input.resize(4, String::new());
        }
        plain.input[3] = joined;
        plain.attribute.retain(|a| {
            !matches!(
                a.name.as_deref(),
                Some("is_causal" | "left_window_size" | "right_window_size")
            )
        });
        let schema = crate::ops::lookup("Attention").expect("registered");
        self.build(schema, &plain, name.to_string());
        true
    }

    /// A mask over exactly `width` keys: a longer one's first keys, a shorter one padded
    /// with masked keys (false, or minus infinity).
    fn mask_prefix(&mut self, name: &str, m: &str, dims: Option<&[usize]>, width: usize) -> String {
        let Some((&last, lead)) = dims.and_then(|d| d.split_last()) else {
            return m.to_string();
        };
        if last > width {
            let (starts, ends, axes) = (
                format!("{name}::mask_start"),
                format!("{name}::mask_end"),
                format!("{name}::mask_axis"),
            );
            self.define_const(&starts, vec![1], Data::I64(vec![0]));
            self.define_const(&ends, vec![1], Data::I64(vec![width as i64]));
            self.define_const(&axes, vec![1], Data::I64(vec![-1]));
            return self.step(
                "Slice",
                name,
                "mask_prefix",
                vec![m.to_string(), starts, ends, axes],
            );
        }
        if last == width {
            return m.to_string();
        }
        let mut pad_dims = lead.to_vec();
        pad_dims.push(width - last);
        let Some(count) =
            crate::types::checked_numel(pad_dims.iter().copied()).filter(|&n| n <= MAX_FOLD_VALUES)
        else {
            return m.to_string();
        };
        let data = match self.dtype_of(m) {
            Some(DType::F32) => Data::F32(vec![f32::NEG_INFINITY; count]),
            Some(t) => Data::Typed {
                dtype: t,
                values: vec![
                    if t == DType::Bool {
                        0.0
                    } else {
                        f64::NEG_INFINITY
                    };
                    count
                ],
            },
            None => return m.to_string(),
        };
        let pad = format!("{name}::mask_padding");
        self.define_const(&pad, pad_dims, data);
        self.step_with(
            "Concat",
            name,
            "mask_padded",
            vec![m.to_string(), pad],
            vec![int_attr("axis", -1)],
        )
    }

    /// The keys each query of each batch sees, `[batch, 1, queries, width]`, from the
    /// lengths the model is given: key `j` is valid below the batch's length, and the
    /// query `i` sits at `length - queries + i` for the causal rule and the window.
    #[allow(clippy::too_many_arguments)]
    fn attention_lengths_mask(
        &mut self,
        name: &str,
        lengths: &str,
        batch: usize,
        sq: usize,
        width: usize,
        causal: bool,
        left: i64,
        right: i64,
    ) -> String {
        let keys = format!("{name}::key_index");
        self.define_const(
            &keys,
            vec![1, 1, 1, width],
            Data::I64((0..width as i64).collect()),
        );
        let queries = format!("{name}::query_index");
        self.define_const(
            &queries,
            vec![1, 1, sq, 1],
            Data::I64((0..sq as i64).collect()),
        );
        let shape = format!("{name}::lengths_shape");
        self.define_const(&shape, vec![4], Data::I64(vec![batch as i64, 1, 1, 1]));
        let n = self.step("Reshape", name, "lengths", vec![lengths.to_string(), shape]);
        let mut seen = self.step("Less", name, "valid", vec![keys.clone(), n.clone()]);
        if !causal && left < 0 && right < 0 {
            return seen;
        }
        let sq_c = self.scalar(name, "queries", DType::I64, sq as f64);
        let offset = self.step("Sub", name, "offset", vec![n, sq_c]);
        let pos = self.step("Add", name, "position", vec![queries, offset]);
        let mut bound = |this: &mut Self, what: &str, op: &str, edge: String| {
            let out = this.step(op, name, what, vec![keys.clone(), edge]);
            let inside = this.step("Not", name, &format!("{what}_ok"), vec![out]);
            seen = this.step(
                "And",
                name,
                &format!("{what}_seen"),
                vec![seen.clone(), inside],
            );
        };
        if causal {
            bound(self, "future", "Greater", pos.clone());
        }
        if left >= 0 {
            let l = self.scalar(name, "left", DType::I64, left as f64);
            let edge = self.step("Sub", name, "left_edge", vec![pos.clone(), l]);
            bound(self, "before_window", "Less", edge);
        }
        if right >= 0 {
            let r = self.scalar(name, "right", DType::I64, right as f64);
            let edge = self.step("Add", name, "right_edge", vec![pos, r]);
            bound(self, "after_window", "Greater", edge);
        }
        seen
    }
}

impl Importer<'_> {
    /// Quantize/DequantizeLinear with `block_size > 0`; `false` for any other.
    pub(super) fn blocked_quant(
        &mut self,
        node: &pb::NodeProto,
        name: &str,
        dequantize: bool,
    ) -> bool {
        let block = super::proto::int(node, "block_size").unwrap_or(0);
        if block <= 0 {
            return false;
        }
        let input = |k: usize| node.input.get(k).filter(|s| !s.is_empty()).cloned();
        let (Some(x), Some(scale), Some(out)) = (input(0), input(1), node.output.first()) else {
            return false;
        };
        let zp = input(2);
        let (Some(dims), Some(scale_dims)) = (self.dims_of(&x), self.dims_of(&scale)) else {
            self.error("needs its input and scale of known shape for blocked quantization");
            return true;
        };
        let rank = dims.len() as i64;
        let axis = super::proto::int(node, "axis").unwrap_or(1);
        let axis = if axis < 0 { axis + rank } else { axis };
        let block = block as usize;
        let (Some(&d), Some(&nb)) = (
            usize::try_from(axis).ok().and_then(|a| dims.get(a)),
            usize::try_from(axis).ok().and_then(|a| scale_dims.get(a)),
        ) else {
            self.error(format!("has axis {axis}, outside the input's rank {rank}"));
            return true;
        };
        if scale_dims.len() != dims.len() || nb != d.div_ceil(block) {
            self.error(format!(
                "has a scale of dims {scale_dims:?}; blocks of {block} along axis {axis} of {dims:?} need {} there and the input's dims elsewhere",
                d.div_ceil(block)
            ));
            return true;
        }
        if d > MAX_FOLD_VALUES {
            self.error(format!(
                "has an axis of {d}, longer than the {MAX_FOLD_VALUES} values tinyonnx folds"
            ));
            return true;
        }
        // Element k of the axis takes block k / block_size's parameters.
        let which = format!("{name}::block_of");
        let idx: Vec<i64> = (0..d).map(|k| (k / block) as i64).collect();
        self.define_const(&which, vec![d], Data::I64(idx));
        let axis_attr = || vec![int_attr("axis", axis)];
        let full_scale = self.step_with(
            "Gather",
            name,
            "scale",
            vec![scale, which.clone()],
            axis_attr(),
        );
        let to = |t: DType| vec![int_attr("to", i64::from(t.onnx_code()))];
        let zp_f32 = match zp {
            Some(z) => {
                let full =
                    self.step_with("Gather", name, "zero_point", vec![z, which], axis_attr());
                Some(self.step_with("Cast", name, "zero_point_f32", vec![full], to(DType::F32)))
            }
            None => None,
        };
        if dequantize {
            let xf = self.step_with("Cast", name, "x_f32", vec![x], to(DType::F32));
            let centred = match zp_f32 {
                Some(z) => self.step("Sub", name, "centred", vec![xf, z]),
                None => xf,
            };
            self.emit(
                "Mul",
                vec![centred, full_scale],
                out.clone(),
                Vec::new(),
                name.to_string(),
            );
            return true;
        }
        // The output type: the zero point's, else `output_dtype`, else u8.
        let code = match input(2) {
            Some(z) => self
                .narrow
                .get(&z)
                .map(|n| i64::from(n.onnx_code()))
                .or_else(|| self.dtype_of(&z).map(|t| i64::from(t.onnx_code()))),
            None => super::proto::int(node, "output_dtype").filter(|&c| c != 0),
        }
        .unwrap_or(i64::from(DType::U8.onnx_code()));
        let (t, lo, hi) = match tinyonnx_layout::narrow::Narrow::from_onnx(code) {
            Some(n) if n.is_int() => {
                let (lo, hi) = n.int_range();
                (
                    crate::ops::elementwise::cast::carrier(n),
                    lo as f64,
                    hi as f64,
                )
            }
            _ => match crate::ops::elementwise::cast::dtype_of_code(code) {
                Some(t @ DType::U8) => (t, 0.0, 255.0),
                Some(t @ DType::I8) => (t, -128.0, 127.0),
                Some(t @ DType::U16) => (t, 0.0, 65535.0),
                Some(t @ DType::I16) => (t, -32768.0, 32767.0),
                _ => {
                    self.error(format!(
                        "quantizes in blocks to {}; tinyonnx does that to 8- and 16-bit and 4- and 2-bit integers",
                        super::proto::type_name(code as i32)
                    ));
                    return true;
                }
            },
        };
        let ratio = self.step("Div", name, "ratio", vec![x, full_scale]);
        let mut q = self.step("Round", name, "rounded", vec![ratio]);
        if let Some(z) = zp_f32 {
            q = self.step("Add", name, "shifted", vec![q, z]);
        }
        let (min, max) = (
            self.scalar(name, "min", DType::F32, lo),
            self.scalar(name, "max", DType::F32, hi),
        );
        let q = self.step("Clip", name, "saturated", vec![q, min, max]);
        self.emit("Cast", vec![q], out.clone(), to(t), name.to_string());
        true
    }
}

impl Importer<'_> {
    /// `TopK` of u64 (no such kernel in tinyonnx or ONNX Runtime) as `TopK` of i64 on the
    /// values with their top bit flipped, which keeps their order; flipped back after.
    pub(super) fn top_k_u64(&mut self, node: &pb::NodeProto, name: &str) -> bool {
        let Some(x) = node.input.first() else {
            return false;
        };
        if self.dtype_of(x) != Some(DType::U64) {
            return false;
        }
        let to = |t: DType| vec![int_attr("to", i64::from(t.onnx_code()))];
        let top = format!("{name}::top_bit");
        self.define_const(&top, Vec::new(), Data::I64(vec![i64::MIN]));
        let xi = self.step_with("Cast", name, "x_i64", vec![x.clone()], to(DType::I64));
        let ordered = self.step("BitwiseXor", name, "ordered", vec![xi, top.clone()]);
        let mut inner = node.clone();
        inner.input[0] = ordered;
        let values = node.output.first().cloned().unwrap_or_default();
        let wide = format!("{name}::values_i64");
        if !values.is_empty() {
            inner.output[0] = wide.clone();
        }
        let schema = crate::ops::lookup("TopK").expect("registered");
        self.build(schema, &inner, name.to_string());
        if !values.is_empty() {
            let back = self.step("BitwiseXor", name, "values_flipped", vec![wide, top]);
            self.emit(
                "Cast",
                vec![back],
                values,
                to(DType::U64),
                format!("{name}::values"),
            );
        }
        true
    }

    /// A recurrent operator's `sequence_lens` known to be the whole sequence for every
    /// batch entry, which is the operator without it: the node without the input. `None`
    /// when the node has no such input (or lengths that differ, which the builder refuses).
    pub(super) fn full_sequence_lens(&self, node: &pb::NodeProto) -> Option<pb::NodeProto> {
        let lens = node.input.get(4).filter(|s| !s.is_empty())?;
        let Some(Val::Const(c)) = self.vals.get(lens) else {
            return None;
        };
        let x = self.dims_of(node.input.first()?)?;
        let layout = super::proto::int(node, "layout").unwrap_or(0);
        let steps = *x.get(usize::from(layout == 1))? as f64;
        if !c.data.to_f64().iter().all(|&l| l == steps) {
            return None;
        }
        let mut plain = node.clone();
        plain.input[4] = String::new();
        Some(plain)
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
