//! A layer's spec, and the call being expanded that its builder works on.

use proc_macro2::Span;

use crate::init;
use crate::ir::{Data, TensorId};
use crate::ops::{self, At, AttrValue, attrs_with_defaults};
use crate::syntax::{Call, Expr};
use crate::types::TensorType;

use super::args::Args;
use super::cx::LayerCx;

/// One layer sugar: its name, the PyTorch and Keras class names a user may write for
/// it (suggested in the error), its positional parameters and named options, and the
/// builder that expands a checked call.
pub(crate) struct LayerSpec {
    pub(super) name: &'static str,
    pub(super) frameworks: &'static [&'static str],
    pub(super) positional: &'static [&'static str],
    pub(super) named: &'static [&'static str],
    pub(super) build: fn(&mut Layer<'_>) -> Option<Vec<TensorId>>,
}

/// One layer call being expanded: what every builder reads (the checked input, the
/// instance name, where weights come from) and the ways it makes weights and nodes.
pub(crate) struct Layer<'a> {
    pub(super) cx: &'a mut dyn LayerCx,
    pub(super) args: Args<'a>,
    pub(super) layer: &'static str,
    /// The instance name, the prefix of its weights and nodes.
    pub(super) name: String,
    pub(super) x: TensorId,
    pub(super) xt: TensorType,
    pub(super) x_span: Span,
    pub(super) func_span: Span,
    /// The `weights` file, if given.
    pub(super) file: Option<syn::LitStr>,
    /// The file holds PyTorch's layouts and names (`layout = "pytorch"`).
    pub(super) pytorch: bool,
    /// Instances of this layer before this one (seeds of the default initializers).
    pub(super) index: usize,
}

impl Layer<'_> {
    /// Checks and adds one node of `op` (errors at the input, or else at the layer).
    pub(super) fn build(
        &mut self,
        op: &str,
        node: String,
        inputs: Vec<Option<TensorId>>,
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> Option<Vec<TensorId>> {
        let op = ops::lookup(op).expect("layers lower to registered operators");
        let (x_span, func_span) = (self.x_span, self.func_span);
        let span_of = move |at: At| match at {
            At::Input(0) => x_span,
            _ => func_span,
        };
        self.cx
            .build(op, node, inputs, attrs_with_defaults(op, attrs), &span_of)
    }

    /// [`Layer::build`] for a node of one output named `<layer>.<part>` whose inputs are
    /// all present: the output.
    pub(super) fn node(
        &mut self,
        op: &str,
        part: &str,
        inputs: &[TensorId],
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> Option<TensorId> {
        let name = format!("{}.{part}", self.name);
        let inputs = inputs.iter().copied().map(Some).collect();
        Some(self.build(op, name, inputs, attrs)?[0])
    }

    /// A weight from its initializer `e` (or `default`), or from the `weights` file
    /// under `key`.
    pub(super) fn weight_keyed(
        &mut self,
        e: Option<&Expr>,
        default: Expr,
        wname: String,
        key: &str,
        shape: &[usize],
    ) -> Option<TensorId> {
        let values = match &self.file {
            Some(path) => self.cx.load_checked(path, Some(key), shape, &wname),
            None => init::evaluate(e.unwrap_or(&default), shape),
        };
        match values {
            Ok(v) => Some(self.cx.add_weight(wname, shape, Data::F32(v))),
            Err((span, msg)) => {
                self.cx.error(span, msg);
                None
            }
        }
    }

    /// [`Layer::weight_keyed`] with the file key equal to the weight's name.
    pub(super) fn weight(
        &mut self,
        e: Option<&Expr>,
        default: Expr,
        wname: String,
        shape: &[usize],
    ) -> Option<TensorId> {
        let key = wname.clone();
        self.weight_keyed(e, default, wname, &key, shape)
    }

    /// The initializer call `f(name = value, ..)`, at the layer's token.
    pub(super) fn call_init(&self, f: &str, args: &[(&str, Expr)]) -> Expr {
        let span = self.func_span;
        Expr::Call(Call {
            func: syn::Ident::new(f, span),
            args: args
                .iter()
                .map(|(n, e)| crate::syntax::Arg::Named(syn::Ident::new(n, span), e.clone()))
                .collect(),
            close: span,
        })
    }

    pub(super) fn seed(&self, k: usize) -> Expr {
        Expr::Int(k as i64, self.func_span)
    }

    pub(super) fn num(&self, v: f64) -> Expr {
        Expr::Float(v, self.func_span)
    }

    pub(super) fn zeros(&self) -> Expr {
        Expr::Name(syn::Ident::new("zeros", self.func_span))
    }

    pub(super) fn ones(&self) -> Expr {
        Expr::Name(syn::Ident::new("ones", self.func_span))
    }

    /// The fixed channel dimension of an input of `rank` 4 (`[N, C, H, W]`) or 2
    /// (`[batch, features]`).
    pub(super) fn channels(&mut self, rank: usize) -> Option<usize> {
        let (layer, shape) = (self.layer, &self.xt.shape);
        if shape.rank() != rank {
            let expected = if rank == 4 {
                "[N, C, H, W]"
            } else {
                "[batch, features]"
            };
            let msg = format!("{layer} expects a rank-{rank} input {expected}, got {shape}");
            self.cx.error(self.x_span, msg);
            return None;
        }
        let c = shape.0[1].fixed();
        if c.is_none() {
            let msg = format!("{layer} needs a fixed channel dimension, got {shape}");
            self.cx.error(self.x_span, msg);
        }
        c
    }
}
