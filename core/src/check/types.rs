//! Declared types: dtypes and shapes of inputs and weights (named dims, device dims,
//! size limits) and literals used as tensors.

use crate::init;
use crate::ir::{Data, TensorId};
use crate::suggest;
use crate::syntax::{DimExpr, Expr, TypeExpr};
use crate::types::{DType, Dim, MAX_DIM, Shape, TensorType, checked_numel};

use super::Checker;

impl<'m> Checker<'m> {
    pub(super) fn tensor_type(&mut self, ty: &TypeExpr, weight: bool) -> Option<TensorType> {
        let name = ty.dtype.to_string();
        let dtype = DType::from_name(&name);
        if dtype.is_none() {
            let all: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
            let hint = suggest::did_you_mean(&name, &all)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            self.error(
                ty.dtype.span(),
                format!(
                    "unknown dtype `{name}`: {hint}expected one of {}",
                    all.join(", ")
                ),
            );
        }
        let mut dims = Vec::new();
        let mut ok = dtype.is_some();
        for d in &ty.dims {
            match d {
                // An input may have no elements (a CastLike target read for its type
                // only); `build` refuses it where an operator would read its values.
                DimExpr::Fixed(lit) => match lit.base10_parse::<usize>() {
                    Ok(n) if (n > 0 || !weight) && n <= MAX_DIM => dims.push(Dim::Fixed(n)),
                    _ => {
                        ok = false;
                        let least = if weight { 1 } else { 0 };
                        self.error(
                            lit.span(),
                            format!("a dimension must be an integer in {least}..={MAX_DIM}"),
                        );
                    }
                },
                DimExpr::Sym(id) => match self.subst(&Expr::Name(id.clone())) {
                    Expr::Int(n, _) if n > 0 && n as u64 <= MAX_DIM as u64 => {
                        dims.push(Dim::Fixed(n as usize))
                    }
                    Expr::Name(_) if weight => {
                        ok = false;
                        self.error(
                            id.span(),
                            format!("a weight needs fixed dimensions; `{id}` is symbolic"),
                        );
                    }
                    Expr::Name(_) => dims.push(Dim::Sym(id.to_string())),
                    other => {
                        ok = false;
                        self.error(
                            id.span(),
                            format!(
                                "the dimension `{id}` is {}, not a positive integer",
                                other.describe()
                            ),
                        );
                    }
                },
            }
        }
        let shape = Shape(dims);
        if ok && self.device_numel(&shape).is_none() {
            ok = false;
            self.error(
                ty.bracket,
                format!("{shape} has more than {MAX_DIM} elements on the device"),
            );
        }
        ok.then(|| TensorType {
            dtype: dtype.expect("checked above"),
            shape,
        })
    }

    /// Elements of a shape on the device, if at most [`MAX_DIM`].
    pub(super) fn device_numel(&self, shape: &Shape) -> Option<usize> {
        checked_numel(shape.0.iter().map(|d| match d {
            Dim::Fixed(n) => *n,
            Dim::Sym(s) => self.graph.device_dims.get(s).copied().unwrap_or(1),
        }))
    }

    /// A literal positional argument as a constant initializer of `dtype`, or without
    /// one: integers are i64, anything with a float is f32.
    pub(super) fn literal(
        &mut self,
        e: &Expr,
        name: String,
        dtype: Option<DType>,
    ) -> Option<TensorId> {
        let mut shape = Vec::new();
        let mut probe = e;
        while let Expr::List(items, _) = probe {
            shape.push(items.len());
            match items.first() {
                Some(first) => probe = first,
                None => break,
            }
        }
        let data = match dtype {
            Some(DType::F32) => init::evaluate(e, &shape).map(Data::F32),
            Some(DType::I64) => init::evaluate_i64(e, &shape).map(Data::I64),
            Some(dtype) => {
                init::evaluate_typed(e, &shape, dtype).map(|values| Data::Typed { dtype, values })
            }
            None if contains_float(e) => init::evaluate(e, &shape).map(Data::F32),
            None => init::evaluate_i64(e, &shape).map(Data::I64),
        };
        match data {
            Ok(d) => Some(self.add_weight(name, &shape, d)),
            Err((span, msg)) => {
                self.error(span, msg);
                None
            }
        }
    }
}

fn contains_float(e: &Expr) -> bool {
    match e {
        Expr::Float(..) => true,
        Expr::List(items, _) => items.iter().any(contains_float),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::errors;
    use quote::quote;

    #[test]
    fn an_unknown_dtype_suggests_a_close_one() {
        let e = errors(quote! {
            model M {
                input x: f33[1, 4];
                output y = Relu(x);
            }
        });
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("unknown dtype `f33`: did you mean `f32`?"),
            "{e:?}"
        );
    }

    #[test]
    fn a_weight_needs_fixed_dimensions_and_a_dimension_is_positive() {
        let e = errors(quote! {
            model M {
                input x: f32[n, 4];
                weight w: f32[n, 4] = zeros();
                weight v: f32[0, 4] = zeros();
                output y = Relu(x);
            }
        });
        let expected = format!(
            "a dimension must be an integer in 1..={}",
            crate::types::MAX_DIM
        );
        assert!(
            e.contains(&"a weight needs fixed dimensions; `n` is symbolic".to_string()),
            "{e:?}"
        );
        assert!(e.contains(&expected), "{e:?}");
    }
}
