//! The DSL syntax tree and its parser. Every node keeps the spans of its tokens.
//!
//! ```text
//! model  := doc* vis "model" IDENT "{" item* "}"
//! item   := doc* ( "opset" "=" INT ";"
//!                | "dim" IDENT "=" INT ";"
//!                | "model_version" "=" INT ";"
//!                | "domain" "=" STRING ";"
//!                | "winograd" "=" IDENT ";"
//!                | "optimize" "=" IDENT ";"
//!                | "quantize" "=" expr ";"
//!                | "meta" ( IDENT | STRING ) "=" STRING ";"
//!                | "input" IDENT ":" type ";"
//!                | "weight" IDENT ":" type "=" expr ";"
//!                | "let" pattern "=" expr ";"
//!                | "output" IDENT ( "=" expr )? ";"
//!                | ( "block" | "function" ) IDENT "(" ( param ( "," param )* ","? )? ")"
//!                  "{" item* "}"
//!                | "custom" IDENT "(" IDENT,* ")" "->" ( IDENT | "(" IDENT,* ")" )
//!                  "{" ( ( "domain" "=" STRING | "version" "=" INT | "kernel" "=" PATH
//!                        | IDENT "=" IDENT | IDENT ":" type ) ";" )* "}"
//!                | "let" pattern "=" flow ";"
//!                | "return" ( expr | "(" expr ( "," expr )* ","? ")" ) ";" )
//!                                              (in blocks and control-flow bodies only)
//! flow   := "if" expr body "else" body                                 (ONNX If)
//!         | "for" IDENT "in" INT ".." INT carry? body                  (ONNX Loop)
//!         | "for" ( IDENT | "(" IDENT,* ")" ) "in" ( seq | "(" seq,* ")" )
//!           carry? body                                               (ONNX Scan)
//! seq    := IDENT | "rev" "(" IDENT ")"            (scanned last row first)
//! carry  := "with" "(" IDENT "=" expr ( "," IDENT "=" expr )* ","? ")"
//! body   := "{" item* "}"
//! pattern:= IDENT | "(" ( ( IDENT | "_" ) ( "," ( IDENT | "_" ) )* )? ")"
//! param  := IDENT ( "=" expr )?
//! type   := IDENT "[" ( dim ( "," dim )* ","? )? "]"
//! dim    := INT | IDENT
//! expr   := "-"? INT | "-"? FLOAT | STRING | "true" | "false"
//!         | "[" ( expr ( "," expr )* ","? )? "]"
//!         | IDENT ( "(" ( arg ( "," arg )* ","? )? ")" )?
//! arg    := IDENT "=" expr | expr
//! ```

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream, Parser};
use syn::{Attribute, Ident, LitInt, LitStr, Token, Visibility, bracketed, parenthesized};

/// How deep groups of tokens (calls, lists, statement bodies) may nest: far beyond
/// what a model needs, and within the stack that parsing and every later stage take on
/// rustc's thread (3,000 levels once crashed rustc).
pub const MAX_NESTING: usize = 128;

/// Refuses tokens whose groups nest deeper than [`MAX_NESTING`], at the first group too
/// deep, before any parser sees them: syn's token buffer is built recursively, so the
/// check has to come first, and walks the groups with an explicit stack.
pub fn check_nesting(tokens: &TokenStream) -> syn::Result<()> {
    let mut stack = vec![tokens.clone().into_iter()];
    while let Some(top) = stack.last_mut() {
        match top.next() {
            Some(TokenTree::Group(g)) => {
                if stack.len() > MAX_NESTING {
                    return Err(syn::Error::new(
                        g.span_open(),
                        format!(
                            "expressions and bodies nest more than {MAX_NESTING} levels deep \
                             here; name an intermediate with `let` to flatten the nesting"
                        ),
                    ));
                }
                stack.push(g.stream().into_iter());
            }
            Some(_) => {}
            None => {
                stack.pop();
            }
        }
    }
    Ok(())
}

/// A whole `onnx_model!` invocation.
#[derive(Debug)]
pub struct ModelDef {
    pub doc: String,
    pub vis: Visibility,
    pub name: Ident,
    pub items: Vec<Item>,
    /// The span of the closing brace, where errors about missing items point.
    pub close: Span,
}

