//! The pipeline: parse, check, emit the ONNX, plan, emit the Rust. The only module
//! that knows every stage; none of them imports it.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use crate::{check, compose, emit_onnx, emit_rust, import, ir, plan, syntax};

/// Everything the compiler produces for one model, for the macro and for tools.
#[derive(Debug)]
pub struct Compiled {
    pub model: syntax::ModelDef,
    /// The plan's record: the graph in execution order and how each node runs.
    pub planned: plan::Planned,
    pub onnx: Vec<u8>,
    /// The weights whose values the generated code takes from their files, and where
    /// they are in `onnx`.
    pub streamed: Vec<emit_onnx::Streamed>,
    /// Warnings for the user (unused inputs and weights), with their spans.
    pub warnings: Vec<check::Warning>,
    /// Weight files read, so that the build reruns when one changes.
    pub files: Vec<std::path::PathBuf>,
}

impl Compiled {
    /// The model type and its forward pass (what the macro expands to, without the
    /// warnings and the source macro).
    pub fn emit(&self) -> TokenStream {
        emit_rust::emit(&self.model, &self.planned, &self.onnx, &self.streamed)
    }
}

/// Why a model did not compile: every error, and the model when it parsed.
#[derive(Debug)]
pub struct Failure {
    pub model: Option<syntax::ModelDef>,
    pub errors: Vec<syn::Error>,
}

/// Parses and checks a model; on failure returns every error found.
pub fn compile(tokens: TokenStream) -> Result<Compiled, Box<Failure>> {
    compile_timed(tokens).map(|(c, _)| c)
}

/// Wall-clock time of each compiler phase, for reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub parse: std::time::Duration,
    /// Name resolution, inference, initializers and weight files.
    pub check: std::time::Duration,
    /// Order, kernel choices, arena, fusions and control-flow bodies.
    pub plan: std::time::Duration,
    pub emit_onnx: std::time::Duration,
}

/// [`compile`], timing each phase.
pub fn compile_timed(tokens: TokenStream) -> Result<(Compiled, Timings), Box<Failure>> {
    syntax::check_nesting(&tokens).map_err(|e| {
        Box::new(Failure {
            model: None,
            errors: vec![e],
        })
    })?;
    let mut t = Timings::default();
    let mut clock = std::time::Instant::now();
    let mut lap = |slot: &mut std::time::Duration| {
        *slot = clock.elapsed();
        clock = std::time::Instant::now();
    };
    if let Some(def) = syntax::parse_import(tokens.clone()) {
        let def = def.map_err(|e| {
            Box::new(Failure {
                model: None,
                errors: vec![e],
            })
        })?;
        lap(&mut t.parse);
        let model = import_model_def(&def);
        let checked = import::import(&def);
        lap(&mut t.check);
        return after_check(model, checked, t);
    }
    let parsed = syntax::parse_model(tokens);
    lap(&mut t.parse);
    let model = parsed.map_err(|errors| {
        Box::new(Failure {
            model: None,
            errors,
        })
    })?;
    let checked = check::check(&model);
    lap(&mut t.check);
    after_check(model, checked, t)
}

/// The phases after a written or imported model was checked, with the times so far.
fn after_check(
    model: syntax::ModelDef,
    checked: Result<check::Checked, Vec<syn::Error>>,
    t: Timings,
) -> Result<(Compiled, Timings), Box<Failure>> {
    match checked {
        Ok((graph, warnings, files)) => {
            let mut c = finish(model, graph, warnings, files);
            c.1.parse = t.parse;
            c.1.check = t.check;
            Ok(c)
        }
        Err(errors) => Err(Box::new(Failure {
            model: Some(model),
            errors,
        })),
    }
}

/// The model an import defines: its name and visibility, no items (errors about the
/// model as a whole point at the path).
fn import_model_def(def: &syntax::ImportDef) -> syntax::ModelDef {
    syntax::ModelDef {
        doc: def.doc.clone(),
        vis: def.vis.clone(),
        name: def.name.clone(),
        items: Vec::new(),
        close: def.path.span(),
    }
}

/// The phases after checking: the ONNX, then the plan.
fn finish(
    model: syntax::ModelDef,
    graph: ir::Graph,
    warnings: Vec<check::Warning>,
    files: Vec<std::path::PathBuf>,
) -> (Compiled, Timings) {
    let mut t = Timings::default();
    let mut clock = std::time::Instant::now();
    let mut lap = |slot: &mut std::time::Duration| {
        *slot = clock.elapsed();
        clock = std::time::Instant::now();
    };
    // The ONNX keeps the declared node order; the forward pass may run another.
    let emit_onnx::Onnx {
        bytes: onnx,
        streamed,
    } = emit_onnx::onnx(&graph);
    lap(&mut t.emit_onnx);
    let planned = plan::plan(graph);
    lap(&mut t.plan);
    (
        Compiled {
            model,
            planned,
            onnx,
            streamed,
            warnings,
            files,
        },
        t,
    )
}

