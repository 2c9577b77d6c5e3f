//! A layer call's arguments, read as the kinds the layer wants; a wrong kind or value is
//! reported at its token.

use proc_macro2::Span;

use crate::syntax::{Call, Expr};
use crate::types::MAX_DIM;

use super::cx::LayerCx;

/// The arguments of one layer call, checked against what the layer takes.
#[derive(Clone)]
pub(super) struct Args<'c> {
    pub(super) call: &'c Call,
    pub(super) layer: &'static str,
    pub(super) pos: Vec<&'c Expr>,
}

impl<'c> Args<'c> {
    pub(super) fn named(&self, name: &str) -> Option<&'c Expr> {
        self.call.named().find(|(n, _)| *n == name).map(|(_, e)| e)
    }

    pub(super) fn int(
        &self,
        cx: &mut dyn LayerCx,
        e: Option<&Expr>,
        what: &str,
        default: i64,
    ) -> Option<i64> {
        match e {
            None => Some(default),
            Some(Expr::Int(v, _)) => Some(*v),
            Some(Expr::Bool(b, _)) => Some(i64::from(*b)),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{what}` to be an integer, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn positive(
        &self,
        cx: &mut dyn LayerCx,
        e: Option<&Expr>,
        what: &str,
        default: i64,
    ) -> Option<usize> {
        let v = self.int(cx, e, what, default)?;
        if v <= 0 || v as u64 > MAX_DIM as u64 {
            cx.error(
                e.map_or(self.call.func.span(), Expr::span),
                format!("{} expects `{what}` in 1..={MAX_DIM}, got {v}", self.layer),
            );
            return None;
        }
        Some(v as usize)
    }

    /// An integer or a list of `n` integers (`3` means `[3, 3]`).
    pub(super) fn ints(
        &self,
        cx: &mut dyn LayerCx,
        e: Option<&Expr>,
        what: &str,
        n: usize,
        default: i64,
    ) -> Option<Vec<i64>> {
        match e {
            None => Some(vec![default; n]),
            Some(Expr::Int(v, _)) if v.unsigned_abs() <= MAX_DIM as u64 => Some(vec![*v; n]),
            Some(Expr::List(items, span)) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Expr::Int(v, _) if v.unsigned_abs() <= MAX_DIM as u64 => out.push(*v),
                        other => {
                            cx.error(
                                other.span(),
                                format!("{} expects integers in `{what}`", self.layer),
                            );
                            return None;
                        }
                    }
                }
                if out.len() != n {
                    cx.error(
                        *span,
                        format!(
                            "{} expects `{what}` as one integer or {n} of them, got {}",
                            self.layer,
                            out.len()
                        ),
                    );
                    return None;
                }
                Some(out)
            }
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{what}` as an integer or a list, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn float(&self, cx: &mut dyn LayerCx, name: &str, default: f32) -> Option<f32> {
        match self.named(name) {
            None => Some(default),
            Some(Expr::Int(v, _)) => Some(*v as f32),
            Some(Expr::Float(v, _)) => Some(*v as f32),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{name}` to be a number, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn boolean(&self, cx: &mut dyn LayerCx, name: &str, default: bool) -> Option<bool> {
        match self.named(name) {
            None => Some(default),
            Some(Expr::Bool(b, _)) => Some(*b),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{name}` to be true or false, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn string(&self, cx: &mut dyn LayerCx, name: &str, default: &str) -> Option<String> {
        match self.named(name) {
            None => Some(default.to_string()),
            Some(Expr::Str(s)) => Some(s.value()),
            Some(other) => {
                cx.error(
                    other.span(),
                    format!(
                        "{} expects `{name}` to be a string, found {}",
                        self.layer,
                        other.describe()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn explicit_name(&self) -> Option<(String, Span)> {
        match self.named("name") {
            Some(Expr::Str(s)) => Some((s.value(), s.span())),
            _ => None,
        }
    }

    pub(super) fn x_span(&self) -> Span {
        self.pos.first().map_or(self.call.func.span(), |e| e.span())
    }
}
