//! `Resize` (opset 13 to 19 semantics): nearest, linear and cubic interpolation over any
//! axes, every coordinate transformation mode, antialiasing, `axes` and
//! `keep_aspect_ratio_policy` (18). The scales or sizes (and the roi) must be known at
//! compile time; the taps and weights of each axis are then worked out here, in f64, as
//! the ONNX reference implementation computes them, and the kernel only sums. Where a
//! scale makes a fractional output width, `align_corners` divides by that width as the
//! reference does (ONNX Runtime by the integer length).

use crate::ops::schema::prelude::*;
use crate::types::{Dim, Shape};

pub static RESIZE: OpSchema = OpSchema {
    op_type: "Resize",
    inputs: &[
        input("X"),
        any_const("roi", true),
        any_const("scales", true),
        i64_const("sizes", true),
    ],
    attrs: &[
        attr("antialias", AttrKind::Int, AttrDefault::Int(0)).since(18),
        attr("axes", AttrKind::Ints, AttrDefault::Absent).since(18),
        attr(
            "coordinate_transformation_mode",
            AttrKind::Str,
            AttrDefault::Str("half_pixel"),
        ),
        attr("cubic_coeff_a", AttrKind::Float, AttrDefault::Float(-0.75)),
        attr("exclude_outside", AttrKind::Int, AttrDefault::Int(0)),
        attr(
            "extrapolation_value",
            AttrKind::Float,
            AttrDefault::Float(0.0),
        ),
        attr(
            "keep_aspect_ratio_policy",
            AttrKind::Str,
            AttrDefault::Str("stretch"),
        )
        .since(18),
        attr("mode", AttrKind::Str, AttrDefault::Str("nearest")),
        attr(
            "nearest_mode",
            AttrKind::Str,
            AttrDefault::Str("round_prefer_floor"),
        ),
    ],
    since_opset: 11,
    infer: |cx| {
        let x = cx.input(0);
        let dims: Option<Vec<usize>> = x.shape.0.iter().map(Dim::fixed).collect();
        let Some(dims) = dims else {
            return Err(OpError::input(
                0,
                format!("Resize needs the input's dims fixed, got {}", x.shape),
            ));
        };
        let p = params(cx.attrs, cx.opset).map_err(|(at, msg)| OpError {
            at,
            msg,
            note: None,
        })?;
        let roi = floats(cx.consts.get(1).copied().flatten(), cx.opt_input(1), 1)?;
        let scales = floats(cx.consts.get(2).copied().flatten(), cx.opt_input(2), 2)?;
        let sizes = cx.const_i64(3).filter(|s| !s.is_empty());
        let (out, _) =
            plan(&dims, &p, roi.as_deref(), scales.as_deref(), sizes).map_err(|(at, msg)| {
                OpError {
                    at,
                    msg,
                    note: None,
                }
            })?;
        Ok(vec![TensorType {
            dtype: x.dtype,
            shape: Shape::fixed(&out),
        }])
    },
    lower: |cx| {
        let x = cx.input(0);
        let p = params(cx.attrs, i64::MAX).expect("checked during inference");
        let value = |i: usize| cx.const_f64(i).filter(|v| !v.is_empty());
        let sizes = cx.const_i64(3).filter(|s| !s.is_empty());
        let (out, axes) = plan(
            &x.shape,
            &p,
            value(1).as_deref(),
            value(2).as_deref(),
            sizes,
        )
        .expect("checked during inference");
        let rank = x.shape.len();
        let kernels = kernels();
        let taps = axes.iter().map(|a| {
            let (n, idx, w) = (a.taps, &a.index, &a.weight);
            let w = w.iter().map(|&v| v as f32);
            let outside = &a.outside;
            quote! {
                #kernels::resize::Taps { taps: #n, index: &[#(#idx),*], weight: &[#(#w),*], outside: &[#(#outside),*] }
            }
        });
        let (xe, y) = (&x.expr, &cx.outputs[0].expr);
        let shape = &x.shape;
        let extrapolation = p.extrapolation as f32;
        quote! {
            #kernels::resize::resize::<#rank>(#xe, #y, &[#(#shape),*], &[#(#out),*], &[#(#taps),*], #extrapolation);
        }
    },
    macs: |cx| cx.outputs[0].numel() as u64,
    cases: |_| {
        cases(&[
            // Nearest, each rounding, upsampling and downsampling.
            "input x: f32[1, 2, 3, 4]; output a = Resize(x, _, Constant(value_floats = [1.0, 1.0, 2.0, 1.5])); output b = Resize(x, _, Constant(value_floats = [1.0, 1.0, 0.6, 0.5]), nearest_mode = \"round_prefer_ceil\"); output c = Resize(x, _, _, [1, 2, 7, 9], nearest_mode = \"floor\", coordinate_transformation_mode = \"asymmetric\"); output d = Resize(x, _, _, [1, 2, 5, 3], nearest_mode = \"ceil\", coordinate_transformation_mode = \"align_corners\");",
            // Linear, every coordinate transformation mode.
            "input x: f32[1, 1, 4, 4]; output a = Resize(x, _, Constant(value_floats = [1.0, 1.0, 2.0, 2.0]), mode = \"linear\"); output b = Resize(x, _, _, [1, 1, 3, 2], mode = \"linear\", coordinate_transformation_mode = \"align_corners\"); output c = Resize(x, _, _, [1, 1, 3, 8], mode = \"linear\", coordinate_transformation_mode = \"pytorch_half_pixel\"); output d = Resize(x, _, Constant(value_floats = [1.0, 1.0, 1.5, 2.5]), mode = \"linear\", coordinate_transformation_mode = \"asymmetric\");",
            // Cubic, with and without exclude_outside.
            "input x: f32[1, 1, 4, 4]; output a = Resize(x, _, Constant(value_floats = [1.0, 1.0, 2.0, 2.0]), mode = \"cubic\"); output b = Resize(x, _, Constant(value_floats = [1.0, 1.0, 0.8, 0.8]), mode = \"cubic\", cubic_coeff_a = -0.5, exclude_outside = 1); output c = Resize(x, _, _, [1, 1, 9, 10], mode = \"cubic\", coordinate_transformation_mode = \"align_corners\");",
            // tf_crop_and_resize with a roi and extrapolation.
            "input x: f32[1, 1, 4, 4]; output a = Resize(x, Constant(value_floats = [0.0, 0.0, 0.4, 0.6, 1.0, 1.0, 0.6, 0.8]), _, [1, 1, 3, 3], mode = \"linear\", coordinate_transformation_mode = \"tf_crop_and_resize\"); output b = Resize(x, Constant(value_floats = [0.0, 0.0, 0.4, 0.6, 1.0, 1.0, 1.2, 1.7]), _, [1, 1, 3, 3], mode = \"linear\", coordinate_transformation_mode = \"tf_crop_and_resize\", extrapolation_value = 10.0);",
            // Opset 18: axes, keep_aspect_ratio_policy, antialias; 19: half_pixel_symmetric.
            "opset = 19; input x: f32[1, 1, 8, 6]; output a = Resize(x, _, _, [3, 4], axes = [2, 3], keep_aspect_ratio_policy = \"not_larger\"); output b = Resize(x, _, _, [3, 4], axes = [3, 2], keep_aspect_ratio_policy = \"not_smaller\", mode = \"linear\"); output c = Resize(x, _, Constant(value_floats = [0.5, 0.6]), axes = [2, 3], mode = \"linear\", antialias = 1); output d = Resize(x, _, Constant(value_floats = [0.6, 0.5]), axes = [2, 3], mode = \"cubic\", antialias = 1); output e = Resize(x, _, Constant(value_floats = [1.0, 1.0, 1.7, 0.8]), mode = \"linear\", coordinate_transformation_mode = \"half_pixel_symmetric\");",
            "input x: f32[2, 5]; output a = Resize(x, _, Constant(value_floats = [1.0, 3.0]), mode = \"linear\");",
        ])
    },
    ..BASE
};

