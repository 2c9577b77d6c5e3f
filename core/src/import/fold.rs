//! Compile-time evaluation of the nodes an exporter leaves around static shapes (what
//! onnx-simplifier does): once the dims are fixed, `Shape -> Gather -> Unsqueeze ->
//! Concat -> Reshape` chains, `ConstantOfShape`, `Range`, `Cast`, `Expand` and their
//! arithmetic have known inputs, and their outputs become constants.

use tinyonnx_proto as pb;

use super::proto::{self, Const};
use crate::data::Data;
use crate::types::DType;

/// The most values one folded output may have (as many as one initializer may).
pub const MAX_FOLD_VALUES: usize = crate::init::MAX_INIT_VALUES;

/// Element values while folding: integers (and bools) exactly, floats as f64.
#[derive(Debug, Clone)]
enum V {
    I(Vec<i64>),
    F(Vec<f64>),
}

impl V {
    fn len(&self) -> usize {
        match self {
            V::I(v) => v.len(),
            V::F(v) => v.len(),
        }
    }
    fn pick(&self, idx: &[usize]) -> V {
        match self {
            V::I(v) => V::I(idx.iter().map(|&i| v[i]).collect()),
            V::F(v) => V::F(idx.iter().map(|&i| v[i]).collect()),
        }
    }
}

fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F64)
}

fn values(c: &Const) -> V {
    match &c.data {
        Data::F32(v) => V::F(v.iter().map(|&x| f64::from(x)).collect()),
        Data::I64(v) => V::I(v.clone()),
        Data::Typed { dtype, values } if is_float(*dtype) => V::F(values.clone()),
        Data::Typed { values, .. } => V::I(values.iter().map(|&x| x as i64).collect()),
    }
}

/// Values of element type `dtype` (rounded to f32, wrapped to the integer's width).
fn make(dtype: DType, dims: Vec<usize>, v: V) -> Const {
    let data = match (dtype, v) {
        (DType::F32, V::F(v)) => Data::F32(v.into_iter().map(|x| x as f32).collect()),
        (DType::F32, V::I(v)) => Data::F32(v.into_iter().map(|x| x as f32).collect()),
        (DType::I64, V::I(v)) => Data::I64(v),
        (DType::I64, V::F(v)) => Data::I64(v.into_iter().map(|x| x as i64).collect()),
        (dtype, v) => {
            let f = |x: f64| match dtype {
                DType::F64 => x,
                DType::I32 => f64::from(x as i64 as i32),
                DType::I8 => f64::from(x as i64 as i8),
                DType::U8 => f64::from(x as i64 as u8),
                DType::I16 => f64::from(x as i64 as i16),
                DType::U16 => f64::from(x as i64 as u16),
                DType::U32 => f64::from(x as i64 as u32),
                DType::U64 => (x as i64 as u64) as f64,
                DType::Bool => f64::from(u8::from(x != 0.0)),
                DType::F32 | DType::I64 => unreachable!("handled above"),
            };
            let values = match v {
                V::F(v) => v.into_iter().map(f).collect(),
                V::I(v) => v.into_iter().map(|x| f(x as f64)).collect(),
            };
            Data::Typed { dtype, values }
        }
    };
    Const { dims, data }
}

fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// For each element of `out` (row-major), the index of the element of a tensor of
/// `dims` that broadcasting reads.
fn broadcast_index(dims: &[usize], out: &[usize]) -> Vec<usize> {
    let bs = crate::types::broadcast_strides(dims, out);
    let n: usize = out.iter().product();
    let os = strides(out);
    (0..n)
        .map(|flat| {
            let mut rem = flat;
            let mut idx = 0;
            for (k, &s) in os.iter().enumerate() {
                idx += rem / s * bs[k];
                rem %= s;
            }
            idx
        })
        .collect()
}

fn broadcast_dims(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|i| {
            let x = if i + a.len() >= r {
                a[i + a.len() - r]
            } else {
                1
            };
            let y = if i + b.len() >= r {
                b[i + b.len() - r]
            } else {
                1
            };
            match (x, y) {
                (x, y) if x == y => Ok(x),
                (1, y) => Ok(y),
                (x, 1) => Ok(x),
                _ => Err(format!("dims {a:?} and {b:?} do not broadcast")),
            }
        })
        .collect()
}

fn axis(a: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if (0..r).contains(&v) {
        Ok(v as usize)
    } else {
        Err(format!("axis {a} is out of range for rank {rank}"))
    }
}