/// One statement of the model body.
#[derive(Debug)]
pub enum Item {
    Opset {
        kw: Ident,
        value: LitInt,
    },
    Dim {
        name: Ident,
        value: LitInt,
    },
    /// `model_version = N;`: `ModelProto.model_version`.
    ModelVersion {
        kw: Ident,
        value: LitInt,
    },
    /// `winograd = auto | always | never;`: when 3x3 convolutions run as Winograd.
    Winograd {
        kw: Ident,
        value: Ident,
    },
    /// `optimize = speed | size;`: what the microcontroller code favours.
    Optimize {
        kw: Ident,
        value: Ident,
    },
    /// `quantize = int8(calibration = "...", ...);`: the model quantized at compile time.
    Quantize {
        kw: Ident,
        value: Expr,
    },
    /// `domain = "...";`: `ModelProto.domain`.
    Domain {
        kw: Ident,
        value: LitStr,
    },
    /// `meta key = "value";`: one `metadata_props` entry.
    Meta {
        key: String,
        key_span: Span,
        value: LitStr,
    },
    Input {
        doc: String,
        name: Ident,
        ty: TypeExpr,
    },
    Weight {
        doc: String,
        name: Ident,
        ty: TypeExpr,
        init: Expr,
    },
    Let {
        /// Doc comments: the `doc_string` of the nodes the statement creates.
        doc: String,
        pattern: Pattern,
        expr: Expr,
    },
    Output {
        doc: String,
        name: Ident,
        expr: Option<Expr>,
    },
    Block(Block),
    Custom(CustomDef),
    Return {
        kw: Span,
        /// One expression, or the elements of `return (a, b);`.
        exprs: Vec<Expr>,
        /// The parentheses of a tuple return.
        tuple: Option<Span>,
    },
    /// `let pattern = if ... / for ...;`: a control-flow node.
    Flow {
        doc: String,
        pattern: Pattern,
        flow: Flow,
    },
}

/// `if`, or `for` over a range (ONNX `Loop`) or over tensors (ONNX `Scan`).
#[derive(Debug)]
pub struct Flow {
    /// The `if` or `for` keyword.
    pub kw: Span,
    pub kind: FlowKind,
    /// Loop-carried values: `with (h = h0, ...)`.
    pub carried: Vec<(Ident, Expr)>,
    /// `if`: then and else; `for`: the body.
    pub bodies: Vec<FlowBody>,
}

/// What a [`Flow`] is.
#[derive(Debug)]
pub enum FlowKind {
    If {
        cond: Expr,
    },
    /// `for i in 0..n`.
    Loop {
        iter: Ident,
        start: LitInt,
        end: LitInt,
    },
    /// `for (a_t, b_t) in (a, rev(b))`: one slice name per scanned tensor, each
    /// tensor with whether it is scanned in reverse.
    Scan {
        slices: Vec<Ident>,
        seqs: Vec<(Ident, bool)>,
    },
}

/// The braces of a control-flow body and its items.
#[derive(Debug)]
pub struct FlowBody {
    pub items: Vec<Item>,
    pub close: Span,
}

/// The left side of a `let`.
#[derive(Debug, Clone)]
pub enum Pattern {
    One(Ident),
    /// `(a, _, c)`: one name per output, `None` for `_`.
    Tuple(Vec<Option<Ident>>, Span),
}

/// `block name(x, ch, stride = 1) { ... return expr; }`: a reusable group of items,
/// instantiated by calling it like an operator.
#[derive(Debug)]
pub struct Block {
    /// Declared with `function`: emitted as an ONNX `FunctionProto` (one definition per
    /// distinct body, a call node per use) instead of inlined; the forward pass inlines
    /// it either way.
    pub function: bool,
    /// Doc comments (the function's `doc_string`).
    pub doc: String,
    pub name: Ident,
    pub params: Vec<(Ident, Option<Expr>)>,
    pub items: Vec<Item>,
    pub close: Span,
}

/// `custom Name(a, b) -> (y, z) { domain = "..."; version = 1; kernel = path::Type;
/// y = a; z: f32[4]; }`: an operator of a custom domain whose forward pass is the user's
/// `tinyonnx::CustomKernel`.
#[derive(Debug)]
pub struct CustomDef {
    pub doc: String,
    pub name: Ident,
    pub inputs: Vec<Ident>,
    pub outputs: Vec<Ident>,
    pub domain: Option<LitStr>,
    pub version: Option<LitInt>,
    pub kernel: Option<syn::Path>,
    /// Per output: the input whose type it has, or its type.
    pub rules: Vec<(Ident, OutputRule)>,
    pub close: Span,
}

/// The type rule of one custom output.
#[derive(Debug)]
pub enum OutputRule {
    SameAs(Ident),
    Type(TypeExpr),
}

/// `f32[batch, 784]`.
#[derive(Debug)]
pub struct TypeExpr {
    pub dtype: Ident,
    pub dims: Vec<DimExpr>,
    pub bracket: Span,
}

/// One dimension of a declared type.
#[derive(Debug)]
pub enum DimExpr {
    Fixed(LitInt),
    Sym(Ident),
}

/// An expression: an operator or initializer call, a name, or a literal.
#[derive(Debug, Clone)]
pub enum Expr {
    Name(Ident),
    Call(Call),
    Int(i64, Span),
    Float(f64, Span),
    Str(LitStr),
    Bool(bool, Span),
    List(Vec<Expr>, Span),
    /// `_`: an omitted optional input.
    Omit(Span),
}

