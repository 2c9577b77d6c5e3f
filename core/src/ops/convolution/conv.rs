//! `Conv` (opset 11 semantics, unchanged through 21): 1-D and 2-D, with strides, pads,
//! dilations, groups (depthwise included) and auto_pad. Also the window geometry shared
//! with the pooling operators.

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Dim, MAX_DIM, Shape, TensorType};

/// The attributes of `Conv`, which the integer convolutions share.
pub const CONV_ATTRS: &[AttrSpec] = &[
    attr("auto_pad", AttrKind::Str, AttrDefault::Str("NOTSET")),
    attr("dilations", AttrKind::Ints, AttrDefault::Absent),
    attr("group", AttrKind::Int, AttrDefault::Int(1)),
    attr("kernel_shape", AttrKind::Ints, AttrDefault::Absent),
    attr("pads", AttrKind::Ints, AttrDefault::Absent),
    attr("strides", AttrKind::Ints, AttrDefault::Absent),
];

/// Distinct convolutions of a family from which they share one copy on the cores
/// without an FPU: with two, the digits CNN's pair took 1.0 KB more flash on the
/// Cortex-M3 (0.9 KB on the riscv32) as one im2col copy, and SugarZoo's direct pair
/// 108 B less (62 B more); with ConvZoo's three im2col and five direct layers, 4.6 KB
/// less (3.2 KB).
const SIZED_COPIES: usize = 3;

pub static CONV: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input x: f32[1, 3, 7, 8]; weight w: f32[4, 3, 3, 3] = he_normal(seed = 1); weight b: f32[4] = uniform(low = -0.5, high = 0.5, seed = 2); output y = Conv(x, w, b); output z = Relu(Conv(x, w, b, strides = [2, 2], pads = [1, 1, 1, 1]));",
            "input x: f32[2, 4, 6, 6]; weight w: f32[4, 1, 3, 3] = he_normal(seed = 3); output y = Conv(x, w, group = 4, auto_pad = \"SAME_UPPER\"); output z = Conv(x, w, group = 4, strides = [2, 2], auto_pad = \"SAME_LOWER\");",
            "input x: f32[1, 4, 5, 5]; weight w: f32[6, 2, 2, 2] = he_normal(seed = 4); output y = Conv(x, w, group = 2, dilations = [2, 1], pads = [0, 1, 1, 0]);",
            "input x: f32[1, 8, 4, 4]; weight w: f32[16, 8, 1, 1] = he_normal(seed = 5); output y = Conv(x, w);",
            "input x: f32[2, 3, 12]; weight w: f32[5, 3, 4] = he_normal(seed = 6); output y = Conv(x, w, strides = [3], pads = [2, 1], dilations = [2]);",
            "input x: f32[1, 2, 5, 5]; input w: f32[3, 2, 2, 2]; output y = Conv(x, w, pads = [1, 1, 1, 1]);",
            // 3x3 stride 1 with eight or more input channels: the Winograd kernel, with
            // asymmetric pads, odd output sizes and two images.
            "input x: f32[2, 8, 9, 11]; weight w: f32[6, 8, 3, 3] = he_normal(seed = 7); weight b: f32[6] = uniform(low = -0.5, high = 0.5, seed = 8); output y = Conv(x, w, b, pads = [1, 0, 2, 1]); output z = Relu(Conv(x, w, b));",
            // Winograd in passes of one element row: the pooled input leaves room for a
            // quarter of the full scratch only (`winograd = auto`).
            "input x: f32[1, 4, 32, 32]; weight w1: f32[16, 4, 1, 1] = he_normal(seed = 9); weight w3: f32[16, 16, 3, 3] = he_normal(seed = 10); output y = Conv(MaxPool(Conv(x, w1), kernel_shape = [2, 2], strides = [2, 2]), w3, pads = [1, 1, 1, 1]);",
        ])
    },
    op_type: "Conv",
    inputs: &[input("X"), input("W"), optional("B")],
    attrs: CONV_ATTRS,
    infer,
    lower,
    macs,
    scratch: |cx| {
        let Some(s) = ConvShape::of(cx) else {
            return 0;
        };
        let path = s.path(cx.winograd);
        // The AVX-512 direct kernel reuses this scratch where its ring fits
        // (`tinyonnx_layout::direct::fits`); no target plans more for it.
        let im2col = path.im2col.map_or(0, |pb| patch_len(s.k(), pb));
        if let Some(tb) = path.winograd {
            let winograd = winograd_scratch(s.c, s.m, s.axes, tb, cx.winograd.into());
            // Passes of fewer than four element rows share the scratch with the im2col
            // kernel, which runs instead where the CPU makes it faster (see `lower`).
            return if cx.winograd < 4 {
                winograd.max(im2col)
            } else {
                winograd
            };
        }
        im2col
    },
    packs: |cx| {
        let known = cx.input_consts.get(1).copied().flatten().is_some();
        let path = ConvShape::lowered(cx, known).path(cx.winograd);
        if path.im2col.is_some() || path.winograd.is_some() {
            vec![1]
        } else {
            Vec::new()
        }
    },
    sized_kernel: |cx| {
        let s = ConvShape::of(cx)?;
        match s.path(cx.winograd) {
            Path {
                winograd: Some(_), ..
            } => None,
            // Shares its gathering on the microcontrollers already: the rest of its copy
            // (a few hundred bytes) is shared only where the model asks for flash.
            Path {
                im2col: Some(_), ..
            } if s.m / s.g >= tinyonnx_layout::SHARED_CHANNELS => Some(SizedFamily {
                name: "im2col-wide",
                copies: usize::MAX,
            }),
            Path {
                im2col: Some(_), ..
            } => Some(SizedFamily {
                name: "im2col",
                copies: SIZED_COPIES,
            }),
            Path { im2col: None, .. } => Some(SizedFamily {
                name: "direct",
                copies: SIZED_COPIES,
            }),
        }
    },
    // `[16][M][C]` f32 for the declared `[M][C][3][3]`: 7 more values every 9.
    transformed: |cx| {
        ConvShape::of(cx)
            .filter(|s| s.path(cx.winograd).winograd.is_some())
            .map_or(0, |s| s.m * s.c * (16 - 9) * 4)
    },
    fusion: Fusion {
        relu: &[DType::F32],
        row_bias: false,
        batch_norm: true,
    },
    ..BASE
};

