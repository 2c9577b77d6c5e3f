//! Emits the model type: its constants (ONNX bytes, arena size, counts) and the
//! statically planned `no_std` forward pass. A one-way walk over the plan's record
//! ([`Planned`]): every decision was made by `plan`, this module only writes it out.

mod steps;

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use crate::emit_onnx::Streamed;
use crate::ir::{Graph, TensorId};
use crate::ops::static_data;
use crate::plan::Planned;
use crate::syntax::ModelDef;

use steps::{input_ident, lower_ctx, read_weights, steps};
pub use steps::{macs, stored_weight_bytes, transformed_weight_bytes};

fn doc_lines(text: &str) -> TokenStream {
    let lines = text.lines().map(|l| format!(" {l}"));
    quote!(#(#[doc = #lines])*)
}

fn tensor_info(graph: &Graph, id: TensorId) -> TokenStream {
    let name = &graph.tensors[id].name;
    let shape = graph.device_shape(id);
    let dtype = graph.tensors[id].ty.dtype.name();
    quote!(::tinyonnx::TensorInfo { name: #name, shape: &[#(#shape),*], dtype: #dtype })
}

/// Targets whose objects are not ELF, and Miri (which runs no assembly): there the
/// ONNX bytes of a model with streamed weights are built at compile time from
/// `include_bytes!` instead of by the assembler.
fn no_incbin() -> TokenStream {
    quote!(any(
        miri,
        windows,
        target_vendor = "apple",
        target_family = "wasm"
    ))
}

/// The ONNX bytes as the model's `ONNX` constant, and the items it needs. With streamed
/// weights, the bytes are a `static` the assembler fills: the literal parts as `.byte`
/// lines and each streamed weight's values by `.incbin` of its file, so rustc never
/// holds them (a literal costs it many times its size in memory).
fn onnx_items(name: &str, onnx: &[u8], streamed: &[Streamed]) -> (TokenStream, TokenStream) {
    let total = onnx.len();
    if streamed.is_empty() {
        let lit = Literal::byte_string(onnx);
        let konst = quote! {
            /// The model serialized as ONNX (`ModelProto` bytes).
            pub const ONNX: &'static [u8] = {
                const BYTES: &[u8; #total] = #lit;
                BYTES
            };
        };
        return (TokenStream::new(), konst);
    }
    // One symbol per crate, model and contents (weak, so two identical expansions may
    // meet in one link).
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    std::env::var("CARGO_CRATE_NAME")
        .unwrap_or_default()
        .hash(&mut h);
    name.hash(&mut h);
    onnx.hash(&mut h);
    let sym = format!(
        "__tinyonnx_onnx_{}_{:016x}",
        name.to_ascii_lowercase(),
        h.finish()
    );
    let sym_ident = Ident::new(&sym, Span::call_site());
    let mut asm = format!(
        ".pushsection .rodata.{sym},\"a\"\n.balign {}\n.weak {sym}\n.hidden {sym}\n{sym}:\n",
        crate::emit_onnx::STREAM_ALIGN
    );
    let mut parts = Vec::new();
    let push_bytes = |asm: &mut String, parts: &mut Vec<TokenStream>, bytes: &[u8]| {
        for line in bytes.chunks(32) {
            let values: Vec<String> = line.iter().map(u8::to_string).collect();
            asm.push_str(&format!(".byte {}\n", values.join(",")));
        }
        let lit = Literal::byte_string(bytes);
        parts.push(quote!(#lit));
    };
    let mut at = 0;
    for s in streamed {
        push_bytes(&mut asm, &mut parts, &onnx[at..s.offset]);
        let path = s
            .file
            .path
            .to_str()
            .expect("streamed paths are text (plan::stream)");
        // The template's braces are format placeholders; the string's quotes and
        // backslashes need escapes.
        let quoted = path
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('{', "{{")
            .replace('}', "}}");
        asm.push_str(&format!(
            ".incbin \"{quoted}\", {}, {}\n",
            s.file.offset, s.file.len
        ));
        let (offset, len) = (s.file.offset as usize, s.file.len as usize);
        parts.push(quote!(::tinyonnx::__export::file_bytes(include_bytes!(#path), #offset, #len)));
        at = s.offset + len;
    }
    push_bytes(&mut asm, &mut parts, &onnx[at..]);
    // Exactly `total` bytes even if a file shrank during the build (`.incbin` would
    // stop short): the static's Rust type promises them.
    asm.push_str(&format!(
        ".org {sym}+{total}\n.type {sym},%object\n.size {sym},{total}\n.popsection\n"
    ));
    let asm = Literal::string(&asm);
    let no_incbin = no_incbin();
    let items = quote! {
        #[cfg(not(#no_incbin))]
        ::core::arch::global_asm!(#asm);
        #[cfg(not(#no_incbin))]
        // Safety: the declaration matches the definition above: `total` bytes (`.org`
        // pads to it), 64-byte aligned, read-only, so any `[u8; total]` read is valid.
        unsafe extern "C" {
            static #sym_ident: [u8; #total];
        }
        #[cfg(#no_incbin)]
        static #sym_ident: ::tinyonnx::__export::Aligned<#total> =
            ::tinyonnx::__export::Aligned(::tinyonnx::__export::concat::<#total>(&[#(#parts),*]));
    };
    let konst = quote! {
        /// The model serialized as ONNX (`ModelProto` bytes).
        #[cfg(not(#no_incbin))]
        // Safety: the `global_asm!` beside the model defines the symbol as exactly these
        // bytes (`.org` pads to the length) in a read-only section, never written.
        pub const ONNX: &'static [u8] = unsafe { &*::core::ptr::addr_of!(#sym_ident) };
        /// The model serialized as ONNX (`ModelProto` bytes).
        #[cfg(#no_incbin)]
        pub const ONNX: &'static [u8] = &#sym_ident.0;
    };
    (items, konst)
}

/// The whole expansion of a checked model.
pub fn emit(model: &ModelDef, p: &Planned, onnx: &[u8], streamed: &[Streamed]) -> TokenStream {
    let graph = &p.graph;
    let (vis, doc) = (&model.vis, model.doc.as_str());
    let name = Ident::new(&graph.name, Span::call_site());
    let name_str = &graph.name;
    let arena_bytes = p.arena_bytes;
    let lower_bound = p.lower_bound_bytes;
    let stack_bytes = p.stack_bytes;
    let params = graph.params();
    let nodes = graph.nodes.len();
    let total_macs = macs(p);
    let weights_bytes = stored_weight_bytes(p);
    let transformed_bytes = transformed_weight_bytes(p);
    let (onnx_statics, onnx_const) = onnx_items(name_str, onnx, streamed);

    // Weights: aligned static bytes, viewed as typed arrays.
    // Weights the kernels read: aligned static bytes, viewed as typed arrays. Weights
    // only compile-time code reads (shapes, axes, folded BatchNormalization parameters)
    // are not emitted.
    let read = read_weights(p);
    let weights = graph.weights.iter().filter(|w| read.contains(w)).map(|&w| {
        let t = &graph.tensors[w];
        let view = format_ident!("__w{}", w);
        if let Some(s) = streamed.iter().find(|s| s.name == t.name) {
            let n = graph.device_numel(w);
            let offset = s.offset;
            return quote! {
                let #view: &'static [f32; #n] = ::tinyonnx::__export::onnx_f32::<#n>(Self::ONNX, #offset);
            };
        }
        let data = t.value.as_ref().expect("bug: a weight without values");
        static_data(&format_ident!("__W{}", w), &view, data)
    });
    let folded = p.steps.iter().enumerate().filter_map(|(i, step)| {
        let (w, b) = step.folded.as_ref()?;
        // A convolution that packs its weights reads only the folded bias.
        let packs = (graph.nodes[i].op.packs)(&lower_ctx(p, i));
        let ws = (!packs.contains(&1))
            .then(|| static_data(&format_ident!("__WF{}", i), &format_ident!("__wf{}", i), w));
        let bs = static_data(&format_ident!("__BF{}", i), &format_ident!("__bf{}", i), b);
        Some(quote!(#ws #bs))
    });

    // The outputs: zeroed arrays `forward_with` returns, or the caller's buffers
    // (`run`), which the forward pass writes in place.
    let out_idents: Vec<Ident> = graph
        .outputs
        .iter()
        .map(|&o| format_ident!("__out{}", o))
        .collect();
    let out_decls = graph.outputs.iter().zip(&out_idents).map(|(&o, ident)| {
        let elem = format_ident!("{}", graph.tensors[o].ty.dtype.name());
        let n = graph.device_numel(o);
        quote!(let mut #ident = [<#elem as ::core::default::Default>::default(); #n];)
    });
    let kernels_by_name: Vec<(String, &syn::Path)> = model
        .items
        .iter()
        .filter_map(|item| match item {
            crate::syntax::Item::Custom(d) => Some((d.name.to_string(), d.kernel.as_ref()?)),
            _ => None,
        })
        .collect();
    let steps = steps(p, &kernels_by_name, true);
    let param_names: Vec<Ident> = graph
        .inputs
        .iter()
        .map(|&i| input_ident(graph, i))
        .collect();
    // The ports: separate parameters, or one tuple (`Planned::ports_bundled`).
    let port_tys = port_types(graph);
    let (in_tys, out_tys) = port_tys.split_at(param_names.len());
    let params_sig: Vec<TokenStream> = param_names
        .iter()
        .zip(in_tys)
        .map(|(ident, ty)| quote!(#ident: #ty))
        .collect();
    let args = param_names
        .iter()
        .map(|i| quote!(#i))
        .chain(out_idents.iter().map(|o| quote!(&mut #o)));
    let (ports_sig, forward_ports) = if p.ports_bundled {
        (
            quote!(__ports: &mut (#(#port_tys,)*),),
            quote!(&mut (#(#args,)*),),
        )
    } else {
        (
            quote!(#(#params_sig,)* #(#out_idents: #out_tys,)*),
            quote!(#(#args,)*),
        )
    };
    let out_types: Vec<TensorStreamPair> = graph
        .outputs
        .iter()
        .map(|&o| {
            let elem = format_ident!("{}", graph.tensors[o].ty.dtype.name());
            let n = graph.device_numel(o);
            let ident = format_ident!("__out{}", o);
            (quote!([#elem; #n]), quote!(#ident))
        })
        .collect();
    let (ret_ty, ret_val) = if out_types.len() == 1 {
        out_types[0].clone()
    } else {
        let tys = out_types.iter().map(|(t, _)| t);
        let vals = out_types.iter().map(|(_, v)| v);
        (quote!((#(#tys),*)), quote!((#(#vals),*)))
    };
    let input_infos = graph.inputs.iter().map(|&i| tensor_info(graph, i));
    let output_infos = graph.outputs.iter().map(|&o| tensor_info(graph, o));
    let forward_doc = forward_doc(graph);
    let run_f32 = run_f32(p);
    let run_inlined = p.inline_run;
    let inline = run_inlined.then(|| quote!(#[inline]));
    let run_traced = run_typed(p, Some(quote!(trace)));
    let run_typed = run_typed(p, None);
    let type_doc = doc_lines(doc);

    quote! {
        #onnx_statics
        #type_doc
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #name;

        impl #name {
            #onnx_const
            /// Bytes of the activation arena [`Self::forward`] needs (planned at compile time).
            pub const ARENA_BYTES: usize = #arena_bytes;
            /// The largest total size of intermediate tensors alive at the same step.
            pub const ARENA_LOWER_BOUND_BYTES: usize = #lower_bound;
            /// The stack budget of one inference below the caller's frame (see
            /// `tinyonnx_layout::stack`); the firmware test holds every board to it.
            pub const STACK_BYTES: usize = #stack_bytes;
            /// Number of weight values.
            pub const PARAMS: usize = #params;
            /// Bytes of weight data in `static` memory.
            pub const WEIGHTS_BYTES: usize = #weights_bytes;
            /// Number of ONNX nodes.
            pub const NODES: usize = #nodes;
            /// Multiply-accumulates (element operations for element-wise nodes) of one inference.
            pub const MACS: u64 = #total_macs;
            /// The constants above (but the ONNX bytes), plus the inputs and outputs.
            pub const INFO: ::tinyonnx::ModelInfo = ::tinyonnx::ModelInfo {
                name: #name_str,
                inputs: &[#(#input_infos),*],
                outputs: &[#(#output_infos),*],
                params: #params,
                weights_bytes: #weights_bytes,
                transformed_bytes: #transformed_bytes,
                nodes: #nodes,
                macs: #total_macs,
                arena_bytes: #arena_bytes,
                arena_lower_bound_bytes: #lower_bound,
                stack_bytes: #stack_bytes,
                run_inlined: #run_inlined,
            };

            /// A zeroed arena of the planned size.
            pub const fn arena() -> ::tinyonnx::Arena<#arena_bytes> {
                ::tinyonnx::Arena::new()
            }

            #forward_doc
            #[allow(clippy::too_many_arguments)]
            #[inline]
            pub fn forward(arena: &mut ::tinyonnx::Arena<#arena_bytes>, #(#params_sig),*) -> #ret_ty {
                Self::forward_with(arena, #(#param_names,)* &mut ::tinyonnx::__export::no_trace)
            }

            /// [`Self::forward`], calling `trace` with the name and values of every
            /// intermediate and output tensor as its node finishes, in the order the nodes
            /// run (for comparing layer by layer; a tensor that a fused kernel never
            /// materializes, such as a convolution's output before a folded
            /// BatchNormalization, is not reported). With a no-op `trace` the calls compile
            /// away.
            #[allow(clippy::too_many_arguments, clippy::unnecessary_cast, unused_unsafe, unused_variables)]
            pub fn forward_with<F: ::core::ops::FnMut(&str, ::tinyonnx::TensorRef<'_>) + ?Sized>(
                arena: &mut ::tinyonnx::Arena<#arena_bytes>,
                #(#params_sig,)*
                trace: &mut F,
            ) -> #ret_ty {
                #(#out_decls)*
                // Safety: the arena's pointer covers its `ARENA_BYTES` bytes at a 16-byte
                // aligned address and stays exclusively borrowed for the call.
                unsafe { Self::__forward_into(arena.as_mut_ptr(), #forward_ports trace) };
                #ret_val
            }

            /// The forward pass on a raw arena, writing the outputs in place (so that
            /// [`::tinyonnx::Model::run`] needs no stack for them).
            ///
            /// # Safety
            /// `__base` points to `ARENA_BYTES` writable bytes at a 16-byte aligned
            /// address that nothing else reads or writes during the call.
            #[doc(hidden)]
            #[allow(clippy::too_many_arguments, clippy::unnecessary_cast, unused_unsafe, unused_variables)]
            unsafe fn __forward_into<F: ::core::ops::FnMut(&str, ::tinyonnx::TensorRef<'_>) + ?Sized>(
                __base: *mut u8,
                #ports_sig
                trace: &mut F,
            ) {
                #(#weights)*
                #(#folded)*
                let _ = __base;
                #(#steps)*
            }
        }

        impl ::tinyonnx::Model for #name {
            const INFO: ::tinyonnx::ModelInfo = #name::INFO;
            const ONNX: &'static [u8] = #name::ONNX;

            #inline
            fn run_f32(
                arena: &mut [u8],
                inputs: &[&[f32]],
                outputs: &mut [&mut [f32]],
            ) -> ::core::result::Result<(), ::tinyonnx::RunError> {
                #run_f32
            }

            #inline
            fn run(
                arena: &mut [u8],
                inputs: &[::tinyonnx::TensorRef<'_>],
                outputs: &mut [::tinyonnx::TensorMut<'_>],
            ) -> ::core::result::Result<(), ::tinyonnx::RunError> {
                #run_typed
            }

            fn run_traced(
                arena: &mut [u8],
                inputs: &[::tinyonnx::TensorRef<'_>],
                outputs: &mut [::tinyonnx::TensorMut<'_>],
                trace: &mut dyn ::core::ops::FnMut(&str, ::tinyonnx::TensorRef<'_>),
            ) -> ::core::result::Result<(), ::tinyonnx::RunError> {
                #run_traced
            }
        }
    }
}

type TensorStreamPair = (TokenStream, TokenStream);

fn forward_doc(graph: &Graph) -> TokenStream {
    let mut text = String::from(
        "Runs one inference: no heap, weights read from `static` data, activations in `arena`.\n\n",
    );
    for &i in &graph.inputs {
        let t = &graph.tensors[i];
        text.push_str(&format!(
            "- input `{}`: ONNX {}, device {:?}, row-major\n",
            t.name,
            t.ty,
            graph.device_shape(i)
        ));
    }
    for &o in &graph.outputs {
        let t = &graph.tensors[o];
        text.push_str(&format!(
            "- output `{}`: ONNX {}, device {:?}, row-major\n",
            t.name,
            t.ty,
            graph.device_shape(o)
        ));
    }
    doc_lines(&text)
}

/// The body of `Model::run_f32`: length checks, then the forward pass writing into the
/// caller's buffers.
fn run_f32(p: &Planned) -> TokenStream {
    let graph = &p.graph;
    let all_f32 = graph
        .inputs
        .iter()
        .chain(&graph.outputs)
        .all(|&t| graph.tensors[t].ty.dtype == crate::types::DType::F32);
    if !all_f32 {
        return quote! {
            let _ = (arena, inputs, outputs);
            ::core::result::Result::Err(::tinyonnx::RunError::NotF32)
        };
    }
    let in_checks = graph.inputs.iter().enumerate().map(|(k, &i)| {
        let n = graph.device_numel(i);
        let refuse = length_refusal(p, quote!(Input(#k)), n, quote!(inputs[#k].len()));
        quote! {
            <&[f32; #n]>::try_from(inputs[#k]).map_err(#refuse)?
        }
    });
    let out_checks = graph.outputs.iter().enumerate().map(|(k, &o)| {
        let n = graph.device_numel(o);
        let m = format_ident!("__m{}", k);
        let refuse = length_refusal(p, quote!(Output(#k)), n, quote!(got));
        quote! {{
            let got = #m.len();
            <&mut [f32; #n]>::try_from(&mut **#m).map_err(#refuse)?
        }}
    });
    run_body(p, in_checks.chain(out_checks).collect(), None)
}

use crate::ops::variant;

/// Where `run` is inlined into its caller (a model of a node or two), its refusals are
/// marked cold, so that the caller's success path runs straight through (on the riscv32f
/// a one-port model's success otherwise jumped over the error stores). Elsewhere the
/// hint is left out: in the models of many ports it changed what LLVM inlined (the
/// dtype zoo +2 KB).
fn cold_hint(p: &Planned) -> Option<TokenStream> {
    p.inline_run.then(|| quote!(::core::hint::cold_path();))
}

/// The closure a length check's `map_err` takes: the refusal of port `port` (`Input(k)`
/// or `Output(k)`) of `expected` values that got `got`.
fn length_refusal(
    p: &Planned,
    port: TokenStream,
    expected: usize,
    got: TokenStream,
) -> TokenStream {
    let cold = cold_hint(p);
    quote! {
        |_| { #cold ::tinyonnx::RunError::Length { which: ::tinyonnx::Port::#port, expected: #expected, got: #got } }
    }
}

/// The body of `Model::run` (and with `trace`, the expression of the trace callback,
/// of `Model::run_traced`): dtype and length checks per port, then the forward pass
/// writing into the caller's buffers.
fn run_typed(p: &Planned, trace: Option<TokenStream>) -> TokenStream {
    let graph = &p.graph;
    let in_checks = graph.inputs.iter().enumerate().map(|(k, &i)| {
        let n = graph.device_numel(i);
        let dtype = graph.tensors[i].ty.dtype;
        let (v, elem, name) = (variant(dtype), crate::ops::elem(dtype), dtype.name());
        let refuse = length_refusal(p, quote!(Input(#k)), n, quote!(s.len()));
        quote! {
            match inputs[#k] {
                ::tinyonnx::TensorRef::#v(s) => <&[#elem; #n]>::try_from(s).map_err(#refuse)?,
                ref other => return ::core::result::Result::Err(::tinyonnx::__export::wrong_input(#k, #name, other)),
            }
        }
    });
    let out_checks = graph.outputs.iter().enumerate().map(|(k, &o)| {
        let n = graph.device_numel(o);
        let dtype = graph.tensors[o].ty.dtype;
        let (v, elem, name) = (variant(dtype), crate::ops::elem(dtype), dtype.name());
        let m = format_ident!("__m{}", k);
        let refuse = length_refusal(p, quote!(Output(#k)), n, quote!(got));
        quote! {
            match #m {
                ::tinyonnx::TensorMut::#v(s) => {
                    let got = s.len();
                    <&mut [#elem; #n]>::try_from(&mut **s).map_err(#refuse)?
                }
                ref other => return ::core::result::Result::Err(::tinyonnx::__export::wrong_output(#k, #name, other)),
            }
        }
    });
    run_body(p, in_checks.chain(out_checks).collect(), trace)
}

/// The shared part of `run_f32` and `run`: port counts, `checks` (per port, inputs then
/// outputs, an expression of the checked array that returns the port's error; an
/// output's reads its slot `__m<k>`), the arena, and the forward pass on the arena's
/// pointer, writing the outputs in place: the stack these take does not grow with the
/// tensors.
///
/// Bundled ports (`Planned::ports_bundled`) are written into their tuple as each is
/// checked: a checked value kept until the call would take a stack slot of its own
/// beside its slot in the tuple (LLVM loads them all before it stores any).
fn run_body(p: &Planned, checks: Vec<TokenStream>, trace: Option<TokenStream>) -> TokenStream {
    let graph = &p.graph;
    let n_in = graph.inputs.len();
    let n_out = graph.outputs.len();
    let slots: Vec<Ident> = (0..n_out).map(|k| format_ident!("__m{}", k)).collect();
    let name = Ident::new(&graph.name, Span::call_site());
    let trace = trace.unwrap_or_else(|| quote!(&mut ::tinyonnx::__export::no_trace));
    let cold = cold_hint(p);
    let counts = quote! {
        if inputs.len() != #n_in {
            #cold
            return ::core::result::Result::Err(::tinyonnx::RunError::Count { which: "inputs", expected: #n_in, got: inputs.len() });
        }
        let got = outputs.len();
        let [#(#slots),*] = outputs else {
            #cold
            return ::core::result::Result::Err(::tinyonnx::RunError::Count { which: "outputs", expected: #n_out, got });
        };
    };
    let arena = quote! {
        let __base = ::tinyonnx::__export::arena_ptr(arena, #name::ARENA_BYTES)?;
    };
    if p.ports_bundled {
        let tys = port_types(graph);
        let writes = checks.iter().enumerate().map(|(k, check)| {
            let k = syn::Index::from(k);
            quote! {
                let __v = #check;
                // Safety: `__p` is the address of the local tuple `__ports`, valid and
                // aligned for it; the field's address is taken without reading it, and
                // `write` stores without reading or dropping the uninitialized value.
                unsafe { (&raw mut (*__p).#k).write(__v) };
            }
        });
        quote! {
            #counts
            let mut __ports = ::core::mem::MaybeUninit::<(#(#tys,)*)>::uninit();
            let __p = __ports.as_mut_ptr();
            #(#writes)*
            #arena
            // Safety: every field was written above; each check that failed returned
            // before this point, so an incomplete tuple is never read.
            let __ports = unsafe { __ports.assume_init_mut() };
            // Safety: `arena_ptr` checked that the buffer holds `ARENA_BYTES` bytes at a
            // 16-byte aligned address, and `arena` stays exclusively borrowed for the call.
            unsafe { #name::__forward_into(__base, __ports, #trace) };
            ::core::result::Result::Ok(())
        }
    } else {
        let idents: Vec<Ident> = (0..checks.len())
            .map(|k| format_ident!("__p{}", k))
            .collect();
        quote! {
            #counts
            #(let #idents = #checks;)*
            #arena
            // Safety: `arena_ptr` checked that the buffer holds `ARENA_BYTES` bytes at a
            // 16-byte aligned address, and `arena` stays exclusively borrowed for the call.
            unsafe { #name::__forward_into(__base, #(#idents,)* #trace) };
            ::core::result::Result::Ok(())
        }
    }
}

/// The types of the forward pass's ports: `&[T; N]` per input, then `&mut [T; N]` per
/// output.
fn port_types(graph: &Graph) -> Vec<TokenStream> {
    let ty = |id: TensorId, out: bool| {
        let elem = format_ident!("{}", graph.tensors[id].ty.dtype.name());
        let n = graph.device_numel(id);
        let m = out.then(|| quote!(mut));
        quote!(&#m [#elem; #n])
    };
    let ins = graph.inputs.iter().map(|&i| ty(i, false));
    ins.chain(graph.outputs.iter().map(|&o| ty(o, true)))
        .collect()
}
