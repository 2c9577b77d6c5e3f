//! `Col2Im` (opset 18): the columns of an im2col, `[N, C * prod(block_shape), L]`,
//! summed back into `[N, C, image_shape...]` (strides, dilations, pads as a
//! convolution's).

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static COL2IM: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "opset = 18; input x: f32[1, 5, 5]; input z: f32[2, 4, 15]; output a = Col2Im(x, [5, 5], [1, 5]); output b = Col2Im(z, [5, 5], [1, 2], pads = [0, 1, 0, 1], strides = [1, 2]);",
            "opset = 18; input x: f32[1, 4, 5]; input z: f32[1, 10, 12]; input w: f32[2, 9, 4]; output a = Col2Im(x, [6, 6], [2, 2], dilations = [1, 5]); output b = Col2Im(z, [3, 4, 5], [1, 1, 5]); output c = Col2Im(w, [5, 5], [3, 3], strides = [2, 2]);",
        ])
    },
    op_type: "Col2Im",
    inputs: &[
        input("input"),
        i64_const("image_shape", false),
        i64_const("block_shape", false),
    ],
    attrs: &[
        attr("dilations", AttrKind::Ints, AttrDefault::Absent),
        attr("pads", AttrKind::Ints, AttrDefault::Absent),
        attr("strides", AttrKind::Ints, AttrDefault::Absent),
    ],
    since_opset: 18,
    infer: |cx| {
        let x = cx.input(0);
        let (c, _) = geometry(&x.shape, cx.attrs, cx.const_i64(1), cx.const_i64(2))?;
        let mut out = vec![x.shape.0[0].clone(), Dim::Fixed(c)];
        out.extend(
            cx.const_i64(1)
                .unwrap_or(&[])
                .iter()
                .map(|&d| Dim::Fixed(d as usize)),
        );
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape(out),
        }])
    },
    lower: |cx| {
        let x = cx.input(0);
        let (c, axes) = geometry(
            &Shape::fixed(&x.shape),
            cx.attrs,
            cx.const_i64(1),
            cx.const_i64(2),
        )
        .expect("checked during inference");
        let nc = x.shape[0] * c;
        let g = axes.iter().map(|a| quote!([#(#a),*]));
        let (xe, y, kernels) = (&x.expr, &cx.outputs[0].expr, kernels());
        quote! { #kernels::copy::col2im(#xe, #y, #nc, &[#(#g),*]); }
    },
    macs: |cx| cx.input(0).numel() as u64,
    ..BASE
};

/// The channel count and, per spatial axis, `[image, block, grid, stride, dilation,
/// pad_begin]`.
fn geometry(
    x: &Shape,
    attrs: &Attrs,
    image: Option<&[i64]>,
    block: Option<&[i64]>,
) -> Result<(usize, Vec<[usize; 6]>), OpError> {
    const OP: &str = "Col2Im";
    let (Some(image), Some(block)) = (image, block) else {
        return Err(OpError::input(
            1,
            format!("{OP} needs image_shape and block_shape known at compile time"),
        ));
    };
    let r = image.len();
    let positive = |v: &[i64]| {
        v.iter()
            .all(|&d| d >= 1 && d <= crate::types::MAX_DIM as i64)
    };
    if r == 0 || block.len() != r || !positive(image) || !positive(block) {
        return Err(OpError::input(
            2,
            format!(
                "{OP} takes positive image_shape and block_shape of one length, got {image:?} and {block:?}"
            ),
        ));
    }
    let list = |name: &'static str, len: usize, default: i64| -> Result<Vec<i64>, OpError> {
        match attrs.ints(name) {
            None => Ok(vec![default; len]),
            Some(v)
                if v.len() == len
                    && v.iter()
                        .all(|&d| d >= default && d <= crate::types::MAX_DIM as i64) =>
            {
                Ok(v.to_vec())
            }
            Some(v) => Err(OpError::attr(
                name,
                format!("{OP} {name} needs {len} values of at least {default}, got {v:?}"),
            )),
        }
    };
    let (dil, pads, strides) = (
        list("dilations", r, 1)?,
        list("pads", 2 * r, 0)?,
        list("strides", r, 1)?,
    );
    let dims: Option<Vec<usize>> = x.0.iter().map(Dim::fixed).collect();
    let Some([_, cb, l]) = dims.as_deref().and_then(|d| <[usize; 3]>::try_from(d).ok()) else {
        return Err(OpError::input(
            0,
            format!("{OP} takes a fixed [N, C * prod(block_shape), L], got {x}"),
        ));
    };
    let blocks: usize = block.iter().map(|&b| b as usize).product();
    if cb % blocks != 0 {
        return Err(OpError::input(
            0,
            format!("{OP} input's {cb} rows are not a multiple of the block's {blocks} values"),
        ));
    }
    let mut axes = Vec::new();
    for a in 0..r {
        let span = dil[a] * (block[a] - 1) + 1;
        let room = image[a] + pads[a] + pads[a + r] - span;
        if room < 0 {
            return Err(OpError::input(
                2,
                format!("{OP} block {block:?} does not fit the padded image {image:?}"),
            ));
        }
        let grid = room / strides[a] + 1;
        axes.push([image[a], block[a], grid, strides[a], dil[a], pads[a]].map(|v| v as usize));
    }
    let grid: usize = axes.iter().map(|a| a[2]).product();
    if grid != l {
        return Err(OpError::input(
            0,
            format!("{OP} input has {l} columns; the blocks fit {grid} times into the image"),
        ));
    }
    Ok((cb / blocks, axes))
}