/// `func(arg, name = value, ...)`.
#[derive(Debug, Clone)]
pub struct Call {
    pub func: Ident,
    pub args: Vec<Arg>,
    pub close: Span,
}

/// A call argument, positional or named.
#[derive(Debug, Clone)]
pub enum Arg {
    Pos(Expr),
    Named(Ident, Expr),
}

impl Expr {
    /// The span errors about this expression point at.
    pub fn span(&self) -> Span {
        match self {
            Expr::Name(i) => i.span(),
            Expr::Call(c) => c.func.span(),
            Expr::Int(_, s)
            | Expr::Float(_, s)
            | Expr::Bool(_, s)
            | Expr::List(_, s)
            | Expr::Omit(s) => *s,
            Expr::Str(s) => s.span(),
        }
    }

    /// The span of the expression's last token (a call's closing parenthesis).
    pub fn end_span(&self) -> Span {
        match self {
            Expr::Call(c) => c.close,
            other => other.span(),
        }
    }

    /// A short description used in "expected ..., found ..." messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Expr::Name(_) => "a name",
            Expr::Call(_) => "a call",
            Expr::Int(..) => "an integer",
            Expr::Float(..) => "a float",
            Expr::Str(_) => "a string",
            Expr::Bool(..) => "a boolean",
            Expr::List(..) => "a list",
            Expr::Omit(_) => "`_`",
        }
    }
}

impl Call {
    /// Positional arguments in order.
    pub fn positional(&self) -> impl Iterator<Item = &Expr> {
        self.args.iter().filter_map(|a| match a {
            Arg::Pos(e) => Some(e),
            Arg::Named(..) => None,
        })
    }

    /// Named arguments in order.
    pub fn named(&self) -> impl Iterator<Item = (&Ident, &Expr)> {
        self.args.iter().filter_map(|a| match a {
            Arg::Named(n, e) => Some((n, e)),
            Arg::Pos(_) => None,
        })
    }
}

/// Parses a model; syntax errors of independent items are all collected.
pub fn parse_model(tokens: TokenStream) -> Result<ModelDef, Vec<syn::Error>> {
    let mut errors = Vec::new();
    let parser = |input: ParseStream| -> syn::Result<ModelDef> {
        let attrs = input.call(Attribute::parse_outer)?;
        let doc = doc_string(&attrs);
        let vis: Visibility = input.parse()?;
        let kw: Ident = input.parse().map_err(|e| {
            syn::Error::new(e.span(), "expected `model`, as in `pub model Name { ... }`")
        })?;
        if kw != "model" {
            return Err(syn::Error::new(
                kw.span(),
                format!("expected `model`, found `{kw}`: write `pub model Name {{ ... }}`"),
            ));
        }
        let name: Ident = input.parse()?;
        let body;
        let brace = syn::braced!(body in input);
        let mut items = Vec::new();
        while !body.is_empty() {
            match body.call(parse_item) {
                Ok(item) => items.push(item),
                Err(e) => {
                    errors.push(e);
                    skip_past_semicolon(&body);
                }
            }
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the model body"));
        }
        Ok(ModelDef {
            doc,
            vis,
            name,
            items,
            close: brace.span.close(),
        })
    };
    match parser.parse2(tokens) {
        Ok(model) if errors.is_empty() => Ok(model),
        Ok(_) => Err(errors),
        Err(e) => {
            errors.insert(0, e);
            Err(errors)
        }
    }
}

/// Skips tokens up to and including the next `;` so parsing can resume at the next item.
fn skip_past_semicolon(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            rest = next;
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == ';'
            {
                break;
            }
        }
        Ok(((), rest))
    });
}

/// Joins `///` lines into one doc string, trimming the single leading space rustdoc adds.
fn doc_string(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            let v = s.value();
            lines.push(v.strip_prefix(' ').unwrap_or(&v).to_string());
        }
    }
    lines.join("\n")
}

