//! A structure-aware fuzzer for the whole macro (`expand`: parse, check, plan, emit).
//!
//! Inputs are valid or almost valid models mutated at the token-tree level: delete,
//! duplicate or swap trees, replace identifiers with DSL vocabulary, numbers with
//! interesting values, insert punctuation. Every mutation keeps delimiters balanced, so
//! inputs get past the tokenizer and reach the parser and the checker. A panic anywhere
//! is a bug: the macro must answer every input with code or with compile errors.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;
use std::time::{Duration, Instant};

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

use tinyonnx_core::init::SplitMix64;

/// Words of the DSL itself (keywords, dtypes, common names and attributes); the
/// operator, layer and initializer names come from their registries (see [`vocabulary`]).
const DSL_WORDS: &[&str] = &[
    "model",
    "input",
    "weight",
    "let",
    "output",
    "opset",
    "winograd",
    "always",
    "dim",
    "block",
    "return",
    "if",
    "else",
    "for",
    "in",
    "with",
    "batch",
    "f32",
    "f64",
    "i64",
    "i32",
    "u8",
    "bool",
    "x",
    "y",
    "h",
    "w",
    "b",
    "axis",
    "perm",
    "alpha",
    "beta",
    "transA",
    "transB",
    "kernel_shape",
    "pads",
    "strides",
    "dilations",
    "group",
    "auto_pad",
    "ceil_mode",
    "hidden_size",
    "direction",
    "epsilon",
    "value_ints",
    "value_floats",
    "seed",
    "init",
    "name",
    "weights",
    "layout",
    "_",
];

/// Every word the mutator draws from: the DSL's own, and every operator, alias, layer and
/// initializer the compiler registers, so a new operator is fuzzed without listing it here.
fn vocabulary() -> Vec<&'static str> {
    let mut words: Vec<&'static str> = DSL_WORDS.to_vec();
    words.extend(tinyonnx_core::ops::REGISTRY.iter().map(|op| op.op_type));
    words.extend(
        tinyonnx_core::check::ALIASES
            .iter()
            .map(|(alias, _)| *alias),
    );
    words.extend(tinyonnx_core::layers::names());
    words.extend(tinyonnx_core::init::NAMES);
    words
}

/// Integers the mutator draws from.
const NUMBERS: &[i64] = &[
    0,
    1,
    2,
    3,
    4,
    7,
    16,
    64,
    255,
    1000,
    65536,
    -1,
    -2,
    i64::MAX,
    i64::MIN + 1,
];

/// What a fuzzing run did.
#[derive(Debug, Default)]
pub struct Report {
    pub inputs: u64,
    pub elapsed: Duration,
    /// Inputs that panicked, with the panic message.
    pub panics: Vec<(String, String)>,
}

/// The bodies of every `onnx_model! { ... }` in a Rust source file.
pub fn model_bodies(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("onnx_model! {") {
        let start = at + "onnx_model! {".len();
        let bytes = rest.as_bytes();
        let mut depth = 1;
        let mut end = start;
        while end < bytes.len() && depth > 0 {
            match bytes[end] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            end += 1;
        }
        if depth == 0 {
            out.push(rest[start..end - 1].to_string());
        }
        rest = &rest[end.min(rest.len())..];
    }
    out
}

/// Runs `expand` on one input, turning a panic into its message.
pub fn try_expand(tokens: TokenStream) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        tinyonnx_core::expand(tokens);
    }))
    .map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".to_string())
    })
}