/// What decides a convolution's kernels: whether its weights are known at compile time
/// (the macro packs or transforms them), its channels, groups and two spatial axes.
#[derive(Clone, Copy)]
struct ConvShape {
    known: bool,
    c: usize,
    m: usize,
    g: usize,
    axes: [Axis; 2],
}

/// The kernels a convolution runs on, chosen once from its [`ConvShape`] and the plan's
/// Winograd rows: its scratch, packing, sharing, transformed weights and lowering all
/// read this one choice.
#[derive(Clone, Copy)]
struct Path {
    /// Tiles per block where it runs as Winograd ([`winograd_tiles`]).
    winograd: Option<usize>,
    /// Output positions per tile where it runs as im2col products ([`tile_positions`];
    /// beside Winograd passes, the kernel a CPU may pick instead); else the direct kernel.
    im2col: Option<usize>,
}

impl ConvShape {
    /// From what the planner's rules see of a node; `None` before its shapes are known.
    fn of(cx: &ScratchCtx) -> Option<ConvShape> {
        let (Some(x), Some(w)) = (cx.inputs[0].as_ref(), cx.inputs[1].as_ref()) else {
            return None;
        };
        let axes = geometry("Conv", cx.attrs, &x[2..], &w[2..], false).ok()?;
        Some(ConvShape {
            known: cx.consts[1],
            c: x[1],
            m: w[0],
            g: cx.attrs.int("group") as usize,
            axes: as_2d(&axes),
        })
    }

    /// From what the lowering sees, the weights `known` as it finds them.
    fn lowered(cx: &LowerCtx, known: bool) -> ConvShape {
        let (_, c, m, g, axes) = plan(cx);
        ConvShape {
            known,
            c,
            m,
            g,
            axes,
        }
    }

    /// Values of one patch: a group's channels times the kernel window.
    fn k(&self) -> usize {
        let [h, w] = self.axes;
        self.c / self.g * h.kernel * w.kernel
    }

    fn path(&self, winograd_rows: u8) -> Path {
        let [h, w] = self.axes;
        Path {
            winograd: winograd_tiles(winograd_rows, self.known, self.c, self.m, self.g, self.axes),
            im2col: tile_positions(self.known, self.m / self.g, self.k(), h.output * w.output),
        }
    }
}

