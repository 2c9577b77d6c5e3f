//! `Einsum` (opset 12 semantics) for one or two operands: the equations of matrix
//! products, batched products, transposes, outer products and contractions, explicit
//! (`ij,jk->ik`) or implicit (`ij,jk`: the letters seen once, in alphabetical order).
//! Not supported, with an error saying so: ellipsis (`...`), a letter repeated within
//! one operand (diagonals, traces), more than two operands.

use quote::quote;

use crate::ops::schema::prelude::*;
use crate::types::{Shape, TensorType};

pub static EINSUM: OpSchema = OpSchema {
    cases: |_| {
        cases(&[
            "input a: f32[3, 4]; input b: f32[4, 5]; output y = Einsum(a, b, equation = \"ij,jk->ik\"); output z = Einsum(a, b, equation = \"ij,jk\"); output t = Einsum(a, equation = \"ij->ji\");",
            "input q: f32[2, 3, 6, 4]; input k: f32[2, 3, 5, 4]; output y = Einsum(q, k, equation = \"bhqd, bhkd -> bhqk\");",
            "input u: f32[3]; input v: f32[5]; input t: f32[3, 4, 5]; input b: f32[4, 5]; output y = Einsum(u, v, equation = \"i,j->ij\"); output z = Einsum(t, b, equation = \"ijk,jk->i\"); output s = Einsum(t, equation = \"ijk->k\");",
            "input a: f64[2, 3, 4]; input b: f64[2, 4, 5]; output y = Einsum(a, b, equation = \"bij,bjk->bik\"); output t = Einsum(a, equation = \"bij->\");",
        ])
    },
    op_type: "Einsum",
    inputs: &[input("Inputs")],
    variadic: true,
    attrs: &[attr("equation", AttrKind::Str, AttrDefault::Required)],
    dtypes: &[DType::F32, DType::F64],
    infer,
    lower,
    macs: |cx| plan_of(cx).map_or(0, |p| p.extents.iter().product::<usize>() as u64),
    ..BASE
};

/// A parsed equation over the device or declared sizes.
struct Plan {
    /// The size of every letter, in first-seen order.
    extents: Vec<usize>,
    /// Per operand, then for the output: the stride of every letter (0 when absent).
    strides: Vec<Vec<usize>>,
    /// The output dimensions.
    out: Vec<usize>,
}

fn err(msg: String) -> OpError {
    OpError::attr("equation", msg)
}

/// Parses `equation` against operand shapes.
fn parse(equation: &str, shapes: &[Vec<usize>]) -> Result<Plan, OpError> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    if eq.contains("...") {
        return Err(err(
            "Einsum with an ellipsis (...) is not supported: name every axis".into(),
        ));
    }
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != shapes.len() {
        return Err(err(format!(
            "Einsum equation \"{equation}\" has {} operand terms for {} inputs",
            terms.len(),
            shapes.len()
        )));
    }
    let mut letters: Vec<char> = Vec::new();
    let mut extents: Vec<usize> = Vec::new();
    for (k, (term, shape)) in terms.iter().zip(shapes).enumerate() {
        if !term.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(err(format!("Einsum term \"{term}\" must be letters only")));
        }
        if term.len() != shape.len() {
            return Err(err(format!(
                "Einsum term \"{term}\" names {} axes, but input {k} has rank {} ({shape:?})",
                term.len(),
                shape.len()
            )));
        }
        let chars: Vec<char> = term.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if chars[..i].contains(&c) {
                return Err(err(format!(
                    "Einsum term \"{term}\" repeats `{c}` (a diagonal or trace), which is not supported"
                )));
            }
            match letters.iter().position(|&l| l == c) {
                Some(p) if extents[p] != shape[i] => {
                    return Err(err(format!(
                        "Einsum letter `{c}` is {} in one input and {} in input {k}",
                        extents[p], shape[i]
                    )));
                }
                Some(_) => {}
                None => {
                    letters.push(c);
                    extents.push(shape[i]);
                }
            }
        }
    }
    let output: Vec<char> = match rhs {
        Some(r) => {
            let out: Vec<char> = r.chars().collect();
            for (i, &c) in out.iter().enumerate() {
                if !letters.contains(&c) {
                    return Err(err(format!("Einsum output letter `{c}` is in no input")));
                }
                if out[..i].contains(&c) {
                    return Err(err(format!("Einsum output repeats `{c}`")));
                }
            }
            out
        }
        None => {
            let mut once: Vec<char> = letters
                .iter()
                .copied()
                .filter(|&c| terms.iter().filter(|t| t.contains(c)).count() == 1)
                .collect();
            once.sort_unstable();
            once
        }
    };
    let stride_of = |term: &[char], dims: &[usize]| -> Vec<usize> {
        let mut s = vec![0; letters.len()];
        let mut acc = 1;
        for i in (0..term.len()).rev() {
            let p = letters.iter().position(|&l| l == term[i]).expect("seen");
            s[p] = acc;
            acc *= dims[i];
        }
        s
    };
    let out: Vec<usize> = output
        .iter()
        .map(|c| extents[letters.iter().position(|l| l == c).expect("checked")])
        .collect();
    let mut strides: Vec<Vec<usize>> = terms
        .iter()
        .zip(shapes)
        .map(|(t, d)| stride_of(&t.chars().collect::<Vec<_>>(), d))
        .collect();
    strides.push(stride_of(&output, &out));
    Ok(Plan {
        extents,
        strides,
        out,
    })
}

fn infer(cx: &InferCtx) -> Result<Vec<TensorType>, OpError> {
    let n = cx.inputs.len();
    if !(1..=2).contains(&n) {
        return Err(OpError::op(format!(
            "Einsum supports one or two inputs, got {n}"
        )));
    }
    let mut shapes = Vec::new();
    for i in 0..n {
        let t = cx.input(i);
        let dims = t
            .shape
            .0
            .iter()
            .map(|d| d.fixed())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                OpError::input(i, format!("Einsum needs fixed dimensions, got {}", t.shape))
            })?;
        shapes.push(dims);
    }
    let plan = parse(cx.attrs.string("equation").unwrap_or_default(), &shapes)?;
    Ok(vec![TensorType {
        dtype: cx.input(0).dtype,
        shape: Shape::fixed(&plan.out),
    }])
}

fn plan_of(cx: &LowerCtx) -> Option<Plan> {
    let shapes: Vec<Vec<usize>> = cx
        .inputs
        .iter()
        .flatten()
        .map(|o| o.shape.clone())
        .collect();
    parse(cx.attrs.string("equation").unwrap_or_default(), &shapes).ok()
}

fn lower(cx: &LowerCtx) -> TokenStream {
    let plan = plan_of(cx).expect("checked during inference");
    let kernels = kernels();
    let l = plan.extents.len();
    let ext = &plan.extents;
    let a = &cx.input(0).expr;
    let sa = &plan.strides[0];
    let sy = plan.strides.last().expect("output strides");
    let y = &cx.outputs[0].expr;
    match cx.inputs.len() {
        1 => quote! {
            #kernels::gemm::einsum::<_, #l>(#a, &[#(#sa),*], ::core::option::Option::None, #y, &[#(#sy),*], &[#(#ext),*]);
        },
        _ => {
            let b = &cx.input(1).expr;
            let sb = &plan.strides[1];
            quote! {
                #kernels::gemm::einsum::<_, #l>(#a, &[#(#sa),*], ::core::option::Option::Some((#b, &[#(#sb),*])), #y, &[#(#sy),*], &[#(#ext),*]);
            }
        }
    }
}