/// Mutates seeds for `budget` (or until `max_inputs`), collecting panics.
pub fn run(seeds: &[String], budget: Duration, max_inputs: u64, seed: u64) -> Report {
    let parsed: Vec<TokenStream> = seeds
        .iter()
        .filter_map(|s| TokenStream::from_str(s).ok())
        .collect();
    let mut report = Report::default();
    if parsed.is_empty() {
        return report;
    }
    let words = vocabulary();
    let mut rng = SplitMix64::new(seed);
    let start = Instant::now();
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    while start.elapsed() < budget && report.inputs < max_inputs {
        let base = &parsed[(rng.next_u64() % parsed.len() as u64) as usize];
        let mut tokens: Vec<TokenTree> = base.clone().into_iter().collect();
        let rounds = 1 + rng.next_u64() % 4;
        for _ in 0..rounds {
            mutate(&mut tokens, &words, &mut rng, 0);
        }
        let input: TokenStream = tokens.into_iter().collect();
        let text = input.to_string();
        report.inputs += 1;
        if let Err(msg) = try_expand(input)
            && !report.panics.iter().any(|(_, m)| *m == msg)
        {
            report.panics.push((text, msg));
        }
    }
    std::panic::set_hook(quiet);
    report.elapsed = start.elapsed();
    report
}

fn pick<'a, T>(rng: &mut SplitMix64, items: &'a [T]) -> &'a T {
    &items[(rng.next_u64() % items.len() as u64) as usize]
}

/// One mutation somewhere in `tokens`, descending into groups at random.
fn mutate(tokens: &mut Vec<TokenTree>, words: &[&str], rng: &mut SplitMix64, depth: usize) {
    if tokens.is_empty() {
        tokens.push(TokenTree::Ident(Ident::new("x", Span::call_site())));
        return;
    }
    let i = (rng.next_u64() % tokens.len() as u64) as usize;
    if let TokenTree::Group(g) = &tokens[i]
        && depth < 6
        && !rng.next_u64().is_multiple_of(3)
    {
        let mut inner: Vec<TokenTree> = g.stream().into_iter().collect();
        mutate(&mut inner, words, rng, depth + 1);
        let mut ng = Group::new(g.delimiter(), inner.into_iter().collect());
        ng.set_span(g.span());
        tokens[i] = TokenTree::Group(ng);
        return;
    }
    match rng.next_u64() % 9 {
        0 => {
            tokens.remove(i);
        }
        1 => {
            let t = tokens[i].clone();
            tokens.insert(i, t);
        }
        2 => {
            let j = (rng.next_u64() % tokens.len() as u64) as usize;
            tokens.swap(i, j);
        }
        3 | 4 => {
            let word = pick(rng, words);
            // `_` is not an identifier for `Ident::new`; the lexer makes its token.
            tokens[i] = TokenStream::from_str(word)
                .ok()
                .and_then(|s| s.into_iter().next())
                .unwrap_or_else(|| TokenTree::Ident(Ident::new("x", Span::call_site())));
        }
        5 => {
            let n = *pick(rng, NUMBERS);
            tokens[i] = if n < 0 {
                TokenTree::Literal(Literal::i64_unsuffixed(n))
            } else {
                TokenTree::Literal(Literal::u64_unsuffixed(n as u64))
            };
        }
        6 => {
            let f = *pick(rng, &[0.0f64, 0.5, -1.5, 1e-9, 1e30]);
            tokens[i] = TokenTree::Literal(Literal::f64_unsuffixed(f));
        }
        7 => {
            let c = *pick(rng, &[',', ';', '=', '-', ':', '.']);
            tokens.insert(i, TokenTree::Punct(Punct::new(c, Spacing::Alone)));
        }
        _ => {
            let delim = *pick(rng, &[Delimiter::Bracket, Delimiter::Parenthesis]);
            let t = tokens.remove(i);
            tokens.insert(
                i,
                TokenTree::Group(Group::new(delim, std::iter::once(t).collect())),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_bodies_are_extracted() {
        let src =
            "onnx_model! { model A { input x: f32[1]; } }\nfn f() {}\nonnx_model! { model B { } }";
        let bodies = model_bodies(src);
        assert_eq!(bodies.len(), 2);
        assert!(bodies[0].contains("model A"));
    }
}
