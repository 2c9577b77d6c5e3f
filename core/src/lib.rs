//! The compiler behind `tinyonnx::onnx_model!`.
//!
//! `syntax` parses the invocation into a tree that keeps every span; `check` resolves
//! names, arity, attributes, dtypes and shapes and builds the span-free `ir::Graph`,
//! reporting every error at once; `plan` lays the intermediate tensors out in one arena;
//! `emit_onnx` serializes the ONNX model and `emit_rust` writes the forward pass. Nothing
//! after `check` fails on user input.

pub mod check;
pub mod compose;
pub mod control;
pub mod emit_onnx;
pub mod emit_rust;
pub mod fuse;
pub mod fuzz;
pub mod init;
pub mod ir;
pub mod layers;
pub mod ops;
pub mod plan;
pub mod suggest;
pub mod syntax;
pub mod types;
pub mod weights;

use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// Everything the compiler produces for one model, for the macro and for tools.
#[derive(Debug)]
pub struct Compiled {
    pub model: syntax::ModelDef,
    pub graph: ir::Graph,
    pub plan: plan::Plan,
    pub schedule: fuse::Schedule,
    pub onnx: Vec<u8>,
    /// Warnings for the user (unused inputs and weights), with their spans.
    pub warnings: Vec<check::Warning>,
    /// Weight files read, so that the build reruns when one changes.
    pub files: Vec<std::path::PathBuf>,
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

/// Plans the declared node order and a memory-aware one ([`plan::greedy_order`]) and
/// keeps the order with the smaller arena (the declared one on a tie), reordering
/// `graph.nodes` to it; then chooses the Winograd convolutions (`graph.winograd`).
fn schedule_and_plan(graph: &mut ir::Graph) -> plan::Plan {
    let plan_of = |g: &ir::Graph| {
        let scratch: Vec<usize> = (0..g.nodes.len())
            .map(|i| ops::scratch_elems(g, i))
            .collect();
        plan::plan(g, &scratch)
    };
    if graph.winograd == ir::Winograd::Always {
        for node in &mut graph.nodes {
            node.winograd = 4;
        }
    }
    let mut plan = order_and_plan(graph, &plan_of);
    if graph.winograd != ir::Winograd::Auto {
        return plan;
    }
    // Winograd convolutions where their scratch fits in the arena as planned: one node
    // at a time, all sixteen elements a pass or else a row of four (a quarter of the
    // scratch), kept when the arena does not grow.
    for i in 0..graph.nodes.len() {
        let before = ops::scratch_elems(graph, i);
        for rows in [4, 1] {
            graph.nodes[i].winograd = rows;
            if ops::scratch_elems(graph, i) == before {
                graph.nodes[i].winograd = 0;
                break;
            }
            let trial = plan_of(graph);
            if trial.arena_bytes <= plan.arena_bytes {
                plan = trial;
                break;
            }
            graph.nodes[i].winograd = 0;
        }
    }
    plan
}

/// The declared order or the memory-aware one, whichever plans the smaller arena.
fn order_and_plan(graph: &mut ir::Graph, plan_of: &dyn Fn(&ir::Graph) -> plan::Plan) -> plan::Plan {
    let declared = plan_of(graph);
    let order = plan::greedy_order(graph);
    if order.iter().enumerate().all(|(i, &k)| i == k) {
        return declared;
    }
    let permute = |g: &mut ir::Graph, order: &[usize]| {
        let mut slots: Vec<Option<ir::Node>> =
            std::mem::take(&mut g.nodes).into_iter().map(Some).collect();
        g.nodes = order
            .iter()
            .map(|&k| slots[k].take().expect("an order is a permutation"))
            .collect();
    };
    permute(graph, &order);
    let greedy = plan_of(graph);
    if greedy.arena_bytes < declared.arena_bytes {
        return greedy;
    }
    let mut inverse = vec![0; order.len()];
    for (i, &k) in order.iter().enumerate() {
        inverse[k] = i;
    }
    permute(graph, &inverse);
    declared
}

/// Wall-clock time of each compiler phase, for reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub parse: std::time::Duration,
    /// Name resolution, inference, initializers and weight files.
    pub check: std::time::Duration,
    pub plan: std::time::Duration,
    pub fuse: std::time::Duration,
    pub emit_onnx: std::time::Duration,
}