/// Patch elements of scratch the im2col path aims at (a tile of positions times the
/// patch length); a tile has at least 32 positions.
const PATCH_BUDGET: usize = 4096;

/// Output positions per im2col tile when a convolution runs as matrix products: its
/// weights are known at compile time (they are the left-hand side, in flash) and each
/// group has at least four output channels (a depthwise convolution would run one
/// row at a time; it keeps the direct kernel). `None` for the direct kernel.
fn tile_positions(
    weights_known: bool,
    per_group: usize,
    k: usize,
    positions: usize,
) -> Option<usize> {
    if !weights_known || per_group < 4 || positions == 0 {
        return None;
    }
    // Whole sets of four panels (the AVX-512 host tile is four panels wide), rounded
    // up: at least one set.
    let tile = (PATCH_BUDGET / k.max(1)).max(1).div_ceil(4 * PANEL) * (4 * PANEL);
    Some(tile.min(positions))
}

/// Scratch values of a tile of `pb` positions (`tinyonnx_layout::patch_len`).
fn patch_len(k: usize, pb: usize) -> usize {
    tinyonnx_layout::patch_len(k, pb)
}

/// Scratch values the Winograd path aims at (its transformed inputs and products for a
/// block of tiles); a block has at least sixteen tiles.
const WINOGRAD_BUDGET: usize = 131072;

/// Tiles (2x2 outputs) per block when a convolution runs as Winograd F(2x2, 3x3)
/// (`kernels::winograd`) in passes of `rows` element rows: the planner's choice
/// (`rows` > 0, see `ir::Node::winograd`), the weights known at compile time (the macro
/// transforms them), a 3x3 kernel at stride 1 and dilation 1, one group, and at least
/// eight input and four output channels (with fewer, the transforms cost more than the
/// products save). Blocks split the tiles evenly, in whole pairs of panels. `None`
/// otherwise.
fn winograd_tiles(
    rows: u8,
    known: bool,
    c: usize,
    m: usize,
    g: usize,
    [h, w]: [Axis; 2],
) -> Option<usize> {
    let unit = |a: Axis| a.kernel == 3 && a.stride == 1 && a.dilation == 1;
    if rows == 0 || !known || g != 1 || c < 8 || m < 4 || !unit(h) || !unit(w) {
        return None;
    }
    let tiles = h.output.div_ceil(2) * w.output.div_ceil(2);
    let elements = 4 * usize::from(rows);
    let most = (WINOGRAD_BUDGET / (elements * (c + m)) / (2 * PANEL)).max(1) * (2 * PANEL);
    let blocks = tiles.div_ceil(most);
    Some(tiles.div_ceil(blocks).div_ceil(2 * PANEL) * (2 * PANEL)).map(|tb| tb.min(tiles))
}

/// Scratch values of the Winograd path in passes of `rows` element rows
/// (`tinyonnx_layout::winograd::scratch_len`).
fn winograd_scratch(c: usize, m: usize, [h, w]: [Axis; 2], tb: usize, rows: usize) -> usize {
    tinyonnx_layout::winograd::scratch_len(c, m, h.output, w.output, tb, rows)
}

/// `U = G g Gt` of every `[M][C][3][3]` kernel, in the `[16][M][C]` order the Winograd
/// kernel reads (element `e = 4 a + b` of the 4x4 result), computed in f64:
/// `G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]`.
fn winograd_kernel(w: &[f32], m: usize, c: usize) -> Vec<f32> {
    const G: [[f64; 3]; 4] = [
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.5],
        [0.5, -0.5, 0.5],
        [0.0, 0.0, 1.0],
    ];
    let mut u = vec![0.0; 16 * m * c];
    for (mc, g) in w.chunks_exact(9).take(m * c).enumerate() {
        for e in 0..16 {
            let (a, b) = (e / 4, e % 4);
            let mut s = 0.0;
            for i in 0..3 {
                for j in 0..3 {
                    s += G[a][i] * f64::from(g[3 * i + j]) * G[b][j];
                }
            }
            u[e * m * c + mc] = s as f32;
        }
    }
    u
}