/// The attributes, checked.
struct Params {
    mode: Mode,
    transform: String,
    nearest: String,
    a: f64,
    exclude_outside: bool,
    extrapolation: f64,
    antialias: bool,
    axes: Option<Vec<i64>>,
    policy: String,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Nearest,
    Linear,
    Cubic,
}

type Fail = (At, String);

fn params(attrs: &Attrs, opset: i64) -> Result<Params, Fail> {
    let s = |n: &str| attrs.string(n).unwrap_or_default().to_string();
    let bad = |n: &'static str, msg: String| (At::Attr(n), msg);
    let mode = match s("mode").as_str() {
        "nearest" => Mode::Nearest,
        "linear" => Mode::Linear,
        "cubic" => Mode::Cubic,
        m => {
            return Err(bad(
                "mode",
                format!("Resize mode must be \"nearest\", \"linear\" or \"cubic\", got \"{m}\""),
            ));
        }
    };
    let transform = s("coordinate_transformation_mode");
    let known = [
        "half_pixel",
        "half_pixel_symmetric",
        "pytorch_half_pixel",
        "align_corners",
        "asymmetric",
        "tf_crop_and_resize",
    ];
    if !known.contains(&transform.as_str()) {
        return Err(bad(
            "coordinate_transformation_mode",
            format!(
                "Resize coordinate_transformation_mode \"{transform}\" is not one of {}",
                known.join(", ")
            ),
        ));
    }
    if transform == "half_pixel_symmetric" && opset < 19 {
        return Err(bad(
            "coordinate_transformation_mode",
            format!("half_pixel_symmetric needs opset 19 (this model uses opset {opset})"),
        ));
    }
    let nearest = s("nearest_mode");
    if !["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"].contains(&nearest.as_str()) {
        return Err(bad(
            "nearest_mode",
            format!(
                "Resize nearest_mode \"{nearest}\" is not round_prefer_floor, round_prefer_ceil, floor or ceil"
            ),
        ));
    }
    let antialias = attrs.int("antialias") != 0;
    if antialias && mode == Mode::Nearest {
        return Err(bad(
            "antialias",
            "Resize antialias needs mode linear or cubic".into(),
        ));
    }
    let policy = s("keep_aspect_ratio_policy");
    if !["stretch", "not_larger", "not_smaller"].contains(&policy.as_str()) {
        return Err(bad(
            "keep_aspect_ratio_policy",
            format!(
                "Resize keep_aspect_ratio_policy \"{policy}\" is not stretch, not_larger or not_smaller"
            ),
        ));
    }
    Ok(Params {
        mode,
        transform,
        nearest,
        a: f64::from(attrs.float("cubic_coeff_a")),
        exclude_outside: attrs.int("exclude_outside") != 0,
        extrapolation: f64::from(attrs.float("extrapolation_value")),
        antialias,
        axes: attrs.ints("axes").map(<[i64]>::to_vec),
        policy,
    })
}

