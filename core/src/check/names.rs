//! Scopes and names: tensors created and named, names bound, shadowed, poisoned after
//! a failed definition, looked up (with a suggestion when unknown), and block value
//! parameters substituted.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::Ident;

use crate::ir::{Data, Tensor, TensorId, TensorKind};
use crate::suggest;
use crate::syntax::{Arg, Call, Expr};
use crate::types::{Shape, TensorType};

use super::Checker;

impl<'m> Checker<'m> {
    pub(super) fn new_tensor(
        &mut self,
        name: String,
        ty: TensorType,
        kind: TensorKind,
        doc: &str,
        value: Option<Data>,
    ) -> TensorId {
        self.graph.tensors.push(Tensor {
            name,
            ty,
            kind,
            doc: doc.to_string(),
            value,
            file: None,
        });
        self.graph.tensors.len() - 1
    }

    /// Adds a weight (an initializer) with a full name.
    pub(crate) fn add_weight(&mut self, name: String, shape: &[usize], data: Data) -> TensorId {
        let dtype = data.dtype();
        let ty = TensorType {
            dtype,
            shape: Shape::fixed(shape),
        };
        let id = self.new_tensor(name, ty, TensorKind::Weight, "", Some(data));
        self.graph.weights.push(id);
        id
    }

    pub(super) fn name_tensor(&mut self, id: TensorId, name: &Ident) {
        if self.anonymous.remove(&id) {
            self.graph.tensors[id].name = format!("{}{name}", self.prefix());
        }
    }

    pub(super) fn bind(&mut self, name: &Ident, id: TensorId) {
        let key = name.to_string();
        if key == "arena" || key.starts_with("__") {
            self.error(
                name.span(),
                format!("`{key}` is reserved for the generated forward pass: choose another name"),
            );
            self.poison(name);
            return;
        }
        if let Some((_, first)) = self.visible(&key) {
            let mut e = syn::Error::new(
                name.span(),
                format!("`{key}` is defined twice: every name in a model is defined once"),
            );
            e.combine(syn::Error::new(
                first,
                format!("`{key}` is first defined here"),
            ));
            self.sink.push(e);
            return;
        }
        self.scope().names.insert(key, (Some(id), name.span()));
    }

    /// Records a name whose definition failed, so its uses stay quiet.
    pub(super) fn poison(&mut self, name: &Ident) {
        self.scope()
            .names
            .entry(name.to_string())
            .or_insert((None, name.span()));
    }

    /// A name as seen from the current scope: its own names, then, through
    /// control-flow bodies, those of the enclosing scopes.
    pub(super) fn visible(&self, key: &str) -> Option<(Option<TensorId>, Span)> {
        for scope in self.scopes.iter().rev() {
            if let Some(&found) = scope.names.get(key) {
                return Some(found);
            }
            if !scope.transparent {
                break;
            }
        }
        None
    }

    pub(super) fn lookup(&mut self, name: &Ident) -> Option<TensorId> {
        let key = name.to_string();
        if let Some((id, _)) = self.visible(&key) {
            return id;
        }
        let scope = self.scopes.last().expect("the model scope");
        let known: Vec<&str> = scope.names.keys().map(String::as_str).collect();
        let hint = suggest::did_you_mean(&key, &known)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        let where_ = if scope.transparent {
            "this body or the scopes around it"
        } else if self.scopes.len() > 1 {
            "this block (blocks see their parameters and their own names)"
        } else {
            "this model"
        };
        self.error(
            name.span(),
            format!("cannot find `{key}` in {where_}{hint}"),
        );
        None
    }

    /// Replaces the block's value parameters inside an expression by their values.
    pub(crate) fn subst(&self, expr: &Expr) -> Expr {
        let values = &self.scopes.last().expect("the model scope").values;
        if values.is_empty() {
            return expr.clone();
        }
        subst_in(expr, values)
    }
}

fn subst_in(expr: &Expr, values: &HashMap<String, Expr>) -> Expr {
    match expr {
        Expr::Name(n) => values
            .get(&n.to_string())
            .cloned()
            .unwrap_or_else(|| expr.clone()),
        Expr::List(items, span) => {
            Expr::List(items.iter().map(|e| subst_in(e, values)).collect(), *span)
        }
        Expr::Call(c) => Expr::Call(Call {
            func: c.func.clone(),
            args: c
                .args
                .iter()
                .map(|a| match a {
                    Arg::Pos(e) => Arg::Pos(subst_in(e, values)),
                    Arg::Named(n, e) => Arg::Named(n.clone(), subst_in(e, values)),
                })
                .collect(),
            close: c.close,
        }),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::errors;
    use quote::quote;

    #[test]
    fn a_name_defined_twice_points_at_both_definitions() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                let h = Relu(x);
                let h = Tanh(x);
                output y = Relu(h);
            }
        });
        assert_eq!(
            e,
            [
                "`h` is defined twice: every name in a model is defined once",
                "`h` is first defined here",
            ]
        );
    }

    #[test]
    fn an_unknown_name_suggests_a_close_one() {
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                let hidden = Relu(x);
                output y = Tanh(hiden);
            }
        });
        assert_eq!(
            e,
            ["cannot find `hiden` in this model; did you mean `hidden`?"]
        );
    }

    #[test]
    fn a_failed_definition_is_not_reported_again_where_it_is_used() {
        // `h` fails (an unknown operator); its two uses add nothing.
        let e = errors(quote! {
            model M {
                input x: f32[1, 4];
                let h = Rleu(x);
                let g = Tanh(h);
                output y = Add(h, g);
            }
        });
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("unknown operator `Rleu`"), "{e:?}");
    }

    #[test]
    fn the_forward_pass_s_own_names_are_reserved() {
        let e = errors(quote! {
            model M {
                input arena: f32[1, 4];
                output y = Relu(arena);
            }
        });
        assert_eq!(
            e,
            ["`arena` is reserved for the generated forward pass: choose another name"]
        );
    }
}