/// The resolved window of one spatial axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    pub input: usize,
    pub kernel: usize,
    pub stride: usize,
    pub dilation: usize,
    pub pad_begin: usize,
    pub pad_end: usize,
    pub output: usize,
}

/// Resolves strides, dilations, pads and auto_pad of a sliding-window operator and
/// computes the output size of each spatial axis. `ceil_mode` is the pooling flag.
pub fn geometry(
    op: &str,
    attrs: &Attrs,
    input: &[usize],
    kernel: &[usize],
    ceil_mode: bool,
) -> Result<Vec<Axis>, OpError> {
    let k = input.len();
    let list = |name: &'static str, default: i64, len: usize| -> Result<Vec<usize>, OpError> {
        match attrs.ints(name) {
            None => Ok(vec![default as usize; len]),
            Some(v) if v.len() != len => Err(OpError::attr(
                name,
                format!(
                    "{op} {name} needs {len} values for {k} spatial axes, got {}",
                    v.len()
                ),
            )),
            Some(v)
                if v.iter()
                    .any(|&x| x < 0 || (x == 0 && name != "pads") || x as u64 > MAX_DIM as u64) =>
            {
                Err(OpError::attr(
                    name,
                    format!(
                        "{op} {name} must be {} and at most {MAX_DIM}, got {v:?}",
                        if name == "pads" {
                            "non-negative"
                        } else {
                            "positive"
                        }
                    ),
                ))
            }
            Some(v) => Ok(v.iter().map(|&x| x as usize).collect()),
        }
    };
    let strides = list("strides", 1, k)?;
    let dilations = list("dilations", 1, k)?;
    let auto_pad = attrs.string("auto_pad").unwrap_or("NOTSET");
    if auto_pad != "NOTSET" && attrs.is_explicit("pads") {
        return Err(OpError::attr(
            "pads",
            format!(
                "{op} pads cannot be combined with auto_pad = \"{auto_pad}\": remove one of them"
            ),
        ));
    }
    let pads = list("pads", 0, 2 * k)?;
    let mut axes = Vec::with_capacity(k);
    for i in 0..k {
        let span = (kernel[i] - 1) * dilations[i] + 1;
        let (pb, pe, out) = match auto_pad {
            "NOTSET" => {
                let padded = input[i] + pads[i] + pads[i + k];
                if padded < span {
                    return Err(OpError::op(format!(
                        "{op}: the window ({span} wide) is larger than the padded input ({padded}) on spatial axis {i}"
                    )));
                }
                let mut out = if ceil_mode {
                    (padded - span).div_ceil(strides[i]) + 1
                } else {
                    (padded - span) / strides[i] + 1
                };
                // A last window that would start in the end padding is dropped.
                if ceil_mode && (out - 1) * strides[i] >= input[i] + pads[i] {
                    out -= 1;
                }
                (pads[i], pads[i + k], out)
            }
            "VALID" => {
                if input[i] < span {
                    return Err(OpError::op(format!(
                        "{op}: the window ({span} wide) is larger than the input ({}) on spatial axis {i}",
                        input[i]
                    )));
                }
                (0, 0, (input[i] - span) / strides[i] + 1)
            }
            "SAME_UPPER" | "SAME_LOWER" => {
                let out = input[i].div_ceil(strides[i]);
                let total = ((out - 1) * strides[i] + span).saturating_sub(input[i]);
                let small = total / 2;
                if auto_pad == "SAME_UPPER" {
                    (small, total - small, out)
                } else {
                    (total - small, small, out)
                }
            }
            other => {
                return Err(OpError::attr(
                    "auto_pad",
                    format!(
                        "{op} auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got \"{other}\""
                    ),
                ));
            }
        };
        axes.push(Axis {
            input: input[i],
            kernel: kernel[i],
            stride: strides[i],
            dilation: dilations[i],
            pad_begin: pb,
            pad_end: pe,
            output: out,
        });
    }
    Ok(axes)
}

/// Fixed spatial dimensions of `x` (from axis 2), or an error naming the input.
pub fn spatial(op: &str, x: &TensorType, input: usize) -> Result<Vec<usize>, OpError> {
    spatial_upto(op, x, input, 2)
}