fn ints_of(c: &Const) -> Result<Vec<i64>, String> {
    match values(c) {
        V::I(v) => Ok(v),
        V::F(_) => Err("expects integers".into()),
    }
}

fn check_len(dims: &[usize]) -> Result<usize, String> {
    crate::types::checked_numel(dims.iter().copied())
        .filter(|&n| n <= MAX_FOLD_VALUES)
        .ok_or_else(|| format!("would make {dims:?} values, more than {MAX_FOLD_VALUES}"))
}

/// Whether `fold` knows `op_type`.
pub fn folds(op_type: &str) -> bool {
    matches!(
        op_type,
        "Identity"
            | "Gather"
            | "Unsqueeze"
            | "Squeeze"
            | "Concat"
            | "Cast"
            | "Slice"
            | "Add"
            | "Sub"
            | "Mul"
            | "Div"
            | "Mod"
            | "Equal"
            | "Less"
            | "Greater"
            | "Min"
            | "Max"
            | "And"
            | "Or"
            | "Not"
            | "Where"
            | "Neg"
            | "Abs"
            | "Floor"
            | "Ceil"
            | "Sqrt"
            | "Reciprocal"
            | "ConstantOfShape"
            | "Range"
            | "Expand"
            | "Reshape"
            | "Flatten"
            | "Transpose"
    )
}