fn parse_item(input: ParseStream) -> syn::Result<Item> {
    let attrs = input.call(Attribute::parse_outer)?;
    let doc = doc_string(&attrs);
    if input.peek(Token![let]) {
        input.parse::<Token![let]>()?;
        let pattern = if input.peek(syn::token::Paren) {
            let content;
            let paren = parenthesized!(content in input);
            let mut names = Vec::new();
            while !content.is_empty() {
                if content.peek(Token![_]) {
                    content.parse::<Token![_]>()?;
                    names.push(None);
                } else {
                    names.push(Some(content.parse::<Ident>()?));
                }
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            Pattern::Tuple(names, paren.span.join())
        } else {
            Pattern::One(input.parse()?)
        };
        input.parse::<Token![=]>()?;
        if input.peek(Token![if]) || input.peek(Token![for]) {
            let flow = parse_flow(input)?;
            let end = flow.bodies.last().map_or(flow.kw, |b| b.close);
            expect_semi_after(input, end)?;
            return Ok(Item::Flow { doc, pattern, flow });
        }
        let expr: Expr = input.parse()?;
        expect_semi_after(input, expr.end_span())?;
        return Ok(Item::Let { doc, pattern, expr });
    }
    if input.peek(Token![return]) {
        let kw: Token![return] = input.parse()?;
        if input.peek(syn::token::Paren) {
            let content;
            let paren = parenthesized!(content in input);
            let exprs: Vec<Expr> = content
                .parse_terminated(Expr::parse, Token![,])?
                .into_iter()
                .collect();
            expect_semi_after(input, paren.span.close())?;
            return Ok(Item::Return {
                kw: kw.span,
                exprs,
                tuple: Some(paren.span.join()),
            });
        }
        let expr: Expr = input.parse()?;
        expect_semi_after(input, expr.end_span())?;
        return Ok(Item::Return {
            kw: kw.span,
            exprs: vec![expr],
            tuple: None,
        });
    }
    let kw: Ident = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected an item: `input`, `weight`, `let`, `output`, `block`, `function`, `custom`, `opset`, `dim`, `model_version`, `domain`, `winograd`, `optimize`, `quantize` or `meta`",
        )
    })?;
    let item = match kw.to_string().as_str() {
        "opset" => {
            input.parse::<Token![=]>()?;
            Item::Opset {
                kw,
                value: input.parse()?,
            }
        }
        "dim" => {
            let name = input.parse()?;
            input.parse::<Token![=]>()?;
            Item::Dim {
                name,
                value: input.parse()?,
            }
        }
        "model_version" => {
            input.parse::<Token![=]>()?;
            Item::ModelVersion {
                kw,
                value: input.parse()?,
            }
        }
        "winograd" => {
            input.parse::<Token![=]>()?;
            Item::Winograd {
                kw,
                value: input.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "expected `auto`, `always` or `never`, as in `winograd = always;`",
                    )
                })?,
            }
        }
        "optimize" => {
            input.parse::<Token![=]>()?;
            Item::Optimize {
                kw,
                value: input.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "expected `speed` or `size`, as in `optimize = size;`",
                    )
                })?,
            }
        }
        "quantize" => {
            input.parse::<Token![=]>()?;
            Item::Quantize {
                kw,
                value: input.parse()?,
            }
        }
        "domain" => {
            input.parse::<Token![=]>()?;
            Item::Domain {
                kw,
                value: input.parse()?,
            }
        }
        "meta" => {
            let (key, key_span) = if input.peek(LitStr) {
                let s: LitStr = input.parse()?;
                (s.value(), s.span())
            } else {
                let id: Ident = input.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "expected a metadata key, as in `meta author = \"...\";` or `meta \"my.key\" = \"...\";`",
                    )
                })?;
                (id.to_string(), id.span())
            };
            input.parse::<Token![=]>()?;
            Item::Meta {
                key,
                key_span,
                value: input.parse()?,
            }
        }
        "input" => {
            let name = input.parse()?;
            input.parse::<Token![:]>()?;
            Item::Input {
                doc,
                name,
                ty: input.parse()?,
            }
        }
        "weight" => {
            let name = input.parse()?;
            input.parse::<Token![:]>()?;
            let ty = input.parse()?;
            if !input.peek(Token![=]) {
                return Err(input.error(
                    "expected `=` and an initializer, as in `weight w: f32[4, 2] = zeros;`",
                ));
            }
            input.parse::<Token![=]>()?;
            Item::Weight {
                doc,
                name,
                ty,
                init: input.parse()?,
            }
        }
        "custom" => {
            let name: Ident = input.parse()?;
            let content;
            parenthesized!(content in input);
            let mut inputs = Vec::new();
            while !content.is_empty() {
                inputs.push(content.parse::<Ident>()?);
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            input.parse::<Token![->]>()?;
            let mut outputs = Vec::new();
            if input.peek(syn::token::Paren) {
                let content;
                parenthesized!(content in input);
                while !content.is_empty() {
                    outputs.push(content.parse::<Ident>()?);
                    if content.is_empty() {
                        break;
                    }
                    content.parse::<Token![,]>()?;
                }
            } else {
                outputs.push(input.parse::<Ident>()?);
            }
            let body;
            let brace = syn::braced!(body in input);
            let mut def = CustomDef {
                doc,
                name,
                inputs,
                outputs,
                domain: None,
                version: None,
                kernel: None,
                rules: Vec::new(),
                close: brace.span.close(),
            };
            while !body.is_empty() {
                let key: Ident = body.parse()?;
                if body.peek(Token![:]) {
                    body.parse::<Token![:]>()?;
                    let ty: TypeExpr = body.parse()?;
                    def.rules.push((key, OutputRule::Type(ty)));
                } else {
                    body.parse::<Token![=]>()?;
                    match key.to_string().as_str() {
                        "domain" => def.domain = Some(body.parse()?),
                        "version" => def.version = Some(body.parse()?),
                        "kernel" => def.kernel = Some(body.parse()?),
                        _ => {
                            let from: Ident = body.parse()?;
                            def.rules.push((key, OutputRule::SameAs(from)));
                        }
                    }
                }
                body.parse::<Token![;]>()?;
            }
            return Ok(Item::Custom(def));
        }
        "block" | "function" => {
            let function = kw == "function";
            let name: Ident = input.parse()?;
            let content;
            parenthesized!(content in input);
            let mut params = Vec::new();
            while !content.is_empty() {
                let p: Ident = content.parse()?;
                let default = if content.peek(Token![=]) {
                    content.parse::<Token![=]>()?;
                    Some(content.parse()?)
                } else {
                    None
                };
                params.push((p, default));
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            let body;
            let brace = syn::braced!(body in input);
            let mut items = Vec::new();
            while !body.is_empty() {
                items.push(body.call(parse_item)?);
            }
            return Ok(Item::Block(Block {
                function,
                doc,
                name,
                params,
                items,
                close: brace.span.close(),
            }));
        }
        "output" => {
            let name = input.parse()?;
            let expr = if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                Some(input.parse()?)
            } else {
                None
            };
            Item::Output { doc, name, expr }
        }
        other => {
            return Err(syn::Error::new(
                kw.span(),
                format!(
                    "unknown item `{other}`: expected `input`, `weight`, `let`, `output`, `block`, `function`, `custom`, `opset`, `dim`, `model_version`, `domain`, `winograd`, `optimize`, `quantize` or `meta`"
                ),
            ));
        }
    };
    let end = match &item {
        Item::Opset { value, .. } | Item::Dim { value, .. } | Item::ModelVersion { value, .. } => {
            value.span()
        }
        Item::Domain { value, .. } | Item::Meta { value, .. } => value.span(),
        Item::Winograd { value, .. } | Item::Optimize { value, .. } => value.span(),
        Item::Quantize { value, .. } => value.end_span(),
        Item::Input { ty, .. } => ty.bracket,
        Item::Weight { init, .. } => init.end_span(),
        Item::Output { name, expr, .. } => expr.as_ref().map_or(name.span(), Expr::end_span),
        Item::Let { expr, .. } => expr.end_span(),
        Item::Return { kw, .. } => *kw,
        Item::Flow { flow, .. } => flow.kw,
        Item::Block(b) => b.close,
        Item::Custom(c) => c.close,
    };
    expect_semi_after(input, end)?;
    Ok(item)
}