/// [`spatial`] for operators with kernels of up to `axes` spatial axes (2 or 3).
pub fn spatial_upto(
    op: &str,
    x: &TensorType,
    input: usize,
    axes: usize,
) -> Result<Vec<usize>, OpError> {
    let rank = x.shape.rank();
    if !(3..=2 + axes).contains(&rank) {
        let three = if axes == 3 {
            " or 5 [N, C, D, H, W]"
        } else {
            ""
        };
        let or = if axes == 3 { "," } else { " or" };
        return Err(OpError::input(
            input,
            format!(
                "{op} expects an input of rank 3 [N, C, L]{or} 4 [N, C, H, W]{three}, got {}",
                x.shape
            ),
        ));
    }
    x.shape.0[2..]
        .iter()
        .map(|d| {
            d.fixed().ok_or_else(|| {
                OpError::input(
                    input,
                    format!("{op} needs fixed spatial dimensions, got {}", x.shape),
                )
            })
        })
        .collect()
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    infer_at(cx, [0, 1, 2])
}

/// The output of a convolution whose X, W and optional bias are inputs `x`, `w` and `b`
/// (`Conv`, and the integer convolutions, which take more inputs between them), in X's
/// element type.
pub fn infer_at(cx: &InferCtx, [xi, wi, bi]: [usize; 3]) -> Result<Vec<TensorType>, OpError> {
    let op = cx.op.op_type;
    let x = cx.input(xi);
    let w = cx.input(wi);
    let sp = spatial(op, x, xi)?;
    if w.shape.rank() != x.shape.rank() {
        return Err(OpError::input(
            wi,
            format!(
                "{op} weight W must have the rank of X ({}): [M, C/group, kernel...], got {}",
                x.shape.rank(),
                w.shape
            ),
        ));
    }
    let Some(wd) = w
        .shape
        .0
        .iter()
        .map(Dim::fixed)
        .collect::<Option<Vec<usize>>>()
    else {
        return Err(OpError::input(
            wi,
            format!("{op} needs a weight W of fixed size, got {}", w.shape),
        ));
    };
    let Some(c) = x.shape.0[1].fixed() else {
        return Err(OpError::input(
            xi,
            format!("{op} needs a fixed channel dimension, got {}", x.shape),
        ));
    };
    let group = cx.attrs.int("group");
    if group < 1 {
        return Err(OpError::attr(
            "group",
            format!("group must be positive, got {group}"),
        ));
    }
    let g = group as usize;
    let m = wd[0];
    if !c.is_multiple_of(g) || !m.is_multiple_of(g) {
        return Err(OpError::attr(
            "group",
            format!(
                "{op} group = {g} must divide the input channels ({c}) and the output channels ({m})"
            ),
        ));
    }
    if wd[1] * g != c {
        return Err(OpError::input(
            wi,
            format!(
                "{op} channel mismatch: X has {c} channels, W {} expects {} x group {g} = {}",
                w.shape,
                wd[1],
                wd[1] * g
            ),
        )
        .with_note(At::Input(xi), format!("X has {c} channels here")));
    }
    let kernel = &wd[2..];
    if let Some(ks) = cx.attrs.ints("kernel_shape")
        && (ks.len() != kernel.len() || ks.iter().zip(kernel).any(|(&a, &b)| a as usize != b))
    {
        return Err(OpError::attr(
            "kernel_shape",
            format!("kernel_shape {ks:?} does not match the weight's kernel {kernel:?}"),
        ));
    }
    if let Some(b) = cx.opt_input(bi)
        && b.shape != Shape::fixed(&[m])
    {
        return Err(OpError::input(
            bi,
            format!("{op} bias B must be [{m}], got {}", b.shape),
        ));
    }
    let axes = geometry(op, cx.attrs, &sp, kernel, false)?;
    let mut out = vec![x.shape.0[0].clone(), Dim::Fixed(m)];
    out.extend(axes.iter().map(|a| Dim::Fixed(a.output)));
    Ok(vec![TensorType {
        dtype: x.dtype,
        shape: Shape(out),
    }])
}

/// Device geometry as 2-D: a 1-D convolution is a 2-D one of height 1.
pub fn as_2d(axes: &[Axis]) -> [Axis; 2] {
    let unit = Axis {
        input: 1,
        kernel: 1,
        stride: 1,
        dilation: 1,
        pad_begin: 0,
        pad_end: 0,
        output: 1,
    };
    if axes.len() == 1 {
        [unit, axes[0]]
    } else {
        [axes[0], axes[1]]
    }
}

