//! The compiler behind `tinyonnx::onnx_model!`.
//!
//! `syntax` parses the invocation into a tree that keeps every span; `check` resolves
//! names, arity, attributes, dtypes and shapes and builds the span-free `ir::Graph`,
//! reporting every error at once; `plan` lays the intermediate tensors out in one arena;
//! `emit_onnx` serializes the ONNX model and `emit_rust` writes the forward pass. Nothing
//! after `check` fails on user input.

pub mod check;
pub mod emit_onnx;
pub mod emit_rust;
pub mod init;
pub mod ir;
pub mod ops;
pub mod plan;
pub mod suggest;
pub mod syntax;
pub mod types;

use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// Everything the compiler produces for one model, for the macro and for tools.
#[derive(Debug)]
pub struct Compiled {
    pub graph: ir::Graph,
    pub plan: plan::Plan,
    pub onnx: Vec<u8>,
}

/// Parses and checks a model; on failure returns every error found.
pub fn compile(
    tokens: TokenStream,
) -> Result<(syntax::ModelDef, Compiled), (Option<syntax::ModelDef>, Vec<syn::Error>)> {
    let model = syntax::parse_model(tokens).map_err(|e| (None, e))?;
    match check::check(&model) {
        Ok(graph) => {
            let plan = plan::plan(&graph);
            let onnx = emit_onnx::onnx_bytes(&graph);
            Ok((model, Compiled { graph, plan, onnx }))
        }
        Err(errors) => Err((Some(model), errors)),
    }
}

/// The expansion of `onnx_model! { ... }`.
pub fn expand(tokens: TokenStream) -> TokenStream {
    match compile(tokens) {
        Ok((model, c)) => emit_rust::emit(&c.graph, &c.plan, &c.onnx, &model.vis, &model.doc),
        Err((model, errors)) => {
            let errors = errors.iter().map(syn::Error::to_compile_error);
            // A stub type with the model's constants keeps most uses of the model from
            // adding errors of their own.
            let stub = model.map(|m| {
                let vis = &m.vis;
                let name = Ident::new(&m.name.to_string(), m.name.span());
                quote! {
                    #vis struct #name;
                    #[allow(dead_code)]
                    impl #name {
                        pub const ONNX: &'static [u8] = &[];
                        pub const ARENA_BYTES: usize = 0;
                        pub const ARENA_LOWER_BOUND_BYTES: usize = 0;
                        pub const PARAMS: usize = 0;
                        pub const WEIGHTS_BYTES: usize = 0;
                        pub const NODES: usize = 0;
                        pub const MACS: u64 = 0;
                        pub const fn arena() -> ::tinyonnx::Arena<0> {
                            ::tinyonnx::Arena::new()
                        }
                    }
                }
            });
            quote!(#(#errors)* #stub)
        }
    }
}