/// `if cond { ... } else { ... }`, `for i in 0..n with (...) { ... }` or
/// `for x_t in xs with (...) { ... }` (after `let pattern =`).
fn parse_flow(input: ParseStream) -> syn::Result<Flow> {
    let body = |input: ParseStream| -> syn::Result<FlowBody> {
        let content;
        let brace = syn::braced!(content in input);
        let mut items = Vec::new();
        while !content.is_empty() {
            items.push(content.call(parse_item)?);
        }
        Ok(FlowBody {
            items,
            close: brace.span.close(),
        })
    };
    let idents = |input: ParseStream| -> syn::Result<Vec<Ident>> {
        if input.peek(syn::token::Paren) {
            let content;
            parenthesized!(content in input);
            Ok(content
                .parse_terminated(Ident::parse, Token![,])?
                .into_iter()
                .collect())
        } else {
            Ok(vec![input.parse()?])
        }
    };
    if input.peek(Token![if]) {
        let kw: Token![if] = input.parse()?;
        let cond: Expr = input.parse()?;
        let then = body(input)?;
        input.parse::<Token![else]>().map_err(|_| {
            syn::Error::new(
                then.close,
                "an `if` needs an `else` branch after this: both branches define the outputs",
            )
        })?;
        let otherwise = body(input)?;
        return Ok(Flow {
            kw: kw.span,
            kind: FlowKind::If { cond },
            carried: Vec::new(),
            bodies: vec![then, otherwise],
        });
    }
    let kw: Token![for] = input.parse()?;
    let vars = idents(input)?;
    input.parse::<Token![in]>()?;
    let kind = if input.peek(LitInt) {
        let start: LitInt = input.parse()?;
        input.parse::<Token![..]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a range such as `0..8` (a static trip count)",
            )
        })?;
        let end: LitInt = input.parse()?;
        let [iter] = <[Ident; 1]>::try_from(vars).map_err(|v| {
            syn::Error::new(
                v.first().map_or(kw.span, Ident::span),
                "a counted `for` names one iteration number, as in `for i in 0..8`",
            )
        })?;
        FlowKind::Loop { iter, start, end }
    } else {
        let seq = |input: ParseStream| -> syn::Result<(Ident, bool)> {
            let name: Ident = input.parse()?;
            if name == "rev" && input.peek(syn::token::Paren) {
                let content;
                parenthesized!(content in input);
                return Ok((content.parse()?, true));
            }
            Ok((name, false))
        };
        let seqs = if input.peek(syn::token::Paren) {
            let content;
            parenthesized!(content in input);
            content
                .parse_terminated(seq, Token![,])?
                .into_iter()
                .collect()
        } else {
            vec![seq(input)?]
        };
        FlowKind::Scan { slices: vars, seqs }
    };
    let mut carried = Vec::new();
    if input.peek(Ident) && input.fork().parse::<Ident>()? == "with" {
        input.parse::<Ident>()?;
        let content;
        parenthesized!(content in input);
        while !content.is_empty() {
            let name: Ident = content.parse()?;
            content.parse::<Token![=]>()?;
            carried.push((name, content.parse()?));
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
    }
    Ok(Flow {
        kw: kw.span,
        kind,
        carried,
        bodies: vec![body(input)?],
    })
}