/// [`compile`], timing each phase.
pub fn compile_timed(tokens: TokenStream) -> Result<(Compiled, Timings), Box<Failure>> {
    let mut t = Timings::default();
    let mut clock = std::time::Instant::now();
    let mut lap = |slot: &mut std::time::Duration| {
        *slot = clock.elapsed();
        clock = std::time::Instant::now();
    };
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

/// The phases after checking: the ONNX, the schedule and plan, the fusions.
fn finish(
    model: syntax::ModelDef,
    mut graph: ir::Graph,
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
    let onnx = emit_onnx::onnx_bytes(&graph);
    lap(&mut t.emit_onnx);
    let plan = schedule_and_plan(&mut graph);
    lap(&mut t.plan);
    let schedule = fuse::fuse(&graph, &plan);
    lap(&mut t.fuse);
    (
        Compiled {
            model,
            graph,
            plan,
            schedule,
            onnx,
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
        let model = syntax::parse_model(tokens.clone())?;
        let (graph, warnings, files) = check::check(&model)?;
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
    let compiled = match syntax::parse_compose(tokens.clone()) {
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
            let code = emit_rust::emit(&c);
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

#[cfg(test)]
mod tests {
    use quote::quote;

    fn mlp() -> proc_macro2::TokenStream {
        quote! {
            pub model M {
                input x: f32[batch, 16];
                let h = relu(linear(x, 8, init = he_normal(seed = 3)));
                output y = softmax(linear(h, 4), axis = -1);
            }
        }
    }

    #[test]
    fn the_same_source_gives_byte_identical_onnx_and_code() {
        let a = super::compile(mlp()).unwrap();
        let b = super::compile(mlp()).unwrap();
        assert_eq!(a.onnx, b.onnx);
        assert_eq!(
            super::expand(mlp()).to_string(),
            super::expand(mlp()).to_string()
        );
    }

    #[test]
    fn a_loop_body_is_a_subgraph_planned_in_its_node_region() {
        use tinyonnx_proto::Message;
        let c = super::compile(quote! {
            model M {
                input h0: f32[1, 6];
                weight w: f32[6, 6] = glorot_uniform(seed = 1);
                let (h, hs) = for i in 0..4 with (h = h0) {
                    let next = Tanh(MatMul(h, w));
                    return (next, Relu(next));
                };
                output y = Add(h, Cast(ReduceSum(hs, keepdims = 0), to = f32));
            }
        })
        .unwrap();
        let m = tinyonnx_proto::ModelProto::decode(c.onnx.as_slice()).unwrap();
        let g = m.graph.unwrap();
        let node = g.node.iter().find(|n| n.op_type() == "Loop").unwrap();
        // M, the omitted condition and the initial h (the node is named after the
        // pattern's first name); w is read from the outer scope.
        assert_eq!(node.input, ["h.M", "", "h0"]);
        let body = node.attribute[0].g.as_ref().unwrap();
        let ops: Vec<&str> = body.node.iter().map(|n| n.op_type()).collect();
        assert_eq!(ops, ["MatMul", "Tanh", "Relu", "Identity"]);
        assert_eq!(body.input.len(), 3);
        assert_eq!(body.output.len(), 3);
        // The node lists w and h0 after its ONNX inputs, so both live until it runs.
        let k = c
            .graph
            .nodes
            .iter()
            .position(|n| n.control.is_some())
            .unwrap();
        let node = &c.graph.nodes[k];
        assert_eq!(node.inputs.len(), 4);
        // The body's tensors lie inside the node's region, which is 8-byte aligned.
        let base = c.plan.scratch[k].unwrap();
        assert_eq!(base % 8, 0);
        let (bg, bp, _) = crate::control::placed_body(&c.graph, &c.plan, k, 0);
        let region = crate::ops::scratch_elems(&c.graph, k) * 4;
        for n in &bg.nodes {
            for &t in &n.outputs {
                let off = bp.offsets[&t];
                assert!(off >= base && off + bg.device_numel(t) * 4 <= base + region);
            }
        }
    }

    #[test]
    fn a_plain_chain_needs_exactly_its_lower_bound() {
        let c = super::compile(mlp()).unwrap();
        // h (8 floats) and the second linear's output (4 floats) are alive together.
        assert_eq!(c.plan.lower_bound_bytes, (8 + 4) * 4);
        assert_eq!(c.plan.arena_bytes, c.plan.lower_bound_bytes);
        // Relu runs in place over the first Gemm's output.
        assert!(c.plan.inplace[1]);
    }

    /// Which nodes the planner let run as Winograd.
    fn winograd_nodes(c: &super::Compiled) -> Vec<&str> {
        let nodes = c.graph.nodes.iter();
        nodes
            .filter(|n| n.winograd > 0)
            .map(|n| n.op.op_type)
            .collect()
    }

    /// A 1x1 convolution from `[1, c, 32, 32]` to `wide` channels, a `pool x pool`
    /// MaxPool, then a 3x3 convolution: the first output sets the arena.
    fn pooled_convs(
        setting: proc_macro2::TokenStream,
        c: usize,
        wide: usize,
        pool: usize,
    ) -> super::Compiled {
        let lit = proc_macro2::Literal::usize_unsuffixed;
        let (c, wide, pool) = (lit(c), lit(wide), lit(pool));
        super::compile(quote! {
            model M {
                #setting
                input x: f32[1, #c, 32, 32];
                weight w1: f32[#wide, #c, 1, 1] = he_normal(seed = 1);
                weight w3: f32[#wide, #wide, 3, 3] = he_normal(seed = 2);
                let wide = Conv(x, w1);
                let small = MaxPool(wide, kernel_shape = [#pool, #pool], strides = [#pool, #pool]);
                output y = Conv(small, w3, pads = [1, 1, 1, 1]);
            }
        })
        .unwrap()
    }

    #[test]
    fn winograd_auto_takes_only_arena_that_is_free() {
        // The 1x1 convolution's 256 KB output sets the arena; the 3x3 one after the
        // pooling has room for its Winograd scratch.
        let pooled = |setting| pooled_convs(setting, 8, 64, 4);
        let (auto, never) = (pooled(quote!()), pooled(quote!(winograd = never;)));
        assert_eq!(winograd_nodes(&auto), ["Conv"]);
        assert!(winograd_nodes(&never).is_empty());
        assert_eq!(auto.plan.arena_bytes, never.plan.arena_bytes);
        // A lone 3x3 convolution: its Winograd scratch would grow the arena.
        let lone = |setting: proc_macro2::TokenStream| {
            super::compile(quote! {
                model M {
                    #setting
                    input x: f32[1, 8, 16, 16];
                    weight w: f32[8, 8, 3, 3] = he_normal(seed = 1);
                    output y = Conv(x, w, pads = [1, 1, 1, 1]);
                }
            })
            .unwrap()
        };
        let auto = lone(quote!());
        assert!(winograd_nodes(&auto).is_empty());
        let always = lone(quote!(winograd = always;));
        assert_eq!(winograd_nodes(&always), ["Conv"]);
        assert!(always.plan.arena_bytes > auto.plan.arena_bytes);
        assert!(winograd_nodes(&lone(quote!(winograd = never;))).is_empty());
        // Pooled by two only: all sixteen elements a pass would grow the arena, passes of
        // one element row (a quarter of the scratch) fit.
        let halved = |setting| pooled_convs(setting, 4, 16, 2);
        let rows =
            |c: &super::Compiled| c.graph.nodes.iter().map(|n| n.winograd).collect::<Vec<_>>();
        let (auto, never) = (halved(quote!()), halved(quote!(winograd = never;)));
        assert_eq!(rows(&auto), [0, 0, 1]);
        assert_eq!(auto.plan.arena_bytes, never.plan.arena_bytes);
        let always = halved(quote!(winograd = always;));
        assert_eq!(rows(&always)[2], 4);
        assert!(always.plan.arena_bytes > auto.plan.arena_bytes);
    }

    #[test]
    fn metadata_and_doc_comments_reach_the_model_proto() {
        use tinyonnx_proto::Message;
        let c = super::compile(quote! {
            /// Doubles its input.
            model M {
                model_version = 7;
                domain = "com.example.tiny";
                meta author = "Ada";
                meta "my.key" = "v";
                /// The values.
                input x: f32[4];
                /// Twice x.
                let y2 = Add(x, x);
                /// The result.
                output y = Relu(y2);
            }
        })
        .unwrap();
        let m = tinyonnx_proto::ModelProto::decode(&c.onnx[..]).unwrap();
        assert_eq!(m.model_version, Some(7));
        assert_eq!(m.domain.as_deref(), Some("com.example.tiny"));
        assert_eq!(m.doc_string.as_deref(), Some("Doubles its input."));
        let props: Vec<(&str, &str)> = m
            .metadata_props
            .iter()
            .map(|p| (p.key(), p.value()))
            .collect();
        assert_eq!(props, [("author", "Ada"), ("my.key", "v")]);
        let g = m.graph.unwrap();
        assert_eq!(g.input[0].doc_string.as_deref(), Some("The values."));
        assert_eq!(g.output[0].doc_string.as_deref(), Some("The result."));
        assert_eq!(g.node[0].doc_string.as_deref(), Some("Twice x."));
        assert_eq!(g.node[1].doc_string, None);
    }

    #[test]
    fn functions_get_one_definition_per_distinct_body() {
        use tinyonnx_proto::Message;
        let c = super::compile(quote! {
            model M {
                input x: f32[2, 4];
                function unit(x, a = 0.1) {
                    return Add(x, LeakyRelu(x, alpha = a));
                }
                let u1 = unit(x);
                let u2 = unit(u1);
                let u3 = unit(u2, a = 0.3);
                output y = Relu(u3);
            }
        })
        .unwrap();
        let m = tinyonnx_proto::ModelProto::decode(&c.onnx[..]).unwrap();
        let names: Vec<&str> = m.functions.iter().map(|f| f.name()).collect();
        assert_eq!(names, ["unit", "unit_2"]);
        let g = m.graph.unwrap();
        let calls: Vec<&str> = g.node.iter().map(|n| n.op_type()).collect();
        assert_eq!(calls, ["unit", "unit", "unit_2", "Relu"]);
        assert!(g.node[0].domain() == "tinyonnx.local");
        // The forward pass inlines: 7 nodes (2 per call and the Relu).
        assert_eq!(c.graph.nodes.len(), 7);
        // Tensors inside the calls are not named by the main graph.
        assert!(g.value_info.iter().all(|v| !v.name().contains("LeakyRelu")));
    }

    #[test]
    fn a_custom_operator_in_a_function_imports_its_domain_there() {
        use tinyonnx_proto::Message;
        let c = super::compile(quote! {
            model M {
                custom Twice(x) -> y { domain = "com.example"; version = 3; kernel = K; y = x; }
                input x: f32[4];
                function unit(x) {
                    return Relu(Twice(x));
                }
                output y = unit(x);
            }
        })
        .unwrap();
        let m = tinyonnx_proto::ModelProto::decode(&c.onnx[..]).unwrap();
        let f = &m.functions[0];
        assert!(
            f.opset_import
                .iter()
                .any(|o| o.domain() == "com.example" && o.version() == 3)
        );
        assert!(
            m.opset_import
                .iter()
                .any(|o| o.domain() == "com.example" && o.version() == 3)
        );
    }

    #[test]
    fn metadata_mistakes_are_errors_at_the_token() {
        let e = super::compile(quote! {
            model M {
                meta author = "a";
                meta author = "b";
                domain = "has space";
                input x: f32[4];
                output y = Relu(x);
            }
        })
        .unwrap_err();
        let msgs: Vec<String> = e.errors.iter().map(ToString::to_string).collect();
        assert!(
            msgs.iter()
                .any(|m| m.contains("metadata `author` is set twice")),
            "{msgs:?}"
        );
        assert!(msgs.iter().any(|m| m.contains("reverse-DNS")), "{msgs:?}");
    }

    fn conv_block_model() -> proc_macro2::TokenStream {
        quote! {
            model M {
                input x: f32[1, 3, 8, 8];
                block unit(x, ch) {
                    let conv = conv2d(x, ch, 3, pad = 1);
                    let bn = batch_norm(conv, var_init = constant(2.0));
                    return Relu(bn);
                }
                let stage1 = unit(x, 4);
                let stage2 = unit(stage1, 4);
                output y = global_avg_pool(stage2);
            }
        }
    }

    #[test]
    fn block_instances_get_readable_unique_names() {
        let c = super::compile(conv_block_model()).unwrap();
        let weights: Vec<&str> = c
            .graph
            .weights
            .iter()
            .map(|&w| c.graph.tensors[w].name.as_str())
            .collect();
        assert!(weights.contains(&"stage1.conv.weight"), "{weights:?}");
        assert!(weights.contains(&"stage2.bn.var"), "{weights:?}");
        let names: std::collections::HashSet<&str> =
            c.graph.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names.len(),
            c.graph.tensors.len(),
            "tensor names are unique"
        );
    }

    #[test]
    fn batch_norm_and_relu_fuse_into_the_convolution() {
        let c = super::compile(conv_block_model()).unwrap();
        let ops: Vec<&str> = c.graph.nodes.iter().map(|n| n.op.op_type).collect();
        assert_eq!(
            ops,
            [
                "Conv",
                "BatchNormalization",
                "Relu",
                "Conv",
                "BatchNormalization",
                "Relu",
                "GlobalAveragePool"
            ]
        );
        // The ONNX keeps every node; the forward pass runs three kernels.
        let run: Vec<&str> = (0..ops.len())
            .filter(|&i| !c.schedule.skip[i])
            .map(|i| ops[i])
            .collect();
        assert_eq!(run, ["Conv", "Conv", "GlobalAveragePool"]);
        assert!(c.schedule.epilogue[0].relu && c.schedule.epilogue[3].relu);
        // var = 2, scale = 1, mean = 0, B = 0: weights scale by 1/sqrt(2 + 1e-5).
        let w = c.schedule.folded[0].as_ref().unwrap().0.as_f32().unwrap();
        let orig = c.graph.tensors[c.graph.nodes[0].inputs[1].unwrap()]
            .value
            .as_ref()
            .and_then(crate::ir::Data::as_f32)
            .unwrap();
        let s = 1.0 / (2.0f64 + 1e-5).sqrt();
        assert!((w[5] as f64 - orig[5] as f64 * s).abs() < 1e-7);
    }

    #[test]
    fn relu_fuses_into_a_residual_add_of_f32_only() {
        let compiled = |dtype: proc_macro2::TokenStream| {
            super::compile(quote! {
                model M {
                    input x: #dtype[2, 8];
                    input r: #dtype[2, 8];
                    output y = Neg(Relu(Add(Neg(x), r)));
                }
            })
            .unwrap()
        };
        let c = compiled(quote!(f32));
        assert_eq!(c.schedule.skip, [false, false, true, false]);
        assert!(c.schedule.epilogue[1].relu);
        // Relu of an f64 sum keeps its own kernel.
        let c = compiled(quote!(f64));
        assert_eq!(c.schedule.skip, [false, false, false, false]);
    }

    /// The offsets of the named tensors' buffers.
    fn offset(c: &super::Compiled, name: &str) -> usize {
        let id = c
            .graph
            .tensors
            .iter()
            .position(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tensor {name}"));
        c.plan.offsets[&id]
    }

    #[test]
    fn views_share_their_input_buffer_while_it_stays_alive() {
        // a (64 B) stays alive until the Add through its view v; b cannot run in place
        // over a, so a and b are alive together: 128 B, no copies for the Reshapes.
        let c = super::compile(quote! {
            model M {
                input x: f32[2, 8];
                let a = Relu(x);
                let v = Reshape(a, [16]);
                let b = Sigmoid(a);
                let w = Reshape(b, [16]);
                output y = Add(w, v);
            }
        })
        .unwrap();
        assert_eq!(c.plan.lower_bound_bytes, 128);
        assert_eq!(c.plan.arena_bytes, 128);
        assert_eq!(offset(&c, "v"), offset(&c, "a"));
        assert_eq!(offset(&c, "w"), offset(&c, "b"));
        assert_ne!(offset(&c, "a"), offset(&c, "b"));
        let ops: Vec<&str> = c.graph.nodes.iter().map(|n| n.op.op_type).collect();
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(c.plan.inplace[i], *op == "Reshape", "{op}");
        }
        // The views emit no copy, and `run`, `run_f32` and `run_traced` write the output
        // in place.
        let code = super::emit_rust::emit(&c).to_string();
        assert_eq!(code.matches("copy_from_slice").count(), 0, "{code}");
    }

    #[test]
    fn a_residual_branch_needs_exactly_its_lower_bound() {
        // a feeds both branches; Tanh runs in place over b; Add writes the output.
        // Alive together at most: a and b (64 B each).
        let c = super::compile(quote! {
            model M {
                input x: f32[2, 8];
                let a = Relu(x);
                let b = Sigmoid(a);
                let t = Tanh(b);
                let u = Mul(t, 0.5);
                output y = Add(a, u);
            }
        })
        .unwrap();
        assert_eq!(c.plan.lower_bound_bytes, 128);
        assert_eq!(c.plan.arena_bytes, 128);
        assert_eq!(offset(&c, "t"), offset(&c, "b"));
        assert_eq!(offset(&c, "u"), offset(&c, "b"));
    }

    #[test]
    fn the_shortcut_runs_first_when_that_frees_the_block_input() {
        // Declared order: big, m1, m2 alive together (3 x 1 KB). Shortcut first: big
        // dies at m1, so at most two 1 KB tensors and the 32-byte shortcut: 2,080 B.
        let c = super::compile(quote! {
            model M {
                input x: f32[1, 256];
                weight w1: f32[256, 256] = glorot_uniform(seed = 1);
                weight w2: f32[256, 256] = glorot_uniform(seed = 2);
                weight w3: f32[256, 8] = glorot_uniform(seed = 3);
                weight ws: f32[256, 8] = glorot_uniform(seed = 4);
                let big = Relu(x);
                let m1 = Gemm(big, w1);
                let m2 = Gemm(m1, w2);
                let m3 = Gemm(m2, w3);
                let s = Gemm(big, ws);
                output y = Add(m3, s);
            }
        })
        .unwrap();
        assert_eq!(c.plan.arena_bytes, 2080);
        assert_eq!(c.plan.lower_bound_bytes, 2080);
        let names: Vec<String> = c
            .graph
            .nodes
            .iter()
            .map(|n| c.graph.tensors[n.outputs[0]].name.clone())
            .collect();
        assert_eq!(names, ["big", "s", "m1", "m2", "m3", "y"]);
    }
}
