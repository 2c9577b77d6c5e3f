//! The compiler behind `tinyonnx::onnx_model!`.
//!
//! Stages, each reading only the ones below it: `syntax` parses the invocation into a
//! tree that keeps every span; `check` (with `layers`) resolves names, arity,
//! attributes, dtypes and shapes and builds the span-free `ir::Graph`, reporting every
//! error at once; `plan` decides how the forward pass runs (order, kernels, arena,
//! fusions, control-flow bodies) as one record; `emit_onnx` serializes the ONNX model
//! and `emit_rust` writes the forward pass from the record. `driver` runs them in
//! order. Nothing after `check` fails on user input.

pub mod check;
pub mod compose;
pub mod data;
pub mod driver;
pub mod eject;
pub mod emit_onnx;
pub mod emit_rust;
pub mod import;
pub mod init;
pub mod ir;
pub mod layers;
pub mod ops;
pub mod plan;
pub mod quantize;
#[cfg(test)]
mod scratch;
pub mod suggest;
pub mod syntax;
pub mod types;
pub mod weights;

pub use driver::{Compiled, Failure, Timings, compile, compile_timed, expand};

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
    fn i64_weights_load_exactly_into_the_onnx_initializer() {
        use tinyonnx_proto::Message;
        // 16777217 and 123456789 have no f32; they must come out as written.
        let header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let padded = format!("{header:<117}\n");
        bytes.extend((padded.len() as u16).to_le_bytes());
        bytes.extend(padded.as_bytes());
        for v in [16_777_217i64, 123_456_789] {
            bytes.extend(v.to_le_bytes());
        }
        let file = crate::scratch::TempFile::new("i64.npy", &bytes);
        let p = file.to_string();
        let c = super::compile(quote! {
            model M {
                input x: i64[2];
                weight s: i64[2] = load(#p);
                output y = Add(x, s);
            }
        })
        .unwrap();
        let m = tinyonnx_proto::ModelProto::decode(c.onnx.as_slice()).unwrap();
        let init = &m.graph.unwrap().initializer[0];
        let raw = init.raw_data.as_deref().unwrap_or_default();
        let values: Vec<i64> = if raw.is_empty() {
            init.int64_data.clone()
        } else {
            raw.chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        assert_eq!(values, [16_777_217, 123_456_789]);
    }

    /// Weights of 64 KiB or more loaded unchanged from `.npy` and `.safetensors` files
    /// are streamed: the ONNX bytes hold each one's values at a 64-byte aligned offset,
    /// equal to the file's bytes there, and still decode as the same model.
    #[test]
    fn streamed_weights_sit_aligned_in_a_valid_model() {
        use tinyonnx_proto::Message;
        let n = 20_000usize;
        let values: Vec<u8> = (0..n)
            .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
            .collect();
        let dir = crate::scratch::Scratch::new();
        let bytes = crate::weights::tests::npy_bytes("<f4", &format!("({n},)"), &values);
        let p = dir.write("stream.npy", &bytes);
        // A header whose length is not a multiple of 4: the data starts unaligned.
        let json = format!(
            r#"{{"b":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}} "#,
            4 * n
        );
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend(json.as_bytes());
        bytes.extend(values.iter().rev());
        let q = dir.write("stream.safetensors", &bytes);
        let c = super::compile(quote! {
            model M {
                input x: f32[20000];
                weight a: f32[20000] = load(#p);
                weight b: f32[20000] = load(#q);
                weight small: f32[3] = [1.0, 2.0, 3.0];
                output y = Add(Mul(x, a), b);
                output z = Add(small, small);
            }
        })
        .unwrap();
        let names: Vec<&str> = c.streamed.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        for s in &c.streamed {
            assert_eq!(s.offset % crate::emit_onnx::STREAM_ALIGN, 0);
            let file = std::fs::read(&s.file.path).unwrap();
            let (at, len) = (s.file.offset as usize, s.file.len as usize);
            assert_eq!(len, 4 * n);
            assert_eq!(&c.onnx[s.offset..s.offset + len], &file[at..at + len]);
        }
        let m = tinyonnx_proto::ModelProto::decode(c.onnx.as_slice()).unwrap();
        let g = m.graph.as_ref().unwrap();
        let init = |name: &str| {
            g.initializer
                .iter()
                .find(|t| t.name.as_deref() == Some(name))
                .unwrap()
        };
        assert_eq!(init("a").raw_data.as_deref(), Some(&values[..]));
        assert_eq!(init("small").raw_data.as_ref().map(Vec::len), Some(12));
        assert_eq!(g.node.len(), 3);
        assert_eq!(m.opset_import.len(), 1);
        // prost's own bytes of the decoded model decode to the same model.
        let again = tinyonnx_proto::ModelProto::decode(m.encode_to_vec().as_slice()).unwrap();
        assert_eq!(again, m);
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
        let p = &c.planned;
        let k = p
            .graph
            .nodes
            .iter()
            .position(|n| n.control.is_some())
            .unwrap();
        let node = &p.graph.nodes[k];
        assert_eq!(node.inputs.len(), 4);
        // The body's tensors lie inside the node's region, which is 8-byte aligned.
        let base = p.steps[k].scratch.unwrap();
        assert_eq!(base % 8, 0);
        let body = &p.steps[k].bodies[0];
        let region = p.steps[k].scratch_elems * 4;
        for n in &body.graph.nodes {
            for &t in &n.outputs {
                let off = body.offsets[&t];
                assert!(off >= base && off + body.graph.device_numel(t) * 4 <= base + region);
            }
        }
    }

    #[test]
    fn a_plain_chain_needs_exactly_its_lower_bound() {
        let c = super::compile(mlp()).unwrap();
        // h (8 floats) and the second linear's output (4 floats) are alive together.
        assert_eq!(c.planned.lower_bound_bytes, (8 + 4) * 4);
        assert_eq!(c.planned.arena_bytes, c.planned.lower_bound_bytes);
        // Relu runs in place over the first Gemm's output.
        assert!(c.planned.steps[1].inplace);
    }

    #[test]
    fn a_view_of_an_input_reads_the_input_and_takes_no_buffer() {
        let c = super::compile(quote! {
            model M {
                input x: f32[1, 16];
                let image = Reshape(x, [1, 1, 4, 4]);
                let flat = Flatten(image);
                let r = Relu(image);
                output y = Add(Flatten(r), flat);
                output z = Reshape(x, [4, 4]);
            }
        })
        .unwrap();
        let p = &c.planned;
        let id = |name: &str| p.graph.tensors.iter().position(|t| t.name == name).unwrap();
        let x = id("x");
        // The chain of two views reads x; Relu's output and Flatten(r) are buffers.
        assert_eq!(p.input_views.get(&id("image")), Some(&x));
        assert_eq!(p.input_views.get(&id("flat")), Some(&x));
        assert_eq!(p.input_views.len(), 2, "{:?}", p.input_views);
        assert!(!p.offsets.contains_key(&id("image")));
        // Relu's output and its flattened view share one 64-byte buffer.
        assert_eq!(p.arena_bytes, 64);
        // The view that is a model output is still copied into the caller's array.
        let copy = p
            .graph
            .nodes
            .iter()
            .position(|n| n.outputs == [id("z")])
            .unwrap();
        assert!(!p.steps[copy].inplace);
        let code = super::expand(quote! {
            model M {
                input x: f32[1, 16];
                output y = Relu(Reshape(x, [1, 1, 4, 4]));
            }
        })
        .to_string();
        assert!(!code.contains("copy_from_slice"), "{code}");
    }

    #[test]
    fn recurrent_nodes_that_differ_share_the_sized_kernel() {
        use proc_macro2::TokenStream;
        let sized = |body: TokenStream| {
            let src = quote! {
                model M {
                    input x: f32[5, 1, 3];
                    weight w4: f32[1, 16, 3] = uniform(low = -0.5, high = 0.5, seed = 1);
                    weight r4: f32[1, 16, 4] = uniform(low = -0.5, high = 0.5, seed = 2);
                    weight w6: f32[1, 24, 3] = uniform(low = -0.5, high = 0.5, seed = 3);
                    weight r6: f32[1, 24, 6] = uniform(low = -0.5, high = 0.5, seed = 4);
                    #body
                }
            };
            let c = super::compile(src.clone()).unwrap();
            let flags: Vec<bool> = c.planned.steps.iter().map(|s| s.sized).collect();
            let code = super::expand(src).to_string();
            assert_eq!(
                code.contains("lstm_shared"),
                flags.contains(&true),
                "{code}"
            );
            flags
        };
        // One node, or two alike (which share their constant copy): the constant copy.
        let one = quote! { let (_, a, _) = LSTM(x, w4, r4, hidden_size = 4); output a; };
        assert_eq!(sized(one.clone()), [false]);
        let twin = quote! { let (_, b, _) = LSTM(Neg(x), w4, r4, hidden_size = 4); output b; };
        assert_eq!(sized(quote! { #one #twin }), [false, false, false]);
        // Two widths, or two directions: both nodes sized.
        let wide = quote! { let (_, c, _) = LSTM(x, w6, r6, hidden_size = 6); output c; };
        assert_eq!(sized(quote! { #one #wide }), [true, true]);
        let back = quote! {
            let (_, d, _) = LSTM(x, w4, r4, hidden_size = 4, direction = "reverse");
            output d;
        };
        assert_eq!(sized(quote! { #one #back }), [true, true]);
    }

    #[test]
    fn convolutions_share_a_sized_copy_from_three_that_differ_per_kernel() {
        use proc_macro2::TokenStream;
        // The flags of the Conv nodes, in order; the emitted calls agree with them.
        let sized = |body: TokenStream| {
            let src = quote! {
                model M {
                    input x: f32[1, 4, 9, 9];
                    input wd: f32[4, 4, 3, 3];
                    weight w8: f32[8, 4, 3, 3] = he_normal(seed = 1);
                    weight w40: f32[40, 4, 1, 1] = he_normal(seed = 2);
                    #body
                }
            };
            let c = super::compile(src.clone()).unwrap();
            let flags: Vec<bool> = c
                .planned
                .steps
                .iter()
                .zip(&c.planned.graph.nodes)
                .filter(|(_, n)| n.op.op_type == "Conv")
                .map(|(s, _)| s.sized)
                .collect();
            let code = super::expand(src).to_string();
            let shared = code.matches("conv2d_shared").count()
                + code.matches("conv2d_packed_shared").count();
            assert_eq!(shared, flags.iter().filter(|&&f| f).count(), "{code}");
            flags
        };
        // Weights computed at run time: the direct kernel. Two that differ keep their
        // constant copies; a third shares one sized copy for all.
        let d1 = quote! { output a = Conv(x, wd); };
        let d2 = quote! { output b = Conv(x, wd, strides = [2, 2]); };
        let d3 = quote! { output c = Conv(x, wd, pads = [1, 1, 1, 1]); };
        assert_eq!(sized(quote! { #d1 #d2 }), [false, false]);
        assert_eq!(sized(quote! { #d1 #d2 #d3 }), [true, true, true]);
        // Known weights of eight channels: im2col, its own family; the direct pair
        // beside it keeps its copies.
        let i1 = quote! { output e = Conv(x, w8); };
        let i2 = quote! { output f = Conv(x, w8, strides = [2, 2]); };
        let i3 = quote! { output g = Conv(x, w8, pads = [1, 1, 1, 1]); };
        assert_eq!(
            sized(quote! { #d1 #d2 #i1 #i2 #i3 }),
            [false, false, true, true, true]
        );
        // Forty channels share their gathering already: no sized copy.
        let wide = quote! {
            output h = Conv(x, w40);
            output i = Conv(x, w40, strides = [2, 2]);
            output j = Conv(x, w40, pads = [1, 1, 1, 1]);
        };
        assert_eq!(sized(wide.clone()), [false, false, false]);
        // Flash over speed: two that differ share, and their calls ask for the sized
        // copy on every core (the `_shared` form's last generic argument).
        let size = quote! { optimize = size; };
        assert_eq!(sized(quote! { #size #d1 #d2 }), [true, true]);
        // ... wide ones too, which otherwise keep their copies beside a shared gathering.
        assert_eq!(sized(quote! { #size #wide }), [true, true, true]);
        let twin = quote! { output k = Conv(Neg(x), wd); };
        assert_eq!(sized(quote! { #size #d1 #twin }), [false, false]);
        let small = |body: TokenStream| {
            let code = super::expand(quote! {
                model M {
                    input x: f32[1, 4, 9, 9];
                    input wd: f32[4, 4, 3, 3];
                    #body
                }
            })
            .to_string();
            code.matches(", true > (").count()
        };
        assert_eq!(small(quote! { #size #d1 #d2 }), 2);
        assert_eq!(small(quote! { #d1 #d2 #d3 }), 0);
    }

    /// `cargo xtask import`'s eject writes the settings that change the device code
    /// (not their defaults), so an ejected model compiles as the original did.
    #[test]
    fn an_ejected_model_keeps_its_settings() {
        let model = |settings: proc_macro2::TokenStream| {
            super::compile(quote! {
                model M {
                    #settings
                    input x: f32[1, 4, 9, 9];
                    weight w: f32[4, 4, 3, 3] = glorot_uniform(seed = 1);
                    output y = Conv(x, w, pads = [1, 1, 1, 1]);
                }
            })
            .unwrap()
        };
        let eject = |c: &super::driver::Compiled| {
            crate::eject::eject(&c.planned.graph, "M", "m.safetensors")
                .unwrap()
                .source
        };
        let source = eject(&model(quote! { winograd = auto; optimize = size; }));
        assert!(source.contains("winograd = auto;"), "{source}");
        assert!(source.contains("optimize = size;"), "{source}");
        let source = eject(&model(quote! { winograd = always; }));
        assert!(source.contains("winograd = always;"), "{source}");
        let source = eject(&model(proc_macro2::TokenStream::new()));
        assert!(
            !source.contains("winograd") && !source.contains("optimize"),
            "{source}"
        );
    }

    #[test]
    fn only_a_model_of_few_nodes_has_its_run_inlined() {
        let tiny = super::compile(quote! {
            model M {
                input x: f32[1, 8];
                weight w: f32[8, 1] = glorot_uniform(seed = 1);
                output y = Gemm(x, w);
            }
        })
        .unwrap();
        assert!(tiny.planned.inline_run);
        assert!(!super::compile(mlp()).unwrap().planned.inline_run);
        // Both `run`s marked, and `INFO` saying so (what the firmware harness reads).
        let code = |src| {
            let code = super::expand(src).to_string();
            let marked = code.matches("# [inline] fn run").count();
            assert_eq!(
                code.contains("run_inlined : true"),
                marked > 0,
                "INFO and the attribute disagree"
            );
            // The refusals are cold exactly where `run` is inlined.
            assert_eq!(
                code.contains("cold_path"),
                marked > 0,
                "cold refusals and inlining disagree"
            );
            marked
        };
        assert_eq!(
            code(quote! {
                model M {
                    input x: f32[1, 8];
                    output y = Relu(x);
                }
            }),
            2
        );
        assert_eq!(code(mlp()), 0);
        // One node, but over many values: the call is a small part of its cost.
        assert_eq!(
            code(quote! {
                model M {
                    input x: f32[1, 4096];
                    output y = Relu(x);
                }
            }),
            0
        );
    }

    /// Which nodes the planner let run as Winograd.
    fn winograd_nodes(c: &super::Compiled) -> Vec<&str> {
        let p = &c.planned;
        (p.graph.nodes.iter().zip(&p.steps))
            .filter(|(_, s)| s.winograd > 0)
            .map(|(n, _)| n.op.op_type)
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
        let (auto, never) = (pooled(quote!(winograd = auto;)), pooled(quote!()));
        assert_eq!(winograd_nodes(&auto), ["Conv"]);
        // No setting is `never`: no transformed kernel the author did not ask for.
        assert!(winograd_nodes(&never).is_empty());
        assert_eq!(auto.planned.arena_bytes, never.planned.arena_bytes);
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
        let auto = lone(quote!(winograd = auto;));
        assert!(winograd_nodes(&auto).is_empty());
        let always = lone(quote!(winograd = always;));
        assert_eq!(winograd_nodes(&always), ["Conv"]);
        assert!(always.planned.arena_bytes > auto.planned.arena_bytes);
        assert!(winograd_nodes(&lone(quote!(winograd = never;))).is_empty());
        // Pooled by two only: all sixteen elements a pass would grow the arena, passes of
        // one element row (a quarter of the scratch) fit.
        let halved = |setting| pooled_convs(setting, 4, 16, 2);
        let rows = |c: &super::Compiled| {
            c.planned
                .steps
                .iter()
                .map(|s| s.winograd)
                .collect::<Vec<_>>()
        };
        let (auto, never) = (halved(quote!(winograd = auto;)), halved(quote!()));
        assert_eq!(rows(&auto), [0, 0, 1]);
        assert_eq!(auto.planned.arena_bytes, never.planned.arena_bytes);
        let always = halved(quote!(winograd = always;));
        assert_eq!(rows(&always)[2], 4);
        assert!(always.planned.arena_bytes > auto.planned.arena_bytes);
    }

    #[test]
    fn only_a_winograd_kernel_the_model_asked_for_counts_as_transformed() {
        use super::emit_rust::{stored_weight_bytes, transformed_weight_bytes};
        let pooled = |setting| pooled_convs(setting, 8, 64, 4);
        let (auto, never) = (pooled(quote!(winograd = auto;)), pooled(quote!()));
        // w3 is 64 x 64 x 3 x 3 f32; stored as 16 x 64 x 64: 7 more values every 9.
        assert_eq!(transformed_weight_bytes(&auto.planned), 64 * 64 * 7 * 4);
        assert_eq!(transformed_weight_bytes(&never.planned), 0);
        // `always` marks every node; only the 3x3 convolution stores its kernel so.
        let always = pooled(quote!(winograd = always;));
        assert_eq!(transformed_weight_bytes(&always.planned), 64 * 64 * 7 * 4);
        // The declared weights are counted alike in both.
        let declared = (64 * 8 + 64 * 64 * 9) * 4;
        assert_eq!(stored_weight_bytes(&auto.planned), declared);
        assert_eq!(stored_weight_bytes(&never.planned), declared);
        // And what INFO says, for a lone convolution the author asked to transform.
        let code = super::expand(quote! {
            model M {
                winograd = always;
                input x: f32[1, 8, 16, 16];
                weight w: f32[8, 8, 3, 3] = he_normal(seed = 1);
                output y = Conv(x, w, pads = [1, 1, 1, 1]);
            }
        })
        .to_string();
        assert!(code.contains(&format!("transformed_bytes : {}", 8 * 8 * 7 * 4)));
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
        assert_eq!(c.planned.graph.nodes.len(), 7);
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
            .planned
            .graph
            .weights
            .iter()
            .map(|&w| c.planned.graph.tensors[w].name.as_str())
            .collect();
        assert!(weights.contains(&"stage1.conv.weight"), "{weights:?}");
        assert!(weights.contains(&"stage2.bn.var"), "{weights:?}");
        let names: std::collections::HashSet<&str> = c
            .planned
            .graph
            .tensors
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(
            names.len(),
            c.planned.graph.tensors.len(),
            "tensor names are unique"
        );
    }

    #[test]
    fn batch_norm_and_relu_fuse_into_the_convolution() {
        let c = super::compile(conv_block_model()).unwrap();
        let p = &c.planned;
        let ops: Vec<&str> = p.graph.nodes.iter().map(|n| n.op.op_type).collect();
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
            .filter(|&i| !p.steps[i].skip)
            .map(|i| ops[i])
            .collect();
        assert_eq!(run, ["Conv", "Conv", "GlobalAveragePool"]);
        assert!(p.steps[0].epilogue.relu && p.steps[3].epilogue.relu);
        // var = 2, scale = 1, mean = 0, B = 0: weights scale by 1/sqrt(2 + 1e-5).
        let w = p.steps[0].folded.as_ref().unwrap().0.as_f32().unwrap();
        let orig = p.graph.tensors[p.graph.nodes[0].inputs[1].unwrap()]
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
        let skips =
            |c: &super::Compiled| c.planned.steps.iter().map(|s| s.skip).collect::<Vec<_>>();
        let c = compiled(quote!(f32));
        assert_eq!(skips(&c), [false, false, true, false]);
        assert!(c.planned.steps[1].epilogue.relu);
        // Relu of an f64 sum keeps its own kernel.
        let c = compiled(quote!(f64));
        assert_eq!(skips(&c), [false, false, false, false]);
    }

    #[test]
    fn a_relu_before_a_max_pool_moves_after_it() {
        let c = super::compile(quote! {
            model M {
                input x: f32[1, 4, 8, 8];
                weight w: f32[4, 4, 3, 3] = he_normal(seed = 1);
                let h = Relu(Conv(x, w, pads = [1, 1, 1, 1]));
                output y = MaxPool(h, kernel_shape = [2, 2], strides = [2, 2]);
                output z = MaxPool(Relu(Neg(x)), kernel_shape = [2, 2], strides = [2, 2]);
            }
        })
        .unwrap();
        let p = &c.planned;
        let ops: Vec<&str> = p.graph.nodes.iter().map(|n| n.op.op_type).collect();
        assert_eq!(ops, ["Conv", "Relu", "MaxPool", "Neg", "Relu", "MaxPool"]);
        let skips: Vec<bool> = p.steps.iter().map(|s| s.skip).collect();
        assert_eq!(skips, [false, true, false, false, true, false]);
        // The convolution keeps no Relu; each pool takes the one before it.
        assert!(!p.steps[0].epilogue.relu);
        assert!(p.steps[2].epilogue.relu && p.steps[5].epilogue.relu);
        assert!(p.steps[1].deferred && p.steps[4].deferred);
        // A Relu read by something else as well stays where it is.
        let c = super::compile(quote! {
            model M {
                input x: f32[1, 4, 8, 8];
                let h = Relu(Neg(x));
                output y = MaxPool(h, kernel_shape = [2, 2], strides = [2, 2]);
                output z = Neg(h);
            }
        })
        .unwrap();
        assert!(
            c.planned
                .steps
                .iter()
                .all(|s| !s.deferred && !s.epilogue.relu)
        );
    }

    /// The offsets of the named tensors' buffers.
    fn offset(c: &super::Compiled, name: &str) -> usize {
        let id = c
            .planned
            .graph
            .tensors
            .iter()
            .position(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tensor {name}"));
        c.planned.offsets[&id]
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
        assert_eq!(c.planned.lower_bound_bytes, 128);
        assert_eq!(c.planned.arena_bytes, 128);
        assert_eq!(offset(&c, "v"), offset(&c, "a"));
        assert_eq!(offset(&c, "w"), offset(&c, "b"));
        assert_ne!(offset(&c, "a"), offset(&c, "b"));
        let ops: Vec<&str> = c.planned.graph.nodes.iter().map(|n| n.op.op_type).collect();
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(c.planned.steps[i].inplace, *op == "Reshape", "{op}");
        }
        // The views emit no copy, and `run`, `run_f32` and `run_traced` write the output
        // in place.
        let code = c.emit().to_string();
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
        assert_eq!(c.planned.lower_bound_bytes, 128);
        assert_eq!(c.planned.arena_bytes, 128);
        assert_eq!(offset(&c, "t"), offset(&c, "b"));
        assert_eq!(offset(&c, "u"), offset(&c, "b"));
    }

    /// `Relu(Relu(...(x)))` nested `depth` deep, built without recursion.
    fn nested_relu(depth: usize) -> proc_macro2::TokenStream {
        use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
        let mut e: TokenStream = quote!(x);
        for _ in 0..depth {
            e = TokenStream::from_iter([
                TokenTree::Ident(Ident::new("Relu", Span::call_site())),
                TokenTree::Group(Group::new(Delimiter::Parenthesis, e)),
            ]);
        }
        quote! {
            model M {
                input x: f32[4];
                output y = #e;
            }
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        // On a stack like that of rustc's thread: 3,000 levels once overflowed it.
        let run = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(|| {
                let deepest = super::compile(nested_relu(crate::syntax::MAX_NESTING - 2));
                let too_deep = super::compile(nested_relu(3_000)).unwrap_err();
                let expanded = super::expand(nested_relu(3_000)).to_string();
                (
                    deepest.is_ok(),
                    too_deep.errors.len(),
                    too_deep.errors[0].to_string(),
                    expanded,
                )
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(run.0, "a nesting within the limit compiles");
        assert_eq!(run.1, 1, "one error, at the level past the limit");
        assert!(run.2.contains("nest more than 128 levels"), "{}", run.2);
        assert!(run.3.contains("compile_error"), "{}", run.3);
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
        assert_eq!(c.planned.arena_bytes, 2080);
        assert_eq!(c.planned.lower_bound_bytes, 2080);
        let names: Vec<String> = c
            .planned
            .graph
            .nodes
            .iter()
            .map(|n| c.planned.graph.tensors[n.outputs[0]].name.clone())
            .collect();
        assert_eq!(names, ["big", "s", "m1", "m2", "m3", "y"]);
    }

    /// A QDQ product (DequantizeLinear on both operands, MatMul, QuantizeLinear) runs
    /// as one QLinearMatMul on the 8-bit values, per tensor and with the weight per
    /// column; a dequantized value another node also reads keeps its DequantizeLinear
    /// (folded when constant), and an output quantized per axis (no QLinearMatMul form)
    /// stays in float.
    #[test]
    fn qdq_products_run_as_integer_products() {
        let ops = |c: &super::Compiled| -> Vec<&str> {
            c.planned.graph.nodes.iter().map(|n| n.op.op_type).collect()
        };
        let c = super::compile(quote! {
            model M {
                input x: i8[2, 4];
                weight w: i8[4, 3] = [1, -2, 3, 4, 5, -6, 7, 8, 9, -10, 11, 12];
                weight wc: i8[4, 3] = [1, -2, 3, 4, 5, -6, 7, 8, 9, -10, 11, 12];
                weight sc: f32[3] = [0.1, 0.2, 0.3];
                weight zc: i8[3] = [0, 1, -1];
                let a = DequantizeLinear(x, Constant(value_float = 0.5), Cast(Constant(value_int = 3), to = i8));
                let b = DequantizeLinear(w, Constant(value_float = 0.25), Cast(Constant(value_int = 0), to = i8));
                let bc = DequantizeLinear(wc, sc, zc, axis = 1);
                output y = QuantizeLinear(MatMul(a, b), Constant(value_float = 0.75), Cast(Constant(value_int = -4), to = i8));
                output z = QuantizeLinear(MatMul(a, bc), Constant(value_float = 0.75), Cast(Constant(value_int = 1), to = i8));
            }
        })
        .unwrap();
        let o = ops(&c);
        assert_eq!(
            o.iter().filter(|&&op| op == "QLinearMatMul").count(),
            2,
            "{o:?}"
        );
        assert!(
            !o.iter()
                .any(|op| op.ends_with("QuantizeLinear") || *op == "MatMul"),
            "{o:?}"
        );
        let c = super::compile(quote! {
            model M {
                input x: i8[2, 4];
                weight w: i8[4, 3] = [1, -2, 3, 4, 5, -6, 7, 8, 9, -10, 11, 12];
                weight sy: f32[3] = [0.5, 0.75, 1.0];
                weight zy: i8[3] = [0, 0, 0];
                let a = DequantizeLinear(x, Constant(value_float = 0.5), Cast(Constant(value_int = 3), to = i8));
                let b = DequantizeLinear(w, Constant(value_float = 0.25), Cast(Constant(value_int = 0), to = i8));
                output y = QuantizeLinear(MatMul(a, b), Constant(value_float = 0.75), Cast(Constant(value_int = -4), to = i8));
                output also = Relu(a);
                output z = QuantizeLinear(MatMul(a, b), sy, zy, axis = 1);
            }
        })
        .unwrap();
        let o = ops(&c);
        assert_eq!(
            o.iter().filter(|&&op| op == "QLinearMatMul").count(),
            1,
            "{o:?}"
        );
        // The activation's DequantizeLinear stays for the Relu; the weight's, which the
        // float MatMul reads, is folded into an f32 weight.
        assert_eq!(
            o.iter().filter(|&&op| op == "DequantizeLinear").count(),
            1,
            "{o:?}"
        );
        assert_eq!(o.iter().filter(|&&op| op == "MatMul").count(), 1, "{o:?}");
        // A QDQ Gemm as PyTorch's Linear exports it (B [N, K], transB) with its bias as
        // int32 sums of scale a_scale * b_scale: one QGemm; with another bias scale, or
        // beta 2, it stays in float.
        let gemm = |bias_scale: f32, beta: f32| {
            super::compile(quote! {
                model M {
                    input x: i8[1, 4];
                    weight w: i8[3, 4] = [1, -2, 3, 4, 5, -6, 7, 8, 9, -10, 11, 12];
                    weight c: i32[3] = [100, -200, 300];
                    let a = DequantizeLinear(x, Constant(value_float = 0.5), Cast(Constant(value_int = 3), to = i8));
                    let b = DequantizeLinear(w, Constant(value_float = 0.25), Cast(Constant(value_int = 0), to = i8));
                    let bias = DequantizeLinear(c, Constant(value_floats = [#bias_scale]), Cast(Constant(value_int = 0), to = i32));
                    output y = QuantizeLinear(Gemm(a, b, bias, transB = 1, beta = #beta), Constant(value_float = 0.75), Cast(Constant(value_int = -4), to = i8));
                }
            })
            .unwrap()
        };
        let o = ops(&gemm(0.125, 1.0));
        assert_eq!(o.iter().filter(|&&op| op == "QGemm").count(), 1, "{o:?}");
        assert!(
            !o.iter()
                .any(|op| op.ends_with("QuantizeLinear") || *op == "Gemm"),
            "{o:?}"
        );
        for (s, beta) in [(0.25, 1.0), (0.125, 2.0)] {
            let o = ops(&gemm(s, beta));
            assert!(o.contains(&"Gemm") && !o.contains(&"QGemm"), "{o:?}");
        }
    }
}