/// A `;` must follow; a missing one is reported at the end of the item it belongs to.
fn expect_semi_after(input: ParseStream, end: Span) -> syn::Result<()> {
    if input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
        Ok(())
    } else {
        Err(syn::Error::new(end, "expected `;` after this"))
    }
}

impl Parse for TypeExpr {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let dtype: Ident = input.parse().map_err(|e| {
            syn::Error::new(e.span(), "expected a tensor type such as `f32[batch, 784]`")
        })?;
        if !input.peek(syn::token::Bracket) {
            return Err(input.error(format!(
                "expected `[` and the dimensions after `{dtype}`, as in `{dtype}[batch, 784]` (`{dtype}[]` for a scalar)"
            )));
        }
        let content;
        let bracket = bracketed!(content in input);
        let mut dims = Vec::new();
        while !content.is_empty() {
            if content.peek(LitInt) {
                dims.push(DimExpr::Fixed(content.parse()?));
            } else if content.peek(Ident) {
                dims.push(DimExpr::Sym(content.parse()?));
            } else {
                return Err(content
                    .error("expected a dimension: a positive integer or a name such as `batch`"));
            }
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        Ok(TypeExpr {
            dtype,
            dims,
            bracket: bracket.span.join(),
        })
    }
}

impl Parse for Expr {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(Token![-]) {
            let minus: Token![-] = input.parse()?;
            return match input.parse::<syn::Lit>()? {
                syn::Lit::Int(i) => Ok(Expr::Int(-i.base10_parse::<i64>()?, minus.span)),
                syn::Lit::Float(f) => Ok(Expr::Float(-f.base10_parse::<f64>()?, minus.span)),
                other => Err(syn::Error::new(other.span(), "expected a number after `-`")),
            };
        }
        if input.peek(Token![_]) {
            let underscore: Token![_] = input.parse()?;
            return Ok(Expr::Omit(underscore.span));
        }
        if input.peek(syn::token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let items = content.parse_terminated(Expr::parse, Token![,])?;
            return Ok(Expr::List(items.into_iter().collect(), bracket.span.join()));
        }
        if input.peek(syn::Lit) {
            return match input.parse::<syn::Lit>()? {
                syn::Lit::Int(i) => Ok(Expr::Int(i.base10_parse()?, i.span())),
                syn::Lit::Float(f) => Ok(Expr::Float(f.base10_parse()?, f.span())),
                syn::Lit::Str(s) => Ok(Expr::Str(s)),
                syn::Lit::Bool(b) => Ok(Expr::Bool(b.value, b.span)),
                other => Err(syn::Error::new(
                    other.span(),
                    "expected a number, a string, a boolean, a list, a name or a call",
                )),
            };
        }
        let func: Ident = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected an expression: a name, a call such as `Relu(x)`, or a literal",
            )
        })?;
        if !input.peek(syn::token::Paren) {
            return Ok(Expr::Name(func));
        }
        let content;
        let paren = parenthesized!(content in input);
        let mut args = Vec::new();
        while !content.is_empty() {
            if content.peek(Ident) && content.peek2(Token![=]) && !content.peek2(Token![==]) {
                let name: Ident = content.parse()?;
                content.parse::<Token![=]>()?;
                args.push(Arg::Named(name, content.parse()?));
            } else {
                args.push(Arg::Pos(content.parse()?));
            }
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        Ok(Expr::Call(Call {
            func,
            args,
            close: paren.span.close(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn parses_a_model_with_every_item() {
        let m = parse_model(quote! {
            /// Doc line.
            pub model M {
                opset = 17;
                dim batch = 2;
                input x: f32[batch, 4];
                weight w: f32[4, 2] = he(seed = 1);
                let h = Relu(Gemm(x, w, transB = 0));
                output y = Softmax(h, axis = -1);
            }
        })
        .unwrap();
        assert_eq!(m.name, "M");
        assert_eq!(m.doc, "Doc line.");
        assert_eq!(m.items.len(), 6);
    }

    #[test]
    fn collects_errors_of_several_items() {
        let errs = parse_model(quote! {
            model M {
                input x f32[4];
                bogus y;
                output z = Relu(x);
            }
        })
        .unwrap_err();
        assert_eq!(errs.len(), 2);
    }
}

/// `#[doc] vis model Name = func`: how a composition and an import begin.
struct Head {
    doc: String,
    vis: Visibility,
    name: Ident,
    func: Ident,
}

fn head(input: ParseStream) -> syn::Result<Head> {
    let attrs = input.call(Attribute::parse_outer)?;
    let doc = doc_string(&attrs);
    let vis: Visibility = input.parse()?;
    let _model: Ident = input.parse()?;
    let name: Ident = input.parse()?;
    input.parse::<Token![=]>()?;
    let func: Ident = input.parse()?;
    Ok(Head {
        doc,
        vis,
        name,
        func,
    })
}

/// Whether the tokens begin `model Name = func` (any `func` when `None`).
fn defines(tokens: &TokenStream, func: Option<&str>) -> bool {
    let probe = |input: ParseStream| -> syn::Result<bool> {
        let fork = input.fork();
        fork.call(Attribute::parse_outer)?;
        fork.parse::<Visibility>()?;
        let kw: Ident = fork.parse()?;
        let _: Ident = fork.parse()?;
        let yes = kw == "model"
            && fork.peek(Token![=])
            && match func {
                None => true,
                Some(f) => {
                    fork.parse::<Token![=]>()?;
                    fork.parse::<Ident>()? == f
                }
            };
        input.parse::<TokenStream>()?;
        Ok(yes)
    };
    probe.parse2(tokens.clone()).unwrap_or(false)
}

/// `pub model C = compose(A, B, map = [("a_out", "b_in"), ...], prefix1 = "a/",
/// prefix2 = "b/");`, followed (after the expansion has fetched them from the models'
/// source macros) by `source A { ... } source B { ... }`.
#[derive(Debug)]
pub struct ComposeDef {
    pub doc: String,
    pub vis: Visibility,
    pub name: Ident,
    pub first: Ident,
    pub second: Ident,
    /// `(output of first, input of second)` pairs.
    pub map: Vec<(LitStr, LitStr)>,
    pub prefix1: Option<LitStr>,
    pub prefix2: Option<LitStr>,
    /// The call's span, for errors about the composition as a whole.
    pub call: Span,
    /// The models' own invocations, as their source macros handed them over.
    pub sources: Vec<(Ident, TokenStream)>,
}

/// Parses a composition, or `None` when the tokens are an ordinary model.
pub fn parse_compose(tokens: TokenStream) -> Option<syn::Result<ComposeDef>> {
    if !defines(&tokens, None) {
        return None;
    }
    let parser = |input: ParseStream| -> syn::Result<ComposeDef> {
        let Head {
            doc,
            vis,
            name,
            func,
        } = input.call(head)?;
        if func != "compose" {
            return Err(syn::Error::new(
                func.span(),
                "expected `compose(A, B, map = [(\"a_output\", \"b_input\")])` or `import(\"file.onnx\")`",
            ));
        }
        let args;
        let paren = parenthesized!(args in input);
        let first: Ident = args.parse()?;
        args.parse::<Token![,]>()?;
        let second: Ident = args.parse()?;
        let mut def = ComposeDef {
            doc,
            vis,
            name,
            first,
            second,
            map: Vec::new(),
            prefix1: None,
            prefix2: None,
            call: paren.span.join(),
            sources: Vec::new(),
        };
        while args.peek(Token![,]) {
            args.parse::<Token![,]>()?;
            if args.is_empty() {
                break;
            }
            let key: Ident = args.parse()?;
            args.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "map" => {
                    let list;
                    bracketed!(list in args);
                    while !list.is_empty() {
                        let pair;
                        parenthesized!(pair in list);
                        let out: LitStr = pair.parse()?;
                        pair.parse::<Token![,]>()?;
                        let inp: LitStr = pair.parse()?;
                        def.map.push((out, inp));
                        if list.is_empty() {
                            break;
                        }
                        list.parse::<Token![,]>()?;
                    }
                }
                "prefix1" => def.prefix1 = Some(args.parse()?),
                "prefix2" => def.prefix2 = Some(args.parse()?),
                other => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "compose has no argument `{other}`: expected map, prefix1 or prefix2"
                        ),
                    ));
                }
            }
        }
        if !args.is_empty() {
            return Err(args.error("unexpected tokens in compose(...)"));
        }
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        }
        while !input.is_empty() {
            let kw: Ident = input.parse()?;
            if kw != "source" {
                return Err(syn::Error::new(
                    kw.span(),
                    "unexpected tokens after compose(...)",
                ));
            }
            let model: Ident = input.parse()?;
            let body;
            syn::braced!(body in input);
            def.sources.push((model, body.parse()?));
        }
        Ok(def)
    };
    Some(parser.parse2(tokens))
}

