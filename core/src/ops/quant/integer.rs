//! The integer products: `MatMulInteger` (opset 10: int32 results) and `QLinearMatMul`
//! (opset 10: requantized results), on 8-bit operands. A is `[..., M, K]` (rank 2 or
//! more), B `[K, N]` or with A's batch dimensions; zero points per tensor, per row of A
//! and (MatMulInteger) per column of B.

use super::{check_scale, check_zero_point, or_empty};
use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub(super) const BYTES: &[DType] = &[DType::I8, DType::U8];

pub static MATMUL_INTEGER: OpSchema = OpSchema {
    op_type: "MatMulInteger",
    inputs: &[
        input("A"),
        any_input("B", false),
        any_input("a_zero_point", true),
        any_input("b_zero_point", true),
    ],
    dtypes: BYTES,
    since_opset: 10,
    infer: |cx| {
        let out = product_shape(cx, 0, 1)?;
        zero_point(cx, 2, 0, Side::Rows)?;
        zero_point(cx, 3, 1, Side::Columns)?;
        Ok(vec![TensorType {
            dtype: DType::I32,
            shape: out,
        }])
    },
    lower: |cx| {
        let (a, b, y) = (&cx.input(0).expr, &cx.input(1).expr, &cx.outputs[0].expr);
        let (za, zb) = (or_empty(cx, 2), or_empty(cx, 3));
        let p = product(cx, 0, 1);
        let kernels = kernels();
        quote! { #kernels::quant::matmul_integer(#a, #b, #y, #za, #zb, #p); }
    },
    macs: |cx| cx.outputs[0].numel() as u64 * *cx.input(0).shape.last().unwrap_or(&1) as u64,
    cases: |_| {
        cases(&[
            "input a: u8[3, 4]; input b: u8[4, 5]; output y = MatMulInteger(a, b); output z = MatMulInteger(a, b, Cast(Constant(value_int = 9), to = u8), Cast(Constant(value_ints = [1, 2, 3, 4, 200]), to = u8));",
            "input a: i8[2, 3, 4]; input b: i8[4, 2]; output y = MatMulInteger(a, b, Cast(Constant(value_int = 3), to = i8), Cast(Constant(value_int = -5), to = i8));",
            "input a: u8[2, 3, 4]; input b: i8[2, 4, 6]; output y = MatMulInteger(a, b);",
        ])
    },
    ..BASE
};

pub static QLINEAR_MATMUL: OpSchema = OpSchema {
    op_type: "QLinearMatMul",
    inputs: &[
        input("a"),
        any_input("a_scale", false),
        any_input("a_zero_point", false),
        any_input("b", false),
        any_input("b_scale", false),
        any_input("b_zero_point", false),
        any_input("y_scale", false),
        any_input("y_zero_point", false),
    ],
    dtypes: BYTES,
    since_opset: 10,
    infer: |cx| {
        let out = product_shape(cx, 0, 3)?;
        check_scale(cx, 1, None)?;
        check_zero_point(cx, 2, 1, cx.input(0).dtype)?;
        let n = out.0.last().cloned().unwrap_or(Dim::Fixed(1));
        check_scale(cx, 4, Some((cx.input(3).shape.rank() - 1, &n)))?;
        check_zero_point(cx, 5, 4, cx.input(3).dtype)?;
        check_scale(cx, 6, None)?;
        let yz = cx.input(7);
        if !BYTES.contains(&yz.dtype) || yz.shape.0.iter().any(|d| d.fixed() != Some(1)) {
            return Err(OpError::input(
                7,
                format!(
                    "QLinearMatMul y_zero_point must be one i8 or u8 value, got {} {}",
                    yz.dtype, yz.shape
                ),
            ));
        }
        Ok(vec![TensorType {
            dtype: yz.dtype,
            shape: out,
        }])
    },
    lower: |cx| {
        if let Some(call) = packed_product(cx, false) {
            return call;
        }
        let (a, b, y) = (&cx.input(0).expr, &cx.input(3).expr, &cx.outputs[0].expr);
        let (za, zb) = (&cx.input(2).expr, &cx.input(5).expr);
        let p = product(cx, 0, 3);
        let kernels = kernels();
        let multiplier = multiplier(cx, 1.0, 6);
        let zy = &cx.input(7).expr;
        quote! {
            #multiplier
            #kernels::quant::qlinear_matmul(#a, #b, #y, #za, #zb, &multiplier, (#zy)[0] as i32, #p);
        }
    },
    packs: |cx| {
        if packed_b(cx, false).is_some() {
            vec![3]
        } else {
            Vec::new()
        }
    },
    macs: |cx| cx.outputs[0].numel() as u64 * *cx.input(0).shape.last().unwrap_or(&1) as u64,
    cases: |_| {
        cases(&[
            "input a: u8[3, 4]; input b: u8[4, 5]; output y = QLinearMatMul(a, Constant(value_float = 0.05), Cast(Constant(value_int = 8), to = u8), b, Constant(value_float = 0.1), Cast(Constant(value_int = 3), to = u8), Constant(value_float = 0.2), Cast(Constant(value_int = 100), to = u8));",
            "input a: i8[2, 3, 4]; input b: i8[4, 3]; output y = QLinearMatMul(a, Constant(value_float = 0.5), Cast(Constant(value_int = 1), to = i8), b, Constant(value_floats = [0.25, 0.5, 0.125]), Cast(Constant(value_ints = [0, -1, 2]), to = i8), Constant(value_float = 0.75), Cast(Constant(value_int = -4), to = i8));",
            // QDQ products, which the plan runs as this operator (weights under 64 in
            // magnitude: ONNX Runtime's x86-64 kernel saturates larger pairs).
            "input x: i8[3, 8]; input u: u8[2, 8]; weight w: i8[8, 5] = [3, -7, 12, 40, -63, 5, 0, 9, -1, 22, 17, -30, 8, 60, -2, 1, 33, -45, 6, 14, -9, 27, 2, -18, 50, 11, -5, 38, -60, 4, 7, -26, 19, 0, -12, 44, 3, -8, 25, -33];
             let a = DequantizeLinear(x, Constant(value_float = 0.02), Cast(Constant(value_int = 3), to = i8));
             let b = DequantizeLinear(w, Constant(value_float = 0.01), Cast(Constant(value_int = 0), to = i8));
             output y = QuantizeLinear(MatMul(a, b), Constant(value_float = 0.05), Cast(Constant(value_int = -2), to = i8));
             let c = DequantizeLinear(w, Constant(value_floats = [0.01, 0.02, 0.005, 0.03, 0.01]), Cast(Constant(value_ints = [0, 0, 0, 0, 0]), to = i8), axis = 1);
             let d = DequantizeLinear(u, Constant(value_float = 0.04), Cast(Constant(value_int = 128), to = u8));
             output z = QuantizeLinear(MatMul(d, c), Constant(value_float = 0.1), Cast(Constant(value_int = 100), to = u8));",
            // A QDQ Gemm with an int32 bias (scale a_scale * b_scale): QGemm in the plan
            // and in ONNX Runtime.
            "input x: i8[2, 8]; weight w: i8[5, 8] = [3, -7, 12, 40, -63, 5, 0, 9, -1, 22, 17, -30, 8, 60, -2, 1, 33, -45, 6, 14, -9, 27, 2, -18, 50, 11, -5, 38, -60, 4, 7, -26, 19, 0, -12, 44, 3, -8, 25, -33]; weight c: i32[5] = [100, -2000, 30, 0, 777];
             let a = DequantizeLinear(x, Constant(value_float = 0.0625), Cast(Constant(value_int = 3), to = i8));
             let b = DequantizeLinear(w, Constant(value_float = 0.0078125), Cast(Constant(value_int = 0), to = i8));
             let bias = DequantizeLinear(c, Constant(value_float = 0.00048828125), Cast(Constant(value_int = 0), to = i32));
             output y = QuantizeLinear(Gemm(a, b, bias, transB = 1), Constant(value_float = 0.125), Cast(Constant(value_int = -2), to = i8));
             output z = QuantizeLinear(Gemm(a, b, transB = 1, alpha = 0.5), Constant(value_float = 0.0625), Cast(Constant(value_int = 5), to = i8));",
        ])
    },
    ..BASE
};

/// `com.microsoft.QGemm` (ONNX Runtime's quantized Gemm) as the plan forms it from a
/// QDQ Gemm (`plan::qdq`), outside the registry (a file that uses the operator itself is
/// not read yet): A `[M, K]`, a constant 8-bit B (`[K, N]`, or `[N, K]` with `transB`),
/// C the int32 sums added before requantization (optional), and the scales and zero
/// points of A, B and y; `y = saturate(round((sum + C) * alpha * a_scale * b_scale /
/// y_scale) + y_zero_point)`.
pub static QGEMM: OpSchema = OpSchema {
    op_type: "QGemm",
    inputs: &[
        input("A"),
        any_input("a_scale", false),
        any_input("a_zero_point", false),
        any_input("B", false),
        any_input("b_scale", false),
        any_input("b_zero_point", false),
        any_input("C", true),
        any_input("y_scale", false),
        any_input("y_zero_point", false),
    ],
    attrs: &[
        attr("alpha", AttrKind::Float, AttrDefault::Float(1.0)),
        attr("transB", AttrKind::Int, AttrDefault::Int(0)),
    ],
    dtypes: BYTES,
    since_opset: 1,
    infer: |_| {
        Err(OpError::input(
            0,
            "QGemm of the com.microsoft domain is not read from files yet (the plan forms it from QDQ Gemms)",
        ))
    },
    lower: |cx| {
        packed_product(cx, true).unwrap_or_else(
            || quote!(::core::compile_error!("tinyonnx bug: a QGemm without a constant 8-bit B");),
        )
    },
    packs: |_| vec![3, 6],
    macs: |cx| cx.outputs[0].numel() as u64 * *cx.input(0).shape.last().unwrap_or(&1) as u64,
    ..BASE
};

/// The per-column multipliers as ONNX Runtime forms them: `alpha * a_scale * b_scale /
/// y_scale`, left to right in f32 (`alpha` 1 for QLinearMatMul, whose `a_scale * b_scale /
/// y_scale` that leaves unchanged); `y_scale` is input `sy`. Declares `multiplier`, a
/// static when the scales are constants (the same f32 operations, done by the compiler).
pub(super) fn multiplier(cx: &LowerCtx, alpha: f32, sy: usize) -> TokenStream {
    if let (Some(a), Some(b), Some(y)) = (cx.const_f64(1), cx.const_f64(4), cx.const_f64(sy))
        && let (Some(&a), Some(&y)) = (a.first(), y.first())
    {
        let bits = b
            .iter()
            .map(|&b| (alpha * a as f32 * b as f32 / y as f32).to_bits());
        let nb = b.len();
        return quote! {
            static __QMUL: [f32; #nb] = [#(f32::from_bits(#bits)),*];
            let multiplier: &[f32] = &__QMUL;
        };
    }
    let (sa, sb, sy) = (&cx.input(1).expr, &cx.input(4).expr, &cx.input(sy).expr);
    let nb: usize = cx.input(4).shape.iter().product();
    quote! {
        let mut multiplier = [0.0f32; #nb];
        for (j, m) in multiplier.iter_mut().enumerate() {
            *m = #alpha * (#sa)[0] * (#sb)[j] / (#sy)[0];
        }
    }
}

/// What a packed product adds per column, folded by the compiler when the zero points
/// (inputs `za` and `zb`; an absent one is 0) and the bias (input `bias`, if any) are
/// constants: declares the static `__QOFF` (`bias - a_zp * colsum + k * a_zp * b_zp`,
/// wrapping as the kernel does) and returns the kernel's `offset` and `b_zp` fields
/// (`b_zp` empty when every zero point of B is 0, so that no row sum is taken).
pub(super) fn folded_offsets(
    cx: &LowerCtx,
    colsum: &[i32],
    k: usize,
    [za, zb, bias]: [Option<usize>; 3],
) -> (TokenStream, TokenStream, TokenStream) {
    // Known values: an absent input as empty (0), a constant's values, else None.
    let value = |i: Option<usize>| match i.and_then(|i| cx.inputs.get(i).cloned().flatten()) {
        None => Some(Vec::new()),
        Some(_) => i.and_then(|i| cx.const_f64(i)),
    };
    let zb_values = value(zb);
    let b_zp = match (
        &zb_values,
        zb.and_then(|i| cx.inputs.get(i).cloned().flatten()),
    ) {
        (Some(z), _) if z.iter().all(|&v| v == 0.0) => quote!(&[]),
        (_, Some(operand)) => operand.expr,
        (_, None) => quote!(&[]),
    };
    let (Some(za), Some(zb), Some(bias)) = (value(za), zb_values, value(bias)) else {
        return (quote!(), quote!(&[]), b_zp);
    };
    let za = za.first().copied().unwrap_or(0.0) as i32;
    let offsets = colsum.iter().enumerate().map(|(j, &cs)| {
        let zb = match zb.len() {
            0 => 0.0,
            1 => zb[0],
            _ => zb.get(j).copied().unwrap_or(0.0),
        } as i32;
        let b = bias.get(j).copied().unwrap_or(0.0) as i32;
        (k as i32)
            .wrapping_mul(za)
            .wrapping_mul(zb)
            .wrapping_sub(za.wrapping_mul(cs))
            .wrapping_add(b)
    });
    let n = colsum.len();
    (
        quote!(static __QOFF: [i32; #n] = [#(#offsets),*];),
        quote!(&__QOFF),
        b_zp,
    )
}

/// The call of the packed product of a QLinearMatMul or (`qgemm`) a QGemm on its
/// constant B, when B is one.
fn packed_product(cx: &LowerCtx, qgemm: bool) -> Option<TokenStream> {
    let trans_b = qgemm && cx.attrs.int("transB") != 0;
    let (packed, statics) = packed_b(cx, trans_b)?;
    let pairs = statics.pairs;
    let (a, y) = (&cx.input(0).expr, &cx.outputs[0].expr);
    let za = &cx.input(2).expr;
    let (sy, zy) = if qgemm { (7, 8) } else { (6, 7) };
    let zy = &cx.input(zy).expr;
    let alpha = if qgemm { cx.attrs.float("alpha") } else { 1.0 };
    let multiplier = multiplier(cx, alpha, sy);
    let shape = &cx.input(3).shape;
    let (k, n) = if trans_b {
        (shape[1], shape[0])
    } else {
        (shape[0], shape[1])
    };
    let rows = cx.input(0).numel() / k.max(1);
    let bias = match cx.input_consts.get(6).copied().flatten().filter(|_| qgemm) {
        Some(c) => {
            let c: Vec<i32> = c.to_f64().iter().map(|&v| v as i32).collect();
            let len = c.len();
            quote! {
                static __QBIAS: [i32; #len] = [#(#c),*];
                let bias: &[i32] = &__QBIAS;
            }
        }
        None => quote!(let bias: &[i32] = &[];),
    };
    let (offsets, offset, b_zp) = folded_offsets(
        cx,
        &statics.colsum,
        k,
        [Some(2), Some(5), qgemm.then_some(6)],
    );
    let kernels = kernels();
    Some(quote! {
        #packed
        #multiplier
        #bias
        #offsets
        let product = #kernels::quant::Q8Product {
            rows: #rows,
            k: #k,
            n: #n,
            packed: &__BQ8.0,
            colsum: &__COLSUM,
            bias,
            offset: #offset,
            a_zp: (#za)[0] as i32,
            b_zp: #b_zp,
            multiplier: &multiplier,
            y_zp: (#zy)[0] as i32,
            pairs: #pairs,
        };
        #kernels::quant::qlinear_matmul_q8(#a, &product, #y);
    })
}

/// A constant 2-D B (input 3; `[N, K]` with `trans_b`) in the order of
/// `tinyonnx_layout::q8` (statics `__BQ8`, aligned for the DSP routine's word loads, and
/// `__COLSUM`, the sum of each column), when B is constant and shared by every product.
fn packed_b(cx: &LowerCtx, trans_b: bool) -> Option<(TokenStream, Q8Statics)> {
    let b = cx.input(3);
    let values = cx.const_f64(3)?;
    let [k, n] = b.shape[..] else {
        return None;
    };
    let (k, n) = if trans_b { (n, k) } else { (k, n) };
    let pairs = BYTES.contains(&cx.input(0).dtype);
    q8_statics(
        b.dtype,
        &values,
        [k, n, 1],
        (false, pairs),
        |_, row, col| {
            if trans_b {
                col * k + row
            } else {
                row * n + col
            }
        },
    )
}

/// The Rust type of 8-bit values of `dtype` (i8 unless u8).
pub(super) fn byte_type(dtype: DType) -> TokenStream {
    match dtype {
        DType::U8 => quote!(u8),
        _ => quote!(i8),
    }
}

/// `groups` constant 8-bit operands `[k, n]` in the order of `tinyonnx_layout::q8`
/// (`group_index`; `depthwise` for the depthwise 3x3 routine's), one after another, as
/// the static `__BQ8` (aligned for the DSP routine's word loads; `pairs`: the
/// activations are one-byte values, so the DSP cores take signed weights of whole
/// groups in `q8::pair_order`), and the sum of each of their columns as `__COLSUM`;
/// element `(row, col)` of group `g` is `values[at(g, row, col)]`. Returns the
/// declarations, the sums and the order; `None` unless the element type is i8 or u8.
pub(super) fn q8_statics(
    dtype: DType,
    values: &[f64],
    [k, n, groups]: [usize; 3],
    (depthwise, pairs): (bool, bool),
    at: impl Fn(usize, usize, usize) -> usize,
) -> Option<(TokenStream, Q8Statics)> {
    if !BYTES.contains(&dtype) {
        return None;
    }
    let plen = tinyonnx_layout::q8::group_len(k, n, depthwise);
    let mut packed = vec![0i32; groups * plen];
    let mut colsum = vec![0i32; groups * n];
    for g in 0..groups {
        for row in 0..k {
            for col in 0..n {
                let v = values.get(at(g, row, col)).copied().unwrap_or(0.0) as i32;
                packed[g * plen + tinyonnx_layout::q8::group_index(k, row, col, depthwise)] = v;
                colsum[g * n + col] += v;
            }
        }
    }
    let lits = packed.iter().map(|&v| {
        if dtype == DType::U8 {
            let v = v as u8;
            quote!(#v)
        } else {
            let v = v as i8;
            quote!(#v)
        }
    });
    let (elem, len, sums) = (byte_type(dtype), groups * plen, groups * n);
    // Signed weights of whole groups over one-byte activations: also in the DSP cores'
    // pair order (where every pair has its form), which the runtime picks for its target.
    let paired = (dtype == DType::I8 && !depthwise && pairs && tinyonnx_layout::q8::pairs(k))
        .then(|| packed.iter().map(|&v| v as i8).collect::<Vec<_>>())
        .and_then(|mut p| tinyonnx_layout::q8::pair_order(&mut p).then_some(p));
    let pairs = paired.is_some();
    let bytes = match paired {
        Some(paired) => quote!(::tinyonnx::__q8_order!([#(#lits),*], [#(#paired),*])),
        None => quote!([#(#lits),*]),
    };
    let decls = quote! {
        #[repr(C, align(8))]
        struct __Q8([#elem; #len]);
        static __BQ8: __Q8 = __Q8(#bytes);
        static __COLSUM: [i32; #sums] = [#(#colsum),*];
        const _: () = assert!(
            #len == #groups * ::tinyonnx::layout::q8::group_len(#k, #n, #depthwise)
        );
    };
    Some((decls, Q8Statics { colsum, pairs }))
}

/// What [`q8_statics`] tells the kernel's call besides its declarations.
pub(super) struct Q8Statics {
    /// The sum of each column.
    pub colsum: Vec<i32>,
    /// The DSP cores take the weights in `q8::pair_order` (the `pairs` field of the
    /// kernel's `Q8Product`).
    pub pairs: bool,
}

/// The output shape of `input(a) x input(b)`: A `[..., M, K]`, B `[K, N]` or
/// `[..., K, N]` with A's batch dimensions.
fn product_shape(cx: &InferCtx, a: usize, b: usize) -> Result<Shape, OpError> {
    let op = cx.op.op_type;
    let (x, w) = (cx.input(a), cx.input(b));
    if !BYTES.contains(&w.dtype) {
        return Err(OpError::input(
            b,
            format!(
                "{op} takes {} as i8 or u8, got {}",
                cx.op.inputs[b].name, w.dtype
            ),
        ));
    }
    let (xr, wr) = (x.shape.rank(), w.shape.rank());
    if xr < 2 || !(wr == 2 || wr == xr) {
        return Err(OpError::input(
            b,
            format!(
                "{op} takes A [..., M, K] and B [K, N] or [..., K, N] with A's batch dimensions, got {} and {}",
                x.shape, w.shape
            ),
        ));
    }
    if x.shape.0[xr - 1] != w.shape.0[wr - 2]
        || (wr == xr && x.shape.0[..xr - 2] != w.shape.0[..wr - 2])
    {
        return Err(OpError::input(
            b,
            format!("{op} cannot multiply {} by {}", x.shape, w.shape),
        ));
    }
    let mut out = x.shape.0[..xr - 1].to_vec();
    out.push(w.shape.0[wr - 1].clone());
    Ok(Shape(out))
}

enum Side {
    Rows,
    Columns,
}

/// MatMulInteger's zero point `i` of operand `of`: its dtype, one value or one per row of
/// A / column of B.
fn zero_point(cx: &InferCtx, i: usize, of: usize, side: Side) -> Result<(), OpError> {
    let Some(z) = cx.opt_input(i) else {
        return Ok(());
    };
    let t = cx.input(of);
    let name = cx.op.inputs[i].name;
    if z.dtype != t.dtype {
        return Err(OpError::input(
            i,
            format!("MatMulInteger {name} must be {}, got {}", t.dtype, z.dtype),
        ));
    }
    let r = t.shape.rank();
    let len = match side {
        Side::Rows => &t.shape.0[r - 2],
        Side::Columns => &t.shape.0[r - 1],
    };
    let one = z.shape.single();
    // ONNX also allows one per row of A; ONNX Runtime does not, so there is no oracle.
    if one || (matches!(side, Side::Columns) && z.shape.rank() == 1 && &z.shape.0[0] == len) {
        return Ok(());
    }
    let what = match side {
        Side::Rows => "one value".to_string(),
        Side::Columns => format!("one value or {len} (one per column of B)"),
    };
    Err(OpError::input(
        i,
        format!("MatMulInteger {name} must hold {what}, got {}", z.shape),
    ))
}

/// The kernel's `Product` of a lowered node.
fn product(cx: &LowerCtx, a: usize, b: usize) -> TokenStream {
    let (x, w) = (&cx.input(a).shape, &cx.input(b).shape);
    let (xr, wr) = (x.len(), w.len());
    let (m, k, n) = (x[xr - 2], x[xr - 1], w[wr - 1]);
    let batch: usize = x[..xr - 2].iter().product();
    let b_batched = wr == xr && wr > 2;
    let kernels = kernels();
    quote! {
        #kernels::quant::Product { batch: #batch, m: #m, k: #k, n: #n, b_batched: #b_batched }
    }
}