/// The outputs of a node in canonical form (inputs as inputs, see `convert`) whose
/// inputs are all known; an error says why the values are not valid for the operator.
pub fn fold(
    op_type: &str,
    node: &pb::NodeProto,
    inputs: &[Option<&Const>],
) -> Result<Vec<Const>, String> {
    let need = |i: usize| -> Result<&Const, String> {
        inputs
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| format!("needs input {i}"))
    };
    let out = match op_type {
        "Identity" => need(0)?.clone(),
        "Gather" => {
            let (data, idx) = (need(0)?, need(1)?);
            let r = data.dims.len();
            let ax = axis(proto::int(node, "axis").unwrap_or(0), r)?;
            let n = data.dims[ax] as i64;
            let ind = ints_of(idx)?
                .into_iter()
                .map(|i| {
                    let j = if i < 0 { i + n } else { i };
                    usize::try_from(j)
                        .ok()
                        .filter(|&j| (j as i64) < n)
                        .ok_or_else(|| format!("index {i} is out of range for a dim of {n}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let outer: usize = data.dims[..ax].iter().product();
            let inner: usize = data.dims[ax + 1..].iter().product();
            let mut dims = data.dims[..ax].to_vec();
            dims.extend(&idx.dims);
            dims.extend(&data.dims[ax + 1..]);
            check_len(&dims)?;
            let mut pick = Vec::new();
            for o in 0..outer {
                for &j in &ind {
                    pick.extend((0..inner).map(|k| (o * data.dims[ax] + j) * inner + k));
                }
            }
            make(data.data.dtype(), dims, values(data).pick(&pick))
        }
        "Unsqueeze" => {
            let data = need(0)?;
            let axes = ints_of(need(1)?)?;
            let r = data.dims.len() + axes.len();
            let mut ax: Vec<usize> = axes.iter().map(|&a| axis(a, r)).collect::<Result<_, _>>()?;
            ax.sort_unstable();
            let mut dims = data.dims.clone();
            for a in ax {
                if a > dims.len() {
                    return Err("axes out of range".into());
                }
                dims.insert(a, 1);
            }
            Const {
                dims,
                data: data.data.clone(),
            }
        }
        "Squeeze" => {
            let data = need(0)?;
            let r = data.dims.len();
            let axes: Vec<usize> = match inputs.get(1).copied().flatten() {
                Some(a) => ints_of(a)?
                    .iter()
                    .map(|&a| axis(a, r))
                    .collect::<Result<_, _>>()?,
                None => (0..r).filter(|&i| data.dims[i] == 1).collect(),
            };
            if axes.iter().any(|&a| data.dims[a] != 1) {
                return Err(format!("squeezes a dim that is not 1 in {:?}", data.dims));
            }
            let dims = (0..r)
                .filter(|i| !axes.contains(i))
                .map(|i| data.dims[i])
                .collect();
            Const {
                dims,
                data: data.data.clone(),
            }
        }
        "Concat" => {
            let parts: Vec<&Const> = inputs.iter().copied().flatten().collect();
            let first = parts.first().ok_or("has no inputs")?;
            let r = first.dims.len();
            let ax = axis(proto::int(node, "axis").unwrap_or(0), r)?;
            let mut dims = first.dims.clone();
            dims[ax] = 0;
            for p in &parts {
                if p.dims.len() != r
                    || (0..r).any(|i| i != ax && p.dims[i] != first.dims[i])
                    || p.data.dtype() != first.data.dtype()
                {
                    return Err("inputs do not concatenate".into());
                }
                dims[ax] += p.dims[ax];
            }
            check_len(&dims)?;
            let outer: usize = dims[..ax].iter().product();
            let vals: Vec<V> = parts.iter().map(|p| values(p)).collect();
            let mut out = match &vals[0] {
                V::I(_) => V::I(Vec::new()),
                V::F(_) => V::F(Vec::new()),
            };
            for o in 0..outer {
                for (p, v) in parts.iter().zip(&vals) {
                    let chunk: usize = p.dims[ax..].iter().product();
                    let range: Vec<usize> = (o * chunk..(o + 1) * chunk).collect();
                    match (&mut out, v.pick(&range)) {
                        (V::I(o), V::I(v)) => o.extend(v),
                        (V::F(o), V::F(v)) => o.extend(v),
                        _ => unreachable!("one dtype"),
                    }
                }
            }
            make(first.data.dtype(), dims, out)
        }
        "Cast" => {
            let x = need(0)?;
            let to = proto::int(node, "to").unwrap_or(0) as i32;
            let dtype =
                proto::dtype(to).ok_or_else(|| format!("casts to {}", proto::type_name(to)))?;
            // A narrow format: its grid, in the carrier (the function the kernel calls).
            if let Some(n) = tinyonnx_layout::narrow::Narrow::from_onnx(i64::from(to)) {
                let sat = proto::int(node, "saturate").unwrap_or(1) != 0;
                let v = match values(x) {
                    V::I(v) if n.is_int() => V::I(v.into_iter().map(|i| n.wrap(i)).collect()),
                    V::I(v) => V::F(v.into_iter().map(|i| n.round(i as f64, sat)).collect()),
                    V::F(v) if n.is_int() && v.iter().any(|f| f.is_nan() || f.abs() >= 9.0e15) => {
                        return Err(format!(
                            "casts NaN or a value beyond 2^53 to {} at compile time, where the result is undefined",
                            n.name()
                        ));
                    }
                    V::F(v) => V::F(v.into_iter().map(|f| n.round(f, sat)).collect()),
                };
                return Ok(vec![make(dtype, x.dims.clone(), v)]);
            }
            let v = match (values(x), is_float(dtype)) {
                // Float to integer truncates toward zero, as ONNX Runtime does.
                (V::F(v), false) if dtype != DType::Bool => {
                    V::I(v.into_iter().map(|f| f.trunc() as i64).collect())
                }
                (V::F(v), false) => V::I(v.into_iter().map(|f| i64::from(f != 0.0)).collect()),
                (v, _) => v,
            };
            make(dtype, x.dims.clone(), v)
        }
        "Slice" => {
            let data = need(0)?;
            let r = data.dims.len();
            let starts = ints_of(need(1)?)?;
            let ends = ints_of(need(2)?)?;
            let axes: Vec<usize> = match inputs.get(3).copied().flatten() {
                Some(a) => ints_of(a)?
                    .iter()
                    .map(|&a| axis(a, r))
                    .collect::<Result<_, _>>()?,
                None => (0..starts.len()).collect(),
            };
            let steps = match inputs.get(4).copied().flatten() {
                Some(s) => ints_of(s)?,
                None => vec![1; starts.len()],
            };
            if ends.len() != starts.len()
                || axes.len() != starts.len()
                || steps.len() != starts.len()
            {
                return Err("starts, ends, axes and steps differ in length".into());
            }
            // Per axis: first index and step, and how many (in i128: the file's values
            // may be anywhere in i64).
            let mut sel: Vec<(i64, i64, usize)> = data.dims.iter().map(|&d| (0, 1, d)).collect();
            for k in 0..starts.len() {
                let d = data.dims[axes[k]] as i128;
                let step = i128::from(steps[k]);
                if step == 0 {
                    return Err("has a step of 0".into());
                }
                if d == 0 {
                    // Nothing to take (and no index to clamp to going backwards).
                    sel[axes[k]] = (0, 1, 0);
                    continue;
                }
                let clampi = |v: i64, lo: i128, hi: i128| {
                    let v = i128::from(v);
                    (if v < 0 { v + d } else { v }).clamp(lo, hi)
                };
                let (s, e) = if step > 0 {
                    (clampi(starts[k], 0, d), clampi(ends[k], 0, d))
                } else {
                    (clampi(starts[k], 0, d - 1), clampi(ends[k], -1, d - 1))
                };
                let n = if step > 0 {
                    (e - s + step - 1).max(0) / step
                } else {
                    (s - e - step - 1).max(0) / -step
                };
                // Both fit: s is within the dim, and a step beyond it takes one element.
                sel[axes[k]] = (s as i64, step.clamp(-d.max(1), d.max(1)) as i64, n as usize);
            }
            let dims: Vec<usize> = sel.iter().map(|s| s.2).collect();
            let n = check_len(&dims)?;
            let st = strides(&data.dims);
            let os = strides(&dims);
            let pick: Vec<usize> = (0..n)
                .map(|flat| {
                    let mut rem = flat;
                    let mut idx = 0i64;
                    for k in 0..r {
                        let i = (rem / os[k]) as i64;
                        rem %= os[k];
                        idx += (sel[k].0 + i * sel[k].1) * st[k] as i64;
                    }
                    idx as usize
                })
                .collect();
            make(data.data.dtype(), dims, values(data).pick(&pick))
        }
        "Add" | "Sub" | "Mul" | "Div" | "Mod" | "Equal" | "Less" | "Greater" | "Min" | "Max"
        | "And" | "Or" => {
            let fmod = proto::int(node, "fmod").unwrap_or(0) == 1;
            let (a, b) = (need(0)?, need(1)?);
            let dims = broadcast_dims(&a.dims, &b.dims)?;
            check_len(&dims)?;
            let (ia, ib) = (
                broadcast_index(&a.dims, &dims),
                broadcast_index(&b.dims, &dims),
            );
            let (va, vb) = (values(a).pick(&ia), values(b).pick(&ib));
            let cmp = matches!(op_type, "Equal" | "Less" | "Greater");
            let dtype = if cmp { DType::Bool } else { a.data.dtype() };
            let v = match (va, vb) {
                (V::I(x), V::I(y)) => {
                    let f = |p: i64, q: i64| -> Result<i64, String> {
                        Ok(match op_type {
                            "Add" => p.wrapping_add(q),
                            "Sub" => p.wrapping_sub(q),
                            "Mul" => p.wrapping_mul(q),
                            "Div" if q == 0 => return Err("divides an integer by zero".into()),
                            "Div" => p.wrapping_div(q),
                            "Mod" if q == 0 => return Err("divides an integer by zero".into()),
                            "Mod" => {
                                // fmod = 0 takes the divisor's sign.
                                let r = p.wrapping_rem(q);
                                if !fmod && r != 0 && ((r < 0) != (q < 0)) {
                                    r + q
                                } else {
                                    r
                                }
                            }
                            "Equal" => i64::from(p == q),
                            "Less" => i64::from(p < q),
                            "Greater" => i64::from(p > q),
                            "Min" => p.min(q),
                            "Max" => p.max(q),
                            "And" => i64::from(p != 0 && q != 0),
                            _ => i64::from(p != 0 || q != 0),
                        })
                    };
                    V::I(
                        x.iter()
                            .zip(&y)
                            .map(|(&p, &q)| f(p, q))
                            .collect::<Result<_, _>>()?,
                    )
                }
                (V::F(_), V::F(_)) if op_type == "Mod" && !fmod => {
                    return Err("takes floats only with fmod = 1".into());
                }
                (V::F(x), V::F(y)) => V::F(
                    x.iter()
                        .zip(&y)
                        .map(|(&p, &q)| match op_type {
                            "Add" => p + q,
                            "Sub" => p - q,
                            "Mul" => p * q,
                            "Div" => p / q,
                            // C's fmod, as `%` on floats.
                            "Mod" => p % q,
                            "Equal" => f64::from(u8::from(p == q)),
                            "Less" => f64::from(u8::from(p < q)),
                            "Greater" => f64::from(u8::from(p > q)),
                            // NaN propagates through Min and Max, as in ONNX Runtime.
                            "Min" if p.is_nan() || q.is_nan() => f64::NAN,
                            "Max" if p.is_nan() || q.is_nan() => f64::NAN,
                            "Min" => p.min(q),
                            _ => p.max(q),
                        })
                        .collect(),
                ),
                _ => return Err("mixes integer and float inputs".into()),
            };
            // A float product is rounded to the inputs' precision once, by `make`.
            make(dtype, dims, v)
        }
        "Not" => {
            let x = need(0)?;
            let v = match values(x) {
                V::I(v) => V::I(v.into_iter().map(|p| i64::from(p == 0)).collect()),
                V::F(_) => return Err("expects bools".into()),
            };
            make(DType::Bool, x.dims.clone(), v)
        }
        "Where" => {
            let (c, a, b) = (need(0)?, need(1)?, need(2)?);
            let dims = broadcast_dims(&broadcast_dims(&c.dims, &a.dims)?, &b.dims)?;
            check_len(&dims)?;
            let cond = ints_of(c)?;
            let (ic, ia, ib) = (
                broadcast_index(&c.dims, &dims),
                broadcast_index(&a.dims, &dims),
                broadcast_index(&b.dims, &dims),
            );
            let v = match (values(a), values(b)) {
                (V::I(x), V::I(y)) => V::I(
                    (0..ic.len())
                        .map(|k| if cond[ic[k]] != 0 { x[ia[k]] } else { y[ib[k]] })
                        .collect(),
                ),
                (V::F(x), V::F(y)) => V::F(
                    (0..ic.len())
                        .map(|k| if cond[ic[k]] != 0 { x[ia[k]] } else { y[ib[k]] })
                        .collect(),
                ),
                _ => return Err("mixes integer and float inputs".into()),
            };
            make(a.data.dtype(), dims, v)
        }
        "Neg" | "Abs" | "Floor" | "Ceil" | "Sqrt" | "Reciprocal" => {
            let x = need(0)?;
            let v = match values(x) {
                V::I(v) => V::I(match op_type {
                    "Neg" => v.into_iter().map(i64::wrapping_neg).collect(),
                    "Abs" => v.into_iter().map(i64::wrapping_abs).collect(),
                    "Floor" | "Ceil" => v,
                    _ => return Err("expects floats".into()),
                }),
                V::F(v) => V::F(
                    v.into_iter()
                        .map(|p| match op_type {
                            "Neg" => -p,
                            "Abs" => p.abs(),
                            "Floor" => p.floor(),
                            "Ceil" => p.ceil(),
                            "Sqrt" => p.sqrt(),
                            _ => 1.0 / p,
                        })
                        .collect(),
                ),
            };
            make(x.data.dtype(), x.dims.clone(), v)
        }
        "ConstantOfShape" => {
            let dims: Vec<usize> = ints_of(need(0)?)?
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| format!("makes a dim of {d}")))
                .collect::<Result<_, _>>()?;
            let n = check_len(&dims)?;
            let value = match proto::find(node, "value").and_then(|a| a.t.as_ref()) {
                Some(t) => proto::tensor(t).map_err(|e| format!("its value {e}"))?,
                None => Const {
                    dims: vec![1],
                    data: Data::F32(vec![0.0]),
                },
            };
            if value.data.len() != 1 {
                return Err("has a value of more than one element".into());
            }
            let v = match values(&value) {
                V::I(v) => V::I(vec![v[0]; n]),
                V::F(v) => V::F(vec![v[0]; n]),
            };
            make(value.data.dtype(), dims, v)
        }
        "Range" => {
            let (s, l, d) = (need(0)?, need(1)?, need(2)?);
            let dtype = s.data.dtype();
            let v = match (values(s), values(l), values(d)) {
                (V::I(s), V::I(l), V::I(d)) if s.len() == 1 && l.len() == 1 && d.len() == 1 => {
                    if d[0] == 0 {
                        return Err("has a delta of 0".into());
                    }
                    let span = i128::from(l[0]) - i128::from(s[0]);
                    let n = (span as f64 / d[0] as f64).ceil().max(0.0) as usize;
                    check_len(&[n])?;
                    // Every value lies between start and limit, so within i64.
                    V::I((0..n as i64).map(|k| s[0] + k * d[0]).collect())
                }
                (V::F(s), V::F(l), V::F(d)) if s.len() == 1 && l.len() == 1 && d.len() == 1 => {
                    let n = ((l[0] - s[0]) / d[0]).ceil().max(0.0);
                    if !n.is_finite() {
                        return Err("has no finite length".into());
                    }
                    check_len(&[n as usize])?;
                    V::F((0..n as usize).map(|k| s[0] + k as f64 * d[0]).collect())
                }
                _ => return Err("takes three scalars of one type".into()),
            };
            let n = v.len();
            make(dtype, vec![n], v)
        }
        "Expand" => {
            let x = need(0)?;
            let shape: Vec<usize> = ints_of(need(1)?)?
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| format!("makes a dim of {d}")))
                .collect::<Result<_, _>>()?;
            let dims = broadcast_dims(&x.dims, &shape)?;
            check_len(&dims)?;
            let idx = broadcast_index(&x.dims, &dims);
            make(x.data.dtype(), dims, values(x).pick(&idx))
        }
        "Reshape" | "Flatten" => {
            let x = need(0)?;
            let n = x.data.len();
            let dims = if op_type == "Flatten" {
                let ax = axis(proto::int(node, "axis").unwrap_or(1), x.dims.len() + 1)?;
                vec![x.dims[..ax].iter().product(), x.dims[ax..].iter().product()]
            } else {
                let shape = ints_of(need(1)?)?;
                let allowzero = proto::int(node, "allowzero").unwrap_or(0) != 0;
                reshape_dims(&x.dims, &shape, allowzero)?
            };
            if dims.iter().product::<usize>() != n {
                return Err(format!("cannot reshape {:?} to {dims:?}", x.dims));
            }
            Const {
                dims,
                data: x.data.clone(),
            }
        }
        "Transpose" => {
            let x = need(0)?;
            let r = x.dims.len();
            let perm: Vec<usize> = match proto::ints(node, "perm") {
                Some(p) if !p.is_empty() => {
                    p.iter().map(|&a| axis(a, r)).collect::<Result<_, _>>()?
                }
                _ => (0..r).rev().collect(),
            };
            let mut seen = perm.clone();
            seen.sort_unstable();
            if seen != (0..r).collect::<Vec<_>>() {
                return Err(format!("has perm {perm:?}, not a permutation of 0..{r}"));
            }
            let dims: Vec<usize> = perm.iter().map(|&p| x.dims[p]).collect();
            let st = strides(&x.dims);
            let os = strides(&dims);
            let pick: Vec<usize> = (0..x.data.len())
                .map(|flat| {
                    let mut rem = flat;
                    let mut idx = 0;
                    for k in 0..r {
                        idx += rem / os[k] * st[perm[k]];
                        rem %= os[k];
                    }
                    idx
                })
                .collect();
            make(x.data.dtype(), dims, values(x).pick(&pick))
        }
        other => return Err(format!("{other} does not fold")),
    };
    Ok(vec![out])
}