/// `pub model Name = import("path.onnx", dims(batch = 1), shapes(x = [1, 3, 48, 192]),
/// rename(input_1 = "input.1"));`: a model read from an ONNX file at compile time.
#[derive(Debug)]
pub struct ImportDef {
    pub doc: String,
    pub vis: Visibility,
    pub name: Ident,
    /// The file, relative to the crate's Cargo.toml; errors about the file point here.
    pub path: LitStr,
    /// Values of the file's named (symbolic) dimensions.
    pub dims: Vec<(String, Span, LitInt)>,
    /// Whole shapes of graph inputs (by their name in the file), for dims without names.
    pub shapes: Vec<(String, Span, Vec<LitInt>)>,
    /// Names used for the file's inputs and outputs in the generated model and its ONNX:
    /// `(new name, name in the file)`.
    pub renames: Vec<(Ident, LitStr)>,
    /// `optimize(size)`: as a model's `optimize = size;`.
    pub optimize_size: bool,
}

/// Parses an import, or `None` when the tokens are not `model Name = import(...)`.
pub fn parse_import(tokens: TokenStream) -> Option<syn::Result<ImportDef>> {
    if !defines(&tokens, Some("import")) {
        return None;
    }
    // A key is a Rust identifier or, for names no identifier can spell, a string.
    fn key(input: ParseStream) -> syn::Result<(String, Span)> {
        if input.peek(LitStr) {
            let s: LitStr = input.parse()?;
            Ok((s.value(), s.span()))
        } else {
            let i: Ident = input.parse()?;
            Ok((i.to_string(), i.span()))
        }
    }
    fn comma_list<T>(
        input: ParseStream,
        mut one: impl FnMut(ParseStream) -> syn::Result<T>,
    ) -> syn::Result<Vec<T>> {
        let mut out = Vec::new();
        while !input.is_empty() {
            out.push(one(input)?);
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(out)
    }
    let parser = |input: ParseStream| -> syn::Result<ImportDef> {
        let Head { doc, vis, name, .. } = input.call(head)?;
        let args;
        parenthesized!(args in input);
        let path: LitStr = args.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the file's path first, as in `import(\"models/net.onnx\", dims(batch = 1))`",
            )
        })?;
        let mut def = ImportDef {
            doc,
            vis,
            name,
            path,
            dims: Vec::new(),
            shapes: Vec::new(),
            renames: Vec::new(),
            optimize_size: false,
        };
        while args.peek(Token![,]) {
            args.parse::<Token![,]>()?;
            if args.is_empty() {
                break;
            }
            let section: Ident = args.parse()?;
            let body;
            parenthesized!(body in args);
            match section.to_string().as_str() {
                "dims" => {
                    def.dims = comma_list(&body, |b| {
                        let (k, span) = key(b)?;
                        b.parse::<Token![=]>()?;
                        Ok((k, span, b.parse()?))
                    })?
                }
                "shapes" => {
                    def.shapes = comma_list(&body, |b| {
                        let (k, span) = key(b)?;
                        b.parse::<Token![=]>()?;
                        let list;
                        bracketed!(list in b);
                        Ok((k, span, comma_list(&list, |l| l.parse())?))
                    })?
                }
                "rename" => {
                    def.renames = comma_list(&body, |b| {
                        let new: Ident = b.parse()?;
                        b.parse::<Token![=]>()?;
                        Ok((new, b.parse()?))
                    })?
                }
                "optimize" => {
                    let value: Ident = body.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "expected `speed` or `size`, as in `optimize(size)`",
                        )
                    })?;
                    def.optimize_size = match value.to_string().as_str() {
                        "speed" => false,
                        "size" => true,
                        other => {
                            return Err(syn::Error::new(
                                value.span(),
                                format!(
                                    "unknown optimize setting `{other}`: expected `speed` (the default) or `size`"
                                ),
                            ));
                        }
                    };
                    if !body.is_empty() {
                        return Err(body.error("expected one setting, as in `optimize(size)`"));
                    }
                }
                other => {
                    return Err(syn::Error::new(
                        section.span(),
                        format!(
                            "import has no argument `{other}`: expected dims, shapes, rename or optimize"
                        ),
                    ));
                }
            }
        }
        if !args.is_empty() {
            return Err(args.error("unexpected tokens in import(...)"));
        }
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after import(...)"));
        }
        Ok(def)
    };
    Some(parser.parse2(tokens))
}
