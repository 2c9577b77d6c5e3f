//! A float run of a checked graph at compile time, the calibration's forward pass: the
//! operators a quantizable model is made of, evaluated in f64 straight from their ONNX
//! definitions (no packing, no tiling: only the ranges of the values matter here). A
//! node of any other operator is an error that names it, never a guess.

use crate::ir::{Graph, Node, TensorId};
use crate::ops::AttrValue;
use crate::ops::convolution::conv::{Axis, as_2d, geometry};

/// Values of a tensor during the run.
type Values = Vec<f64>;

/// The operators [`run`] evaluates.
pub const EVALUATED: &[&str] = &[
    "Gemm",
    "MatMul",
    "Conv",
    "Relu",
    "LeakyRelu",
    "Sigmoid",
    "Tanh",
    "Clip",
    "Identity",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Flatten",
    "Reshape",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Softmax",
    "BatchNormalization",
    "Concat",
];

/// Runs `graph` on one set of input values (in `graph.inputs` order, each of the
/// input's device shape), calling `seen` with every value computed (inputs included).
pub fn run(
    graph: &Graph,
    inputs: &[Values],
    seen: &mut dyn FnMut(TensorId, &[f64]),
) -> Result<(), String> {
    let mut values: Vec<Option<Values>> = vec![None; graph.tensors.len()];
    for (&id, v) in graph.inputs.iter().zip(inputs) {
        seen(id, v);
        values[id] = Some(v.clone());
    }
    for node in &graph.nodes {
        // Outputs the checker folded (a Constant, shape arithmetic) are known.
        if node
            .outputs
            .iter()
            .all(|&o| graph.tensors[o].value.is_some())
        {
            continue;
        }
        let what = || format!("node `{}` ({})", node.name, node.op.op_type);
        if node.control.is_some() || node.custom.is_some() {
            return Err(format!(
                "{}: calibration runs no control-flow or custom operator",
                what()
            ));
        }
        let mut args = Vec::with_capacity(node.inputs.len());
        for t in &node.inputs {
            args.push(match t {
                None => None,
                Some(t) => {
                    let v = match (&values[*t], &graph.tensors[*t].value) {
                        (Some(v), _) => v.clone(),
                        (None, Some(d)) => d.to_f64(),
                        (None, None) => {
                            return Err(format!(
                                "{}: input `{}` has no value",
                                what(),
                                graph.tensors[*t].name
                            ));
                        }
                    };
                    Some((v, graph.device_shape(*t)))
                }
            });
        }
        let out = node.outputs.first().copied();
        let out_shape = out.map(|o| graph.device_shape(o)).unwrap_or_default();
        let v = eval(node, &args, &out_shape).map_err(|e| format!("{}: {e}", what()))?;
        if let Some(o) = out {
            if v.len() != out_shape.iter().product::<usize>() {
                return Err(format!(
                    "{}: computed {} values for {out_shape:?}",
                    what(),
                    v.len()
                ));
            }
            seen(o, &v);
            values[o] = Some(v);
        }
    }
    Ok(())
}

/// An input's values and device shape.
type Arg = Option<(Values, Vec<usize>)>;

fn arg(args: &[Arg], i: usize) -> Result<(&[f64], &[usize]), String> {
    match args.get(i) {
        Some(Some((v, s))) => Ok((v, s)),
        _ => Err(format!("input {i} is missing")),
    }
}

fn ints(node: &Node, name: &str) -> Option<Vec<i64>> {
    match node.attrs.get(name) {
        Some(AttrValue::Ints(v)) => Some(v.clone()),
        _ => None,
    }
}

fn int(node: &Node, name: &str, default: i64) -> i64 {
    match node.attrs.get(name) {
        Some(AttrValue::Int(v)) => *v,
        _ => default,
    }
}

fn float(node: &Node, name: &str, default: f64) -> f64 {
    match node.attrs.get(name) {
        Some(AttrValue::Float(v)) => f64::from(*v),
        _ => default,
    }
}

/// `axis` of a tensor of `rank` (negative counts from the end).
fn axis(a: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let k = if a < 0 { a + r } else { a };
    (0..r.max(1))
        .contains(&k)
        .then_some(k as usize)
        .ok_or_else(|| format!("axis {a} is out of range for rank {rank}"))
}

