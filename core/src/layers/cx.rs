//! The one thing layers know of the checker.

use proc_macro2::Span;

use crate::ir::{Data, TensorId};
use crate::ops::{At, Attrs, OpSchema};
use crate::syntax::Expr;

/// What layer sugar needs of the checker. A layer expands into nodes and weights
/// built through this, so every node it makes passes the checker's rules, and the
/// checker (which implements it) is the only module that knows both.
pub(crate) trait LayerCx {
    /// The graph built so far.
    fn graph(&self) -> &crate::ir::Graph;
    /// Reports an error at `span`; checking goes on.
    fn error(&mut self, span: Span, msg: String);
    /// A new weight tensor holding `data`.
    fn add_weight(&mut self, name: String, shape: &[usize], data: Data) -> TensorId;
    /// Checks and adds one node (see `check::Checker::build`).
    fn build(
        &mut self,
        op: &'static OpSchema,
        node_name: String,
        inputs: Vec<Option<TensorId>>,
        attrs: Attrs,
        span_of: &dyn Fn(At) -> Span,
    ) -> Option<Vec<TensorId>>;
    /// The name of the next instance of `layer` (explicit, from the binding, or counted).
    fn instance_name(
        &mut self,
        layer: &str,
        explicit: Option<(String, Span)>,
        hint: Option<String>,
        span: Span,
    ) -> Option<String>;
    /// Instances of `layer` so far.
    fn layer_index(&self, layer: &str) -> usize;
    /// f32 values of a weight file's tensor, checked against `shape`.
    fn load_checked(
        &mut self,
        path: &syn::LitStr,
        name: Option<&str>,
        shape: &[usize],
        what: &str,
    ) -> Result<Vec<f32>, (Span, String)>;
    /// The tensor an argument expression names or computes.
    fn tensor_expr(&mut self, expr: &Expr) -> Option<TensorId>;
}