/// The f32 values of compile-time input `i` (empty or absent: none).
fn floats(
    data: Option<&Data>,
    t: Option<&TensorType>,
    i: usize,
) -> Result<Option<Vec<f64>>, OpError> {
    let Some(t) = t else { return Ok(None) };
    if t.dtype != DType::F32 {
        return Err(OpError::input(
            i,
            format!(
                "Resize takes {} as f32, got {}",
                if i == 1 { "roi" } else { "scales" },
                t.dtype
            ),
        ));
    }
    Ok(data.map(Data::to_f64).filter(|v| !v.is_empty()))
}

/// The taps of one axis.
struct AxisTaps {
    taps: usize,
    index: Vec<usize>,
    weight: Vec<f64>,
    outside: Vec<bool>,
}

/// The output dims and the taps of every axis.
fn plan(
    dims: &[usize],
    p: &Params,
    roi: Option<&[f64]>,
    scales: Option<&[f64]>,
    sizes: Option<&[i64]>,
) -> Result<(Vec<usize>, Vec<AxisTaps>), Fail> {
    let r = dims.len();
    let axes: Vec<usize> = match &p.axes {
        Some(a) => {
            let mut out = Vec::new();
            for &v in a {
                let ax = if v < 0 { v + r as i64 } else { v };
                if ax < 0 || ax >= r as i64 || out.contains(&(ax as usize)) {
                    return Err((
                        At::Attr("axes"),
                        format!("Resize axes {a:?} are not distinct axes of a rank-{r} input"),
                    ));
                }
                out.push(ax as usize);
            }
            out
        }
        None => (0..r).collect(),
    };
    let n = axes.len();
    let (mut scale, mut out) = (vec![1.0f64; r], dims.to_vec());
    match (scales, sizes) {
        (Some(s), None) => {
            if s.len() != n {
                return Err((
                    At::Input(2),
                    format!("Resize scales must have {n} values, got {}", s.len()),
                ));
            }
            for (k, &a) in axes.iter().enumerate() {
                if s[k].is_nan() || s[k] <= 0.0 {
                    return Err((
                        At::Input(2),
                        format!("Resize scales must be positive, got {}", s[k]),
                    ));
                }
                scale[a] = s[k];
                out[a] = (s[k] * dims[a] as f64) as usize;
            }
        }
        (None, Some(z)) => {
            if z.len() != n {
                return Err((
                    At::Input(3),
                    format!("Resize sizes must have {n} values, got {}", z.len()),
                ));
            }
            for (k, &a) in axes.iter().enumerate() {
                if z[k] < 1 {
                    return Err((
                        At::Input(3),
                        format!("Resize sizes must be positive, got {}", z[k]),
                    ));
                }
                out[a] = z[k] as usize;
                scale[a] = z[k] as f64 / dims[a] as f64;
            }
            if p.policy != "stretch" {
                let picked = axes.iter().map(|&a| scale[a]);
                let s = if p.policy == "not_larger" {
                    picked.fold(f64::INFINITY, f64::min)
                } else {
                    picked.fold(0.0, f64::max)
                };
                for &a in &axes {
                    scale[a] = s;
                    out[a] = (s * dims[a] as f64 + 0.5) as usize;
                }
            }
        }
        _ => {
            return Err((
                At::Op,
                "Resize needs exactly one of scales and sizes (the other omitted or empty)".into(),
            ));
        }
    }
    if let Some(&bad) = out.iter().find(|&&d| d == 0) {
        return Err((
            At::Op,
            format!("Resize would make a dim of {bad}: tinyonnx has no empty tensors"),
        ));
    }
    // The roi per axis: (start, end), from the whole input by default.
    let mut span = vec![(0.0f64, 1.0f64); r];
    if let Some(roi) = roi {
        if roi.len() != 2 * n {
            return Err((
                At::Input(1),
                format!("Resize roi must have {} values, got {}", 2 * n, roi.len()),
            ));
        }
        for (k, &a) in axes.iter().enumerate() {
            span[a] = (roi[k], roi[n + k]);
        }
    } else if p.transform == "tf_crop_and_resize" {
        return Err((
            At::Input(1),
            "Resize tf_crop_and_resize needs the roi".into(),
        ));
    }
    let taps = (0..r)
        .map(|a| {
            let identity = (scale[a] - 1.0).abs() < 1e-9
                && out[a] == dims[a]
                && (roi.is_none() || span[a] == (0.0, 1.0));
            if identity || !axes.contains(&a) {
                return AxisTaps {
                    taps: 1,
                    index: (0..dims[a]).collect(),
                    weight: vec![1.0; dims[a]],
                    outside: Vec::new(),
                };
            }
            axis_taps(p, dims[a], out[a], scale[a], span[a])
        })
        .collect();
    Ok((out, taps))
}