fn plan(cx: &LowerCtx) -> (usize, usize, usize, usize, [Axis; 2]) {
    let x = &cx.input(0).shape;
    let w = &cx.input(1).shape;
    let axes =
        geometry("Conv", cx.attrs, &x[2..], &w[2..], false).expect("checked during inference");
    let g = cx.attrs.int("group") as usize;
    (x[0], x[1], w[0], g, as_2d(&axes))
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let (n, c, m, g, [h, w]) = plan(cx);
    let xs = &cx.input(0).expr;
    let ws = &cx.input(1).expr;
    let y = &cx.outputs[0].expr;
    let b = cx.opt_expr(2);
    let relu = cx.epilogue.relu;
    let kernels = kernels();
    let k = c / g * h.kernel * w.kernel;
    let weights = cx
        .input_consts
        .get(1)
        .copied()
        .flatten()
        .and_then(Data::as_f32);
    let dims = [
        n, c, h.input, w.input, m, g, h.kernel, w.kernel, h.output, w.output,
    ];
    let win = [
        h.stride,
        w.stride,
        h.dilation,
        w.dilation,
        h.pad_begin,
        w.pad_begin,
    ];
    let path = ConvShape::lowered(cx, weights.is_some()).path(cx.winograd);
    let tile = path.im2col;
    let packed_fn = cx.kernel_fn("conv2d_packed");
    let small = cx.small();
    let packed = match (tile, weights, &cx.scratch) {
        (Some(pb), Some(weights), Some(scratch)) => {
            // The weights as they are ([M/G, K] per group, after any folding): the
            // left-hand side of the products, the patches being packed at run time.
            let (decl, wp) = node_static("wp", weights.to_vec());
            let sc = &scratch.expr;
            let len = scratch.shape[0];
            Some((
                decl,
                quote! {
                    // The planned scratch holds what the kernel carves from it, by the
                    // formula of the runtime's own layout crate.
                    const { assert!(#len >= ::tinyonnx::layout::patch_len(#k, #pb)) }
                    #kernels::conv::#packed_fn::<#(#dims),*, #(#win),*, #pb, #relu, #small>(#xs, #wp, #b, #y, #sc);
                },
            ))
        }
        _ => None,
    };
    if let (Some(tb), Some(weights), Some(scratch)) = (path.winograd, weights, &cx.scratch) {
        let (decl, wu) = node_static("wu", winograd_kernel(weights, m, c));
        let sc = &scratch.expr;
        let (pt, pl) = (h.pad_begin, w.pad_begin);
        let rows = usize::from(cx.winograd);
        let dims = [
            n, c, h.input, w.input, m, h.output, w.output, pt, pl, tb, rows,
        ];
        let len = scratch.shape[0];
        let (oh, ow) = (h.output, w.output);
        let call = quote! {
            const {
                assert!(#len >= ::tinyonnx::layout::winograd::scratch_len(#c, #m, #oh, #ow, #tb, #rows));
            }
            #kernels::winograd::conv3x3_winograd::<#(#dims),*, #relu>(#xs, #wu, #b, #y, #sc);
        };
        if let (true, Some((packed_decl, packed_call))) = (rows < 4, packed) {
            // Passes of one element row pay against the im2col kernel unless the CPU's
            // products are much faster than its transforms (AVX-512); both fit the
            // scratch, the CPU picks (off x86-64 the im2col call is dead code).
            return quote! {
                #decl
                #packed_decl
                if #kernels::winograd::passes_pay() {
                    #call
                } else {
                    #packed_call
                }
            };
        }
        return quote! {
            #decl
            #call
        };
    }
    if let Some((decl, call)) = packed {
        return quote! {
            #decl
            #call
        };
    }
    let direct_fn = cx.kernel_fn("conv2d");
    quote! {
        #kernels::conv::#direct_fn::<#(#dims),*, #(#win),*, #relu, #small>(#xs, #ws, #b, #y);
    }
}

fn macs(cx: &LowerCtx) -> u64 {
    let (n, c, m, g, [h, w]) = plan(cx);
    (n * m * h.output * w.output * (c / g) * h.kernel * w.kernel) as u64
}