/// Compiles a composition whose two sources are present (see [`compose`]).
fn compile_compose(def: syntax::ComposeDef) -> Result<Compiled, Vec<syn::Error>> {
    let mut parts = Vec::new();
    for m in [&def.first, &def.second] {
        let (_, tokens) = def
            .sources
            .iter()
            .find(|(s, _)| s == m)
            .expect("fetched before compiling");
        // A part is a written model or an import.
        let (model, checked) = match syntax::parse_import(tokens.clone()) {
            Some(def) => {
                let def = def.map_err(|e| vec![e])?;
                (import_model_def(&def), import::import(&def))
            }
            None => {
                let model = syntax::parse_model(tokens.clone())?;
                let checked = check::check(&model);
                (model, checked)
            }
        };
        let (graph, warnings, files) = checked?;
        parts.push((model, graph, warnings, files));
    }
    let (mb, gb, wb, fb) = parts.pop().expect("two parts");
    let (ma, ga, mut wa, mut fa) = parts.pop().expect("two parts");
    let graph = compose::merge(&def, ga, gb)?;
    wa.extend(wb);
    fa.extend(fb);
    // The custom operator declarations of both, for their kernels.
    let items = ma
        .items
        .into_iter()
        .chain(mb.items)
        .filter(|i| matches!(i, syntax::Item::Custom(_)))
        .collect();
    let model = syntax::ModelDef {
        doc: def.doc.clone(),
        vis: def.vis.clone(),
        name: def.name.clone(),
        items,
        close: def.call,
    };
    Ok(finish(model, graph, wa, fa).0)
}

/// A compiler warning at `span` on stable Rust: the use of a `#[deprecated]` constant
/// whose note is the message (the technique of the proc-macro-warning crate).
fn warning(span: proc_macro2::Span, msg: &str) -> TokenStream {
    let name = Ident::new("tinyonnx_warning", span);
    quote! {
        const _: () = {
            #[deprecated(note = #msg)]
            #[allow(non_upper_case_globals)]
            const tinyonnx_warning: () = ();
            #name
        };
    }
}

/// The expansion of `onnx_model! { ... }`.
pub fn expand(tokens: TokenStream) -> TokenStream {
    if let Err(e) = syntax::check_nesting(&tokens) {
        return e.to_compile_error();
    }
    let is_import = syntax::parse_import(tokens.clone()).is_some();
    let compiled = match syntax::parse_compose(tokens.clone()).filter(|_| !is_import) {
        None => compile(tokens.clone()),
        Some(Err(e)) => return e.to_compile_error(),
        Some(Ok(def)) => {
            if let Some(next) = compose::fetch_next(&def, tokens.clone()) {
                return next;
            }
            compile_compose(def).map_err(|errors| {
                Box::new(Failure {
                    model: None,
                    errors,
                })
            })
        }
    };
    match compiled {
        Ok(c) => {
            let code = c.emit();
            let source = compose::source_macro(&c.model, &tokens);
            let warnings = c.warnings.iter().map(|(span, msg)| warning(*span, msg));
            // Reading a file with include_bytes! makes cargo rebuild when it changes; the
            // unused constant adds nothing to the binary.
            let files = c.files.iter().map(|p| {
                let p = p.display().to_string();
                quote!(
                    const _: &[u8] = include_bytes!(#p);
                )
            });
            quote!(#code #source #(#warnings)* #(#files)*)
        }
        Err(failure) => {
            let Failure { model, errors } = *failure;
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

/// What `cargo xtask import` asks for: a file, the values of its open dims and whole
/// input shapes, the model's name and the path its `load`s use.
#[derive(Debug, Clone, Default)]
pub struct EjectRequest {
    pub file: std::path::PathBuf,
    pub dims: Vec<(String, usize)>,
    pub shapes: Vec<(String, Vec<usize>)>,
    pub name: String,
    pub weights_path: String,
    /// `optimize(size)`: the import, and so the ejected model, favours flash.
    pub optimize_size: bool,
}

/// Imports a file as `model Name = import(...)` would, and writes it back as DSL
/// source with its weights (see [`crate::eject`]); every error as text.
pub fn eject_file(req: &EjectRequest) -> Result<crate::eject::Ejected, Vec<String>> {
    let key = |k: &str| -> TokenStream {
        match syn::parse_str::<Ident>(k) {
            Ok(i) => quote!(#i),
            Err(_) => quote!(#k),
        }
    };
    let lit = |v: usize| proc_macro2::Literal::usize_unsuffixed(v);
    let dims = req.dims.iter().map(|(k, v)| {
        let (k, v) = (key(k), lit(*v));
        quote!(#k = #v)
    });
    let shapes = req.shapes.iter().map(|(k, v)| {
        let k = key(k);
        let v = v.iter().map(|&d| lit(d));
        quote!(#k = [#(#v),*])
    });
    let path = req.file.display().to_string();
    let name = syn::parse_str::<Ident>(&req.name).map_err(|_| {
        vec![format!(
            "`{}` cannot name a model: use a Rust identifier such as `Net`",
            req.name
        )]
    })?;
    let optimize = req.optimize_size.then(|| quote!(, optimize(size)));
    let tokens =
        quote!(pub model #name = import(#path, dims(#(#dims),*), shapes(#(#shapes),*) #optimize););
    let compiled = compile(tokens).map_err(|f| {
        f.errors
            .into_iter()
            .flatten()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    })?;
    crate::eject::eject(&compiled.planned.graph, &req.name, &req.weights_path).map_err(|e| vec![e])
}