/// The taps of one axis of `len` values resized to `out` by `scale`.
fn axis_taps(p: &Params, len: usize, out: usize, scale: f64, roi: (f64, f64)) -> AxisTaps {
    let (lenf, width) = (len as f64, scale * len as f64);
    let mut t = AxisTaps {
        taps: 0,
        index: Vec::new(),
        weight: Vec::new(),
        outside: Vec::new(),
    };
    let mut any_outside = false;
    for o in 0..out {
        let y = o as f64;
        let x = match p.transform.as_str() {
            "align_corners" if width == 1.0 => 0.0,
            "align_corners" => y * (lenf - 1.0) / (width - 1.0),
            "asymmetric" => y / scale,
            "tf_crop_and_resize" => {
                let x = if width == 1.0 {
                    (roi.1 - roi.0) * (lenf - 1.0) / 2.0
                } else {
                    y * (roi.1 - roi.0) * (lenf - 1.0) / (width - 1.0)
                };
                x + roi.0 * (lenf - 1.0)
            }
            "pytorch_half_pixel" if width == 1.0 => -0.5,
            "half_pixel_symmetric" => {
                let offset = lenf / 2.0 * (1.0 - out as f64 / width);
                offset + (y + 0.5) / scale - 0.5
            }
            _ => (y + 0.5) / scale - 0.5,
        };
        let outside = p.transform == "tf_crop_and_resize" && (x < 0.0 || x > lenf - 1.0);
        any_outside |= outside;
        t.outside.push(outside);
        let ratio = if x == x.floor() { 1.0 } else { x - x.floor() };
        let mut c = coeffs(p, ratio, scale);
        let n = c.len();
        t.taps = n;
        // The n neighbours nearest to x (the smaller on a tie), as indices of the input
        // padded by its edge values: clamped.
        let pad = n.div_ceil(2) as f64;
        let xp = x + pad;
        let base = xp.floor();
        let frac = xp - base;
        let half = (n / 2) as f64;
        let offset = if n.is_multiple_of(2) {
            if frac == 0.0 { -half } else { -half + 1.0 }
        } else {
            let b = -(((n - 1) / 2) as f64);
            if frac <= 0.5 { b } else { b + 1.0 }
        };
        let start = base + offset - pad;
        let idx: Vec<f64> = (0..n).map(|i| start + i as f64).collect();
        if p.exclude_outside {
            for (w, &i) in c.iter_mut().zip(&idx) {
                if i < 0.0 || i >= lenf {
                    *w = 0.0;
                }
            }
            let sum: f64 = c.iter().sum();
            let sum = if sum == 0.0 { 1.0 } else { sum };
            c.iter_mut().for_each(|w| *w /= sum);
        }
        if p.mode == Mode::Nearest {
            // One tap: the neighbour whose coefficient is 1.
            t.taps = 1;
            let k = usize::from(c[1] == 1.0);
            t.index.push(idx[k].clamp(0.0, lenf - 1.0) as usize);
            t.weight.push(1.0);
            continue;
        }
        for (w, i) in c.into_iter().zip(idx) {
            t.index.push(i.clamp(0.0, lenf - 1.0) as usize);
            t.weight.push(w);
        }
    }
    if !any_outside {
        t.outside.clear();
    }
    t
}