/// The dims a Reshape makes from `shape` (0 copies the input's dim unless `allowzero`,
/// one -1 takes what is left).
pub fn reshape_dims(input: &[usize], shape: &[i64], allowzero: bool) -> Result<Vec<usize>, String> {
    let n: usize = input.iter().product();
    let mut dims = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &s) in shape.iter().enumerate() {
        dims.push(match s {
            -1 if infer.is_none() => {
                infer = Some(i);
                1
            }
            0 if !allowzero => *input
                .get(i)
                .ok_or_else(|| format!("shape {shape:?} copies a dim the input lacks"))?,
            s if s >= 0 => s as usize,
            _ => return Err(format!("shape {shape:?} is not valid")),
        });
    }
    if let Some(i) = infer {
        let rest: usize = dims.iter().product();
        if rest == 0 || !n.is_multiple_of(rest) {
            return Err(format!("cannot reshape {input:?} to {shape:?}"));
        }
        dims[i] = n / rest;
    }
    Ok(dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Const {
        Const {
            dims: vec![v.len()],
            data: Data::I64(v.to_vec()),
        }
    }

    /// A backward Slice of an axis of length 0 is empty (a mutated file found it
    /// panicking: no last index to clamp the start to).
    #[test]
    fn a_backward_slice_of_an_empty_axis_is_empty() {
        let data = Const {
            dims: vec![0, 3],
            data: Data::F32(Vec::new()),
        };
        let (starts, ends, axes, steps) = (ints(&[-1]), ints(&[-10]), ints(&[0]), ints(&[-1]));
        let node = pb::NodeProto::default();
        let inputs = [
            Some(&data),
            Some(&starts),
            Some(&ends),
            Some(&axes),
            Some(&steps),
        ];
        let out = fold("Slice", &node, &inputs).expect("folds");
        assert_eq!(out[0].dims, vec![0, 3]);
    }
}