fn eval(node: &Node, args: &[Arg], out: &[usize]) -> Result<Values, String> {
    let unary = |f: &dyn Fn(f64) -> f64| -> Result<Values, String> {
        Ok(arg(args, 0)?.0.iter().map(|&x| f(x)).collect())
    };
    let binary = |f: &dyn Fn(f64, f64) -> f64| -> Result<Values, String> {
        let (a, sa) = arg(args, 0)?;
        let (b, sb) = arg(args, 1)?;
        broadcast(a, sa, b, sb, out, f)
    };
    match node.op.op_type {
        "Relu" => unary(&|x| x.max(0.0)),
        "LeakyRelu" => {
            let alpha = float(node, "alpha", 0.01);
            unary(&|x| if x < 0.0 { alpha * x } else { x })
        }
        "Sigmoid" => unary(&|x| 1.0 / (1.0 + (-x).exp())),
        "Tanh" => unary(&f64::tanh),
        "Clip" => {
            let bound = |i: usize, name: &str, default: f64| match args.get(i) {
                Some(Some((v, _))) => v.first().copied().unwrap_or(default),
                _ => float(node, name, default),
            };
            let (lo, hi) = (
                bound(1, "min", f64::NEG_INFINITY),
                bound(2, "max", f64::INFINITY),
            );
            unary(&|x| x.max(lo).min(hi))
        }
        "Identity" | "Flatten" | "Reshape" | "Squeeze" | "Unsqueeze" => {
            Ok(arg(args, 0)?.0.to_vec())
        }
        "Add" => binary(&|a, b| a + b),
        "Sub" => binary(&|a, b| a - b),
        "Mul" => binary(&|a, b| a * b),
        "Div" => binary(&|a, b| a / b),
        "Gemm" => gemm(node, args, out),
        "MatMul" => matmul(args, out),
        "Conv" => conv(node, args, out),
        "MaxPool" | "AveragePool" => pool(node, args, out),
        "GlobalAveragePool" | "GlobalMaxPool" => {
            let (x, s) = arg(args, 0)?;
            let inner: usize = s.get(2..).map_or(1, |d| d.iter().product());
            let max = node.op.op_type == "GlobalMaxPool";
            Ok(x.chunks(inner.max(1))
                .map(|c| {
                    if max {
                        c.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                    } else {
                        c.iter().sum::<f64>() / c.len() as f64
                    }
                })
                .collect())
        }
        "Transpose" => {
            let (x, s) = arg(args, 0)?;
            let perm: Vec<usize> = match ints(node, "perm") {
                Some(p) => p
                    .iter()
                    .map(|&a| axis(a, s.len()))
                    .collect::<Result<_, _>>()?,
                None => (0..s.len()).rev().collect(),
            };
            let strides = strides(s);
            let mut v = Vec::with_capacity(x.len());
            for_each_index(out, |idx| {
                let at: usize = idx.iter().zip(&perm).map(|(&i, &p)| i * strides[p]).sum();
                v.push(x[at]);
            });
            Ok(v)
        }
        "Softmax" => {
            let (x, s) = arg(args, 0)?;
            // Opset 13's definition, the only one registered: along `axis`.
            let a = axis(int(node, "axis", -1), s.len())?;
            let (outer, len, inner) = split(s, a);
            let mut v = x.to_vec();
            for o in 0..outer {
                for i in 0..inner {
                    let at = |k: usize| (o * len + k) * inner + i;
                    let m = (0..len).map(|k| x[at(k)]).fold(f64::NEG_INFINITY, f64::max);
                    let sum: f64 = (0..len).map(|k| (x[at(k)] - m).exp()).sum();
                    for k in 0..len {
                        v[at(k)] = (x[at(k)] - m).exp() / sum;
                    }
                }
            }
            Ok(v)
        }
        "BatchNormalization" => {
            let (x, s) = arg(args, 0)?;
            let p: Vec<&[f64]> = (1..5)
                .map(|i| arg(args, i).map(|a| a.0))
                .collect::<Result<_, _>>()?;
            let eps = float(node, "epsilon", 1e-5);
            let c = s.get(1).copied().unwrap_or(1);
            let inner: usize = s.get(2..).map_or(1, |d| d.iter().product());
            Ok(x.iter()
                .enumerate()
                .map(|(e, &v)| {
                    let k = (e / inner.max(1)) % c.max(1);
                    let at = |t: &[f64]| t.get(k).copied().unwrap_or(0.0);
                    (v - at(p[2])) / (at(p[3]) + eps).sqrt() * at(p[0]) + at(p[1])
                })
                .collect())
        }
        "Concat" => {
            let a = axis(int(node, "axis", 0), out.len())?;
            let (outer, _, _) = split(out, a);
            let mut v = Vec::new();
            for o in 0..outer {
                for i in 0..args.len() {
                    let (x, s) = arg(args, i)?;
                    let (_, len, inner) = split(s, a);
                    v.extend_from_slice(&x[o * len * inner..(o + 1) * len * inner]);
                }
            }
            Ok(v)
        }
        other => Err(format!(
            "the float run does not evaluate {other}; it evaluates {}",
            EVALUATED.join(", ")
        )),
    }
}