/// The interpolation coefficients at `ratio` in (0, 1] (1 on an input position).
fn coeffs(p: &Params, ratio: f64, scale: f64) -> Vec<f64> {
    let a = p.a;
    let normalize = |c: Vec<f64>| {
        let sum: f64 = c.iter().sum();
        c.into_iter().map(|v| v / sum).collect::<Vec<f64>>()
    };
    match p.mode {
        Mode::Nearest => {
            let right = if ratio == 1.0 {
                true
            } else {
                match p.nearest.as_str() {
                    "round_prefer_floor" => ratio > 0.5,
                    "round_prefer_ceil" => ratio >= 0.5,
                    "floor" => false,
                    _ => true,
                }
            };
            vec![f64::from(u8::from(!right)), f64::from(u8::from(right))]
        }
        Mode::Linear if p.antialias => {
            let s = scale.min(1.0);
            let start = (-1.0 / s).floor() as i64 + 1;
            let footprint = 2 - 2 * start;
            normalize(
                (start..start + footprint)
                    .map(|i| (1.0 - ((i as f64 - ratio) * s).abs()).clamp(0.0, 1.0))
                    .collect(),
            )
        }
        Mode::Linear => vec![1.0 - ratio, ratio],
        Mode::Cubic if p.antialias => {
            let s = scale.min(1.0);
            let cubic = |x: f64| {
                let x = x.abs();
                let (x2, x3) = (x * x, x * x * x);
                if x <= 1.0 {
                    (a + 2.0) * x3 - (a + 3.0) * x2 + 1.0
                } else if x < 2.0 {
                    a * x3 - 5.0 * a * x2 + 8.0 * a * x - 4.0 * a
                } else {
                    0.0
                }
            };
            let start = (-2.0 / s).floor() as i64 + 1;
            let end = 2 - start;
            normalize(
                (start..end)
                    .map(|i| cubic(s * (i as f64 - ratio)))
                    .collect(),
            )
        }
        Mode::Cubic => {
            let (r, q) = (ratio, 1.0 - ratio);
            vec![
                ((a * (r + 1.0) - 5.0 * a) * (r + 1.0) + 8.0 * a) * (r + 1.0) - 4.0 * a,
                ((a + 2.0) * r - (a + 3.0)) * r * r + 1.0,
                ((a + 2.0) * q - (a + 3.0)) * q * q + 1.0,
                ((a * (q + 1.0) - 5.0 * a) * (q + 1.0) + 8.0 * a) * (q + 1.0) - 4.0 * a,
            ]
        }
    }
}