/// `(outer, dims[axis], inner)` of a shape.
fn split(dims: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = dims[..axis.min(dims.len())].iter().product();
    let len = dims.get(axis).copied().unwrap_or(1);
    let inner = dims.get(axis + 1..).map_or(1, |d| d.iter().product());
    (outer, len, inner)
}

fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// Calls `f` with every index of `dims`, last axis fastest.
fn for_each_index(dims: &[usize], mut f: impl FnMut(&[usize])) {
    if dims.contains(&0) {
        return;
    }
    let mut idx = vec![0; dims.len()];
    loop {
        f(&idx);
        let mut k = dims.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// NumPy broadcasting of `a` and `b` into `out`.
fn broadcast(
    a: &[f64],
    sa: &[usize],
    b: &[f64],
    sb: &[usize],
    out: &[usize],
    f: &dyn Fn(f64, f64) -> f64,
) -> Result<Values, String> {
    if sa.len() > out.len() || sb.len() > out.len() {
        return Err("operands of a higher rank than the result".into());
    }
    let (ia, ib) = (Broadcast::new(sa, out), Broadcast::new(sb, out));
    let mut v = Vec::with_capacity(out.iter().product());
    for_each_index(out, |idx| v.push(f(a[ia.at(idx)], b[ib.at(idx)])));
    Ok(v)
}

/// Where an index of the result reads a broadcast operand.
struct Broadcast {
    /// The operand's stride along each axis of the result (0 where it repeats).
    strides: Vec<usize>,
}

impl Broadcast {
    fn new(dims: &[usize], out: &[usize]) -> Broadcast {
        let own = strides(dims);
        let skip = out.len() - dims.len();
        let strides = (0..out.len())
            .map(|k| match k.checked_sub(skip) {
                Some(j) if dims[j] != 1 => own[j],
                _ => 0,
            })
            .collect();
        Broadcast { strides }
    }

    fn at(&self, idx: &[usize]) -> usize {
        idx.iter().zip(&self.strides).map(|(i, s)| i * s).sum()
    }
}

fn gemm(node: &Node, args: &[Arg], out: &[usize]) -> Result<Values, String> {
    let (a, sa) = arg(args, 0)?;
    let (b, sb) = arg(args, 1)?;
    let (ta, tb) = (int(node, "transA", 0) != 0, int(node, "transB", 0) != 0);
    let (alpha, beta) = (float(node, "alpha", 1.0), float(node, "beta", 1.0));
    let [m, n] = [
        out.first().copied().unwrap_or(1),
        out.get(1).copied().unwrap_or(1),
    ];
    if sa.len() != 2 || sb.len() != 2 {
        return Err("Gemm operands are not 2-D".into());
    }
    let k = if ta { sa[0] } else { sa[1] };
    let ai = |i: usize, p: usize| if ta { a[p * m + i] } else { a[i * k + p] };
    let bi = |p: usize, j: usize| if tb { b[j * k + p] } else { b[p * n + j] };
    let mut v = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            v[i * n + j] = alpha * (0..k).map(|p| ai(i, p) * bi(p, j)).sum::<f64>();
        }
    }
    if let Some(Some((c, sc))) = args.get(2) {
        let c = broadcast(&v, out, c, sc, out, &|x, c| x + beta * c)?;
        return Ok(c);
    }
    Ok(v)
}

/// MatMul of `A [.., M, K]` with a 2-D `B [K, N]`, or with a `B` of A's batch dims.
fn matmul(args: &[Arg], out: &[usize]) -> Result<Values, String> {
    let (a, sa) = arg(args, 0)?;
    let (b, sb) = arg(args, 1)?;
    if sa.len() < 2 || sb.len() < 2 {
        return Err("calibration runs MatMul of operands of rank 2 or more".into());
    }
    let (m, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
    let n = sb[sb.len() - 1];
    let batches: usize = out[..out.len() - 2].iter().product();
    let shared = sb.len() == 2;
    if !shared && sb[..sb.len() - 2] != out[..out.len() - 2]
        || sa[..sa.len() - 2] != out[..out.len() - 2]
    {
        return Err("calibration runs MatMul without broadcasting the batch dims".into());
    }
    let mut v = vec![0.0; batches * m * n];
    for t in 0..batches {
        let (a, b) = (&a[t * m * k..], if shared { b } else { &b[t * k * n..] });
        for i in 0..m {
            for j in 0..n {
                v[(t * m + i) * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            }
        }
    }
    Ok(v)
}

/// The 2-D geometry of a 1-D or 2-D window over `x`, checked against `out`.
fn window(
    node: &Node,
    sx: &[usize],
    kernel: &[usize],
    out: &[usize],
    ceil: bool,
) -> Result<[Axis; 2], String> {
    if !(3..=4).contains(&sx.len()) {
        return Err("calibration runs 1-D and 2-D windows".into());
    }
    let axes = geometry(node.op.op_type, &node.attrs, &sx[2..], kernel, ceil).map_err(|e| e.msg)?;
    let g = as_2d(&axes);
    if g[0].output * g[1].output != out[2..].iter().product::<usize>() {
        return Err("window geometry differs from the checked shape".into());
    }
    Ok(g)
}

fn conv(node: &Node, args: &[Arg], out: &[usize]) -> Result<Values, String> {
    let (x, sx) = arg(args, 0)?;
    let (w, sw) = arg(args, 1)?;
    let g = window(node, sx, &sw[2..], out, false)?;
    let (n, c, m) = (sx[0], sx[1], sw[0]);
    let group = int(node, "group", 1).max(1) as usize;
    let (cg, mg) = (c / group, m / group);
    let [h, wd] = [g[0].input, g[1].input];
    let [kh, kw] = [g[0].kernel, g[1].kernel];
    let [oh, ow] = [g[0].output, g[1].output];
    let bias = args.get(2).and_then(|b| b.as_ref()).map(|b| &b.0);
    let mut v = vec![0.0; n * m * oh * ow];
    for b in 0..n {
        for o in 0..m {
            let gi = o / mg.max(1);
            for y in 0..oh {
                for xo in 0..ow {
                    let mut s = bias.map_or(0.0, |bv| bv[o]);
                    for ci in 0..cg {
                        let ch = gi * cg + ci;
                        for i in 0..kh {
                            let yy = (y * g[0].stride + i * g[0].dilation) as isize
                                - g[0].pad_begin as isize;
                            if yy < 0 || yy as usize >= h {
                                continue;
                            }
                            for j in 0..kw {
                                let xx = (xo * g[1].stride + j * g[1].dilation) as isize
                                    - g[1].pad_begin as isize;
                                if xx < 0 || xx as usize >= wd {
                                    continue;
                                }
                                s += x[((b * c + ch) * h + yy as usize) * wd + xx as usize]
                                    * w[((o * cg + ci) * kh + i) * kw + j];
                            }
                        }
                    }
                    v[((b * m + o) * oh + y) * ow + xo] = s;
                }
            }
        }
    }
    Ok(v)
}

fn pool(node: &Node, args: &[Arg], out: &[usize]) -> Result<Values, String> {
    let (x, sx) = arg(args, 0)?;
    let kernel: Vec<usize> = ints(node, "kernel_shape")
        .ok_or("no kernel_shape")?
        .iter()
        .map(|&k| k.max(1) as usize)
        .collect();
    let g = window(node, sx, &kernel, out, int(node, "ceil_mode", 0) != 0)?;
    let max = node.op.op_type == "MaxPool";
    let include_pad = int(node, "count_include_pad", 0) != 0;
    let planes = sx[0] * sx[1];
    let [h, wd] = [g[0].input, g[1].input];
    let [oh, ow] = [g[0].output, g[1].output];
    let mut v = Vec::with_capacity(planes * oh * ow);
    for p in 0..planes {
        for y in 0..oh {
            for xo in 0..ow {
                let (mut acc, mut count, mut padded) =
                    (if max { f64::NEG_INFINITY } else { 0.0 }, 0usize, 0usize);
                for i in 0..g[0].kernel {
                    let yy =
                        (y * g[0].stride + i * g[0].dilation) as isize - g[0].pad_begin as isize;
                    for j in 0..g[1].kernel {
                        let xx = (xo * g[1].stride + j * g[1].dilation) as isize
                            - g[1].pad_begin as isize;
                        // Within the padded input (for count_include_pad).
                        if yy < h as isize + g[0].pad_end as isize
                            && xx < wd as isize + g[1].pad_end as isize
                        {
                            padded += 1;
                        }
                        if yy < 0 || xx < 0 || yy as usize >= h || xx as usize >= wd {
                            continue;
                        }
                        let e = x[(p * h + yy as usize) * wd + xx as usize];
                        acc = if max { acc.max(e) } else { acc + e };
                        count += 1;
                    }
                }
                v.push(if max {
                    acc
                } else {
                    acc / (if include_pad { padded } else { count }).max(1) as f64
                });
            }
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// The values of every output of `tokens` on `inputs`, by the float run.
    fn outputs(tokens: proc_macro2::TokenStream, inputs: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let model = crate::syntax::parse_model(tokens).expect("parses");
        let (graph, _, _) = crate::check::check(&model).expect("checks");
        let mut values = vec![Vec::new(); graph.tensors.len()];
        super::run(&graph, inputs, &mut |t, v| values[t] = v.to_vec()).expect("runs");
        graph.outputs.iter().map(|&o| values[o].clone()).collect()
    }

    #[test]
    fn windows_follow_their_pads_strides_and_counts() {
        // x = 1..9 as 3x3; a 2x2 window, pads 1, stride 2: four windows, one corner
        // each of x's corners, the last one whole.
        let x: Vec<f64> = (1..=9).map(f64::from).collect();
        let out = outputs(
            quote! {
                model M {
                    input x: f32[1, 1, 3, 3];
                    weight w: f32[1, 1, 2, 2] = [1.0, 0.0, 0.0, 1.0];
                    weight b: f32[1] = [0.5];
                    output c = Conv(x, w, b, pads = [1, 1, 1, 1], strides = [2, 2]);
                    output m = MaxPool(x, kernel_shape = [2, 2], pads = [1, 1, 1, 1], strides = [2, 2]);
                    output a = AveragePool(x, kernel_shape = [2, 2], pads = [1, 1, 1, 1], strides = [2, 2]);
                    output p = AveragePool(x, kernel_shape = [2, 2], pads = [1, 1, 1, 1], strides = [2, 2], count_include_pad = 1);
                    output g = GlobalAveragePool(x);
                }
            },
            &[x],
        );
        assert_eq!(out[0], [1.5, 3.5, 7.5, 14.5]);
        assert_eq!(out[1], [1.0, 3.0, 7.0, 9.0]);
        assert_eq!(out[2], [1.0, 2.5, 5.5, 7.0]);
        assert_eq!(out[3], [0.25, 1.25, 2.75, 7.0]);
        assert_eq!(out[4], [5.0]);
    }

    #[test]
    fn products_broadcasts_and_softmax_follow_their_definitions() {
        let out = outputs(
            quote! {
                model M {
                    input x: f32[2, 3];
                    weight w: f32[2, 3] = [1.0, 0.0, -1.0, 2.0, 1.0, 0.0];
                    weight c: f32[2] = [10.0, 20.0];
                    output g = Gemm(x, w, c, transB = 1, alpha = 2.0);
                    output m = MatMul(x, Transpose(w));
                    weight c2: f32[3] = [1.0, 2.0, 3.0];
                    output s = Sub(x, c2);
                    output t = Transpose(x);
                    output p = Softmax(Constant(value_floats = [0.0, 0.0]));
                }
            },
            &[vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]],
        );
        // Row [1, 2, 3]: w rows give -2 and 4; alpha 2, plus c.
        assert_eq!(out[0], [6.0, 28.0, 6.0, 46.0]);
        assert_eq!(out[1], [-2.0, 4.0, -2.0, 13.0]);
        assert_eq!(out[2], [0.0, 0.0, 0.0, 3.0, 3.0, 3.0]);
        assert_eq!(out[3], [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert_eq!(out[4], [0.5, 0.5]);
    }
}
