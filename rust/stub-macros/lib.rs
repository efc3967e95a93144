//! The procedural macros of tcpmap's API stubs (crate `tcpmap_stub_macros`).
//!
//! The stubs restate the signatures of FuriosaAI's libraries so that rustc
//! can type-check emitted kernels without them (see ../README.md). These
//! macros take the grammars the vendor's macros take and expand to what the
//! stubs need; they restate no vendor code:
//!
//!   - `m![...]` (`m_visa`, `m_opt`): a mapping expression as a type. The
//!     grammar is furiosa-mapping's (furiosa-mapping/src/parser/parser.lalrpop
//!     of the furiosa-visa-std 0.1.0 era: `,` pairs, postfix `/ % = #` with a
//!     number, a symbol, `1`, `{ Type }`, `(...)` and `[...]`; a number other
//!     than 1 is refused, "Broadcast not supported"). The 0.6.0 era grammar
//!     (furiosa-mapping-macro/src/parser/parser.lalrpop) adds `#{*}`, `#{!}`,
//!     `#{0}` padding kinds, broadcasts `N` and a trailing comma.
//!   - `axes![A = 8, B = 16]` (`axes_visa`, `axes_opt`): one unit struct per
//!     axis implementing `AxisName` (furiosa-mapping-macro/src/lib.rs `axes`).
//!   - `#[device(chip = N)]` (`device_visa`, `device_opt`): the hidden
//!     function, the marker struct and const, and the `DeviceFn` impl over the
//!     tuple of the parameter types, tagged with the tool attribute of each
//!     version (`#[tcp::device]`, `#[furiosa_opt::device]`), as
//!     furiosa-opt-macro/src/lib.rs `device` generates them.
//!   - `#[tokio::main]`, `#[tokio::test]`: an async function run by a
//!     blocking call, as tokio's macros do.
//!
//! Errors are `compile_error!`s at the offending token.

extern crate proc_macro;

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Which library's grammar and paths a macro follows.
#[derive(Clone, Copy, PartialEq)]
enum Api {
    /// furiosa-visa-std 0.1.0, the manual's library.
    Visa01,
    /// furiosa-opt-std 0.6.0.
    Opt06,
}

impl Api {
    fn krate(self) -> &'static str {
        match self {
            Api::Visa01 => "furiosa_visa_std",
            Api::Opt06 => "furiosa_opt_std",
        }
    }
}

type Error = (Span, String);

fn parse(s: &str) -> TokenStream {
    s.parse().expect("stub macro: generated tokens parse")
}

/// `compile_error!(msg)` at span.
fn error(span: Span, msg: &str) -> TokenStream {
    let mut out = TokenStream::new();
    let mut toks: Vec<TokenTree> = vec![
        TokenTree::Ident(Ident::new("compile_error", span)),
        TokenTree::Punct(Punct::new('!', Spacing::Alone)),
    ];
    let mut lit = Literal::string(msg);
    lit.set_span(span);
    let mut g = Group::new(Delimiter::Parenthesis, TokenStream::from(TokenTree::Literal(lit)));
    g.set_span(span);
    toks.push(TokenTree::Group(g));
    for t in toks.iter_mut() {
        t.set_span(span);
    }
    out.extend(toks);
    out
}

// ---------------------------------------------------------------------------
// m![...]

/// A parsed mapping expression.
enum Node {
    Symbol(Ident),
    Identity,
    Broadcast(usize),
    Escaped(TokenStream),
    Pair(Box<Node>, Box<Node>),
    Op(&'static str, Box<Node>, TokenStream),
    Padding(Box<Node>, TokenStream, &'static str),
}

struct MapParser {
    toks: Vec<TokenTree>,
    i: usize,
    api: Api,
    end: Span,
}

impl MapParser {
    fn new(ts: TokenStream, api: Api, end: Span) -> Self {
        MapParser { toks: ts.into_iter().collect(), i: 0, api, end }
    }

    fn peek(&self) -> Option<&TokenTree> {
        self.toks.get(self.i)
    }

    fn span(&self) -> Span {
        self.peek().map_or(self.end, |t| t.span())
    }

    fn is_punct(&self, c: char) -> bool {
        matches!(self.peek(), Some(TokenTree::Punct(p)) if p.as_char() == c)
    }

    /// Mapping0: Mapping1 (',' Mapping0)?
    fn list(&mut self) -> Result<Node, Error> {
        let first = self.item()?;
        if self.is_punct(',') {
            let at = self.span();
            self.i += 1;
            if self.peek().is_none() {
                if self.api == Api::Opt06 {
                    return Ok(first); // a trailing comma (0.6.0 grammar)
                }
                return Err((at, "m!: a trailing comma is not in the furiosa-visa-std 0.1.0 grammar".into()));
            }
            let rest = self.list()?;
            return Ok(Node::Pair(Box::new(first), Box::new(rest)));
        }
        Ok(first)
    }

    /// Mapping1: Mapping1 ('/' | '%' | '=' | '#' | '#{k}') Num | Mapping2
    fn item(&mut self) -> Result<Node, Error> {
        let mut acc = self.atom()?;
        loop {
            let op = match self.peek() {
                Some(TokenTree::Punct(p)) if matches!(p.as_char(), '/' | '%' | '=' | '#') => p.as_char(),
                _ => return Ok(acc),
            };
            self.i += 1;
            if op == '#' {
                let mut kind = "Top";
                if let Some(TokenTree::Group(g)) = self.peek() {
                    if g.delimiter() == Delimiter::Brace {
                        let inner = g.stream().to_string().replace(' ', "");
                        let k = match inner.as_str() {
                            "!" => Some("Bottom"),
                            "0" => Some("Zero"),
                            "*" => Some("Top"),
                            _ => None,
                        };
                        if let Some(k) = k {
                            if self.api == Api::Visa01 {
                                return Err((
                                    g.span(),
                                    format!("m!: `#{{{inner}}}` is not in the furiosa-visa-std 0.1.0 grammar (only `#`, Top padding)"),
                                ));
                            }
                            kind = k;
                            self.i += 1;
                        }
                    }
                }
                let n = self.num()?;
                acc = Node::Padding(Box::new(acc), n, kind);
                continue;
            }
            let n = self.num()?;
            let name = match op {
                '/' => "Stride",
                '%' => "Modulo",
                _ => "Resize",
            };
            acc = Node::Op(name, Box::new(acc), n);
        }
    }

    /// Num: a natural number, or (0.6.0) an escaped `{ const }`.
    fn num(&mut self) -> Result<TokenStream, Error> {
        let at = self.span();
        match self.peek().cloned() {
            Some(TokenTree::Literal(l)) if l.to_string().parse::<usize>().is_ok() => {
                self.i += 1;
                Ok(TokenStream::from(TokenTree::Literal(l)))
            }
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace && self.api == Api::Opt06 => {
                self.i += 1;
                Ok(TokenStream::from(TokenTree::Group(g)))
            }
            _ => Err((at, "m!: want a number after the operator".into())),
        }
    }

    /// Mapping2: Symbol | Nat | { Type } | ( Mapping0 ) | [ Mapping0 ]
    fn atom(&mut self) -> Result<Node, Error> {
        let at = self.span();
        let t = match self.peek().cloned() {
            Some(t) => t,
            None => return Err((at, "m!: want a mapping term, found the end".into())),
        };
        self.i += 1;
        match t {
            TokenTree::Ident(id) => Ok(Node::Symbol(id)),
            TokenTree::Literal(l) => match l.to_string().parse::<usize>() {
                Ok(1) => Ok(Node::Identity),
                Ok(n) if self.api == Api::Opt06 => Ok(Node::Broadcast(n)),
                Ok(_) => Err((l.span(), "m!: Broadcast not supported (furiosa-visa-std 0.1.0 takes the number 1 only)".into())),
                Err(_) => Err((l.span(), format!("m!: invalid token {l}"))),
            },
            TokenTree::Group(g) => match g.delimiter() {
                Delimiter::Brace => Ok(Node::Escaped(g.stream())),
                Delimiter::Parenthesis | Delimiter::Bracket => {
                    let mut sub = MapParser::new(g.stream(), self.api, g.span_close());
                    let n = sub.list()?;
                    if let Some(t) = sub.peek() {
                        return Err((t.span(), format!("m!: unexpected token {t}")));
                    }
                    Ok(n)
                }
                Delimiter::None => {
                    let mut sub = MapParser::new(g.stream(), self.api, g.span_close());
                    sub.list()
                }
            },
            TokenTree::Punct(p) => Err((p.span(), format!("m!: unrecognized token {p}"))),
        }
    }
}

fn render(n: Node, krate: &str, out: &mut TokenStream) {
    let path = |name: &str| parse(&format!("::{krate}::__mapping::{name}"));
    match n {
        Node::Symbol(id) => {
            out.extend(path("Symbol"));
            out.extend(parse("<"));
            out.extend(TokenStream::from(TokenTree::Ident(id)));
            out.extend(parse(">"));
        }
        Node::Identity => out.extend(path("Identity")),
        Node::Broadcast(k) => {
            out.extend(path("Broadcast"));
            out.extend(parse(&format!("<{k}>")));
        }
        Node::Escaped(ts) => out.extend(ts),
        Node::Pair(l, r) => {
            out.extend(path("Pair"));
            out.extend(parse("<"));
            render(*l, krate, out);
            out.extend(parse(","));
            render(*r, krate, out);
            out.extend(parse(">"));
        }
        Node::Op(name, e, num) => {
            out.extend(path(name));
            out.extend(parse("<"));
            render(*e, krate, out);
            out.extend(parse(","));
            out.extend(num);
            out.extend(parse(">"));
        }
        Node::Padding(e, num, kind) => {
            out.extend(path("Padding"));
            out.extend(parse("<"));
            render(*e, krate, out);
            out.extend(parse(","));
            out.extend(num);
            out.extend(parse(&format!(", ::{krate}::__mapping::{kind}>")));
        }
    }
}

fn mapping(input: TokenStream, api: Api) -> TokenStream {
    let mut p = MapParser::new(input, api, Span::call_site());
    if p.peek().is_none() {
        return error(Span::call_site(), "m!: an empty mapping");
    }
    let node = match p.list() {
        Ok(n) => n,
        Err((s, m)) => return error(s, &m),
    };
    if let Some(t) = p.peek() {
        return error(t.span(), &format!("m!: unexpected token {t}"));
    }
    let mut out = TokenStream::new();
    render(node, api.krate(), &mut out);
    out
}

/// `m![...]` in the furiosa-visa-std 0.1.0 grammar.
#[proc_macro]
pub fn m_visa(input: TokenStream) -> TokenStream {
    mapping(input, Api::Visa01)
}

/// `m![...]` in the furiosa-opt-std 0.6.0 grammar.
#[proc_macro]
pub fn m_opt(input: TokenStream) -> TokenStream {
    mapping(input, Api::Opt06)
}

// ---------------------------------------------------------------------------
// axes![...]

fn axes(input: TokenStream, api: Api) -> TokenStream {
    let toks: Vec<TokenTree> = input.into_iter().collect();
    let mut out = TokenStream::new();
    let mut i = 0;
    let mut seen: Vec<String> = Vec::new();
    if toks.is_empty() {
        return error(Span::call_site(), "axes!: no axis");
    }
    while i < toks.len() {
        let name = match &toks[i] {
            TokenTree::Ident(id) => id.clone(),
            t => return error(t.span(), &format!("axes!: want an axis name, found {t}")),
        };
        match toks.get(i + 1) {
            Some(TokenTree::Punct(p)) if p.as_char() == '=' => {}
            Some(t) => return error(t.span(), &format!("axes!: want `=` after {name}, found {t}")),
            None => return error(name.span(), "axes!: want `= SIZE`"),
        }
        let size = match toks.get(i + 2) {
            Some(TokenTree::Literal(l)) if l.to_string().parse::<usize>().is_ok() => l.clone(),
            Some(t) => return error(t.span(), &format!("axes!: the size of {name} is an integer literal, found {t}")),
            None => return error(name.span(), "axes!: want the size"),
        };
        if seen.contains(&name.to_string()) {
            return error(name.span(), &format!("axis `{name}` is declared multiple times in this axes! invocation"));
        }
        seen.push(name.to_string());
        out.extend(parse("#[allow(non_camel_case_types)] #[derive(Debug, Clone)] pub struct"));
        out.extend(TokenStream::from(TokenTree::Ident(name.clone())));
        out.extend(parse(";"));
        out.extend(parse(&format!("impl ::{}::__mapping::AxisName for", api.krate())));
        out.extend(TokenStream::from(TokenTree::Ident(name.clone())));
        let mut body = parse(&format!("const NAME: &'static str = \"{name}\"; const SIZE: usize = "));
        body.extend(TokenStream::from(TokenTree::Literal(size)));
        body.extend(parse(";"));
        out.extend(TokenStream::from(TokenTree::Group(Group::new(Delimiter::Brace, body))));
        i += 3;
        match toks.get(i) {
            None => break,
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {
                i += 1;
            }
            Some(t) => return error(t.span(), &format!("axes!: want `,` between axes, found {t}")),
        }
    }
    out
}

/// `axes![...]` of furiosa-visa-std 0.1.0.
#[proc_macro]
pub fn axes_visa(input: TokenStream) -> TokenStream {
    axes(input, Api::Visa01)
}

/// `axes![...]` of furiosa-opt-std 0.6.0.
#[proc_macro]
pub fn axes_opt(input: TokenStream) -> TokenStream {
    axes(input, Api::Opt06)
}

// ---------------------------------------------------------------------------
// Function items.

/// A function item split into its parts, spans kept.
struct Func {
    attrs: Vec<TokenTree>,
    vis: Vec<TokenTree>,
    is_async: bool,
    name: Ident,
    params: Group,
    ret: Vec<TokenTree>,
    body: Group,
}

fn split_fn(item: TokenStream) -> Result<Func, Error> {
    let toks: Vec<TokenTree> = item.into_iter().collect();
    let mut i = 0;
    let mut attrs = Vec::new();
    while let Some(TokenTree::Punct(p)) = toks.get(i) {
        if p.as_char() != '#' {
            break;
        }
        attrs.push(toks[i].clone());
        attrs.push(toks.get(i + 1).cloned().ok_or((p.span(), "attribute".to_string()))?);
        i += 2;
    }
    let mut vis = Vec::new();
    if let Some(TokenTree::Ident(id)) = toks.get(i) {
        if id.to_string() == "pub" {
            vis.push(toks[i].clone());
            i += 1;
            if let Some(TokenTree::Group(g)) = toks.get(i) {
                if g.delimiter() == Delimiter::Parenthesis {
                    vis.push(toks[i].clone());
                    i += 1;
                }
            }
        }
    }
    let mut is_async = false;
    if let Some(TokenTree::Ident(id)) = toks.get(i) {
        if id.to_string() == "async" {
            is_async = true;
            i += 1;
        }
    }
    match toks.get(i) {
        Some(TokenTree::Ident(id)) if id.to_string() == "fn" => i += 1,
        Some(t) => return Err((t.span(), "only a function can carry this attribute".into())),
        None => return Err((Span::call_site(), "only a function can carry this attribute".into())),
    }
    let name = match toks.get(i) {
        Some(TokenTree::Ident(id)) => id.clone(),
        _ => return Err((Span::call_site(), "want the function's name".into())),
    };
    i += 1;
    if let Some(TokenTree::Punct(p)) = toks.get(i) {
        if p.as_char() == '<' {
            return Err((p.span(), "the stub takes functions without generic parameters".into()));
        }
    }
    let params = match toks.get(i) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => g.clone(),
        _ => return Err((name.span(), "want the parameter list".into())),
    };
    i += 1;
    let body = match toks.last() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g.clone(),
        _ => return Err((name.span(), "want the function's body".into())),
    };
    let mut ret = Vec::new();
    if i < toks.len() - 1 {
        // -> Type
        match (toks.get(i), toks.get(i + 1)) {
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == '-' && b.as_char() == '>' => {}
            (Some(t), _) => return Err((t.span(), "want `->` or the body".into())),
            _ => {}
        }
        ret = toks[i + 2..toks.len() - 1].to_vec();
    }
    Ok(Func { attrs, vis, is_async, name, params, ret, body })
}

/// The parameters' names and types, split at top-level commas.
fn split_params(g: &Group) -> Result<Vec<(Ident, Vec<TokenTree>)>, Error> {
    let mut out = Vec::new();
    let mut cur: Vec<TokenTree> = Vec::new();
    let mut depth = 0i32;
    let mut flush = |cur: &mut Vec<TokenTree>| -> Result<(), Error> {
        if cur.is_empty() {
            return Ok(());
        }
        let colon = cur
            .iter()
            .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'))
            .ok_or((cur[0].span(), "want `name: Type`".to_string()))?;
        let name = cur[..colon]
            .iter()
            .rev()
            .find_map(|t| match t {
                TokenTree::Ident(id) if id.to_string() != "mut" => Some(id.clone()),
                _ => None,
            })
            .ok_or((cur[0].span(), "want a parameter name".to_string()))?;
        out.push((name, cur[colon + 1..].to_vec()));
        cur.clear();
        Ok(())
    };
    let mut prev_dash = false;
    for t in g.stream() {
        match &t {
            TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
            TokenTree::Punct(p) if p.as_char() == '>' && !prev_dash => depth -= 1,
            TokenTree::Punct(p) if p.as_char() == ',' && depth == 0 => {
                flush(&mut cur)?;
                prev_dash = false;
                continue;
            }
            _ => {}
        }
        prev_dash = matches!(&t, TokenTree::Punct(p) if p.as_char() == '-');
        cur.push(t);
    }
    flush(&mut cur)?;
    Ok(out)
}

fn to_camel(s: &str) -> String {
    s.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or(String::new(), |ch| ch.to_uppercase().collect::<String>() + c.as_str())
        })
        .collect()
}

fn device(attr: TokenStream, item: TokenStream, api: Api) -> TokenStream {
    let attr_str = attr.to_string();
    let f = match split_fn(item) {
        Ok(f) => f,
        Err((s, m)) => return error(s, &format!("#[device]: {m}")),
    };
    let params = match split_params(&f.params) {
        Ok(p) => p,
        Err((s, m)) => return error(s, &format!("#[device]: {m}")),
    };
    let name = f.name.to_string();
    let krate = api.krate();
    let (tool, hidden, marker) = match api {
        Api::Visa01 => ("tcp", format!("__tcp_{name}"), to_camel(&name)),
        Api::Opt06 => ("furiosa_opt", format!("__furiosa_opt_{name}"), format!("__furiosa_opt_{name}")),
    };
    let mut out = TokenStream::new();
    if api == Api::Opt06 {
        out.extend(parse("#[furiosa_opt::rev = \"unknown\"]"));
    }
    out.extend(parse(&format!("#[{tool}::device = {:?}]", attr_str)));
    out.extend(parse("#[allow(dead_code, unused, clippy::too_many_arguments)]"));
    out.extend(f.attrs.iter().cloned());
    out.extend(parse(&format!("fn {hidden}")));
    out.extend(TokenStream::from(TokenTree::Group(f.params.clone())));
    if !f.ret.is_empty() {
        out.extend(parse("->"));
        out.extend(f.ret.iter().cloned());
    }
    out.extend(TokenStream::from(TokenTree::Group(f.body.clone())));
    let vis: TokenStream = f.vis.iter().cloned().collect();
    // The marker struct and the const of the function's name.
    out.extend(parse("#[allow(non_camel_case_types)] #[derive(Debug)]"));
    out.extend(vis.clone());
    match api {
        Api::Visa01 => {
            out.extend(parse(&format!("struct {marker};")));
            out.extend(parse("#[allow(non_upper_case_globals)]"));
            out.extend(vis.clone());
            out.extend(parse(&format!("const {name}: {marker} = {marker};")));
        }
        Api::Opt06 => {
            out.extend(parse(&format!("struct {marker} {{}}")));
            out.extend(parse("#[allow(non_upper_case_globals)]"));
            out.extend(vis.clone());
            out.extend(parse(&format!("const {name}: {marker} = {marker} {{}};")));
            let chip = attr_str
                .split(',')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| k.trim() == "chip")
                .and_then(|(_, v)| v.trim().parse::<u8>().ok())
                .unwrap_or(1);
            out.extend(parse(&format!(
                "impl {marker} {{ pub fn device(&self) -> ::{krate}::Device {{ ::{krate}::Device {{ chip: {chip}, pe: 8 }} }} }}"
            )));
        }
    }
    // impl DeviceFn<(T1, T2, ...)> for the marker.
    let mut tuple = TokenStream::new();
    let mut names = TokenStream::new();
    for (k, (n, ty)) in params.iter().enumerate() {
        if k > 0 {
            tuple.extend(parse(","));
            names.extend(parse(","));
        }
        tuple.extend(ty.iter().cloned());
        names.extend(TokenStream::from(TokenTree::Ident(n.clone())));
    }
    let (tuple, names) = if params.len() == 1 {
        (tuple, names)
    } else {
        (
            TokenStream::from(TokenTree::Group(Group::new(Delimiter::Parenthesis, tuple))),
            TokenStream::from(TokenTree::Group(Group::new(Delimiter::Parenthesis, names.clone()))),
        )
    };
    let mut call_args = TokenStream::new();
    for (k, (n, _)) in params.iter().enumerate() {
        if k > 0 {
            call_args.extend(parse(","));
        }
        call_args.extend(TokenStream::from(TokenTree::Ident(n.clone())));
    }
    let brace = |ts: TokenStream| TokenStream::from(TokenTree::Group(Group::new(Delimiter::Brace, ts)));
    let paren = |ts: TokenStream| TokenStream::from(TokenTree::Group(Group::new(Delimiter::Parenthesis, ts)));
    // fn execute(names: tuple) -> impl Future<Output = Self::Output> { async move { hidden(args) } }
    let mut exec_params = names;
    exec_params.extend(parse(":"));
    exec_params.extend(tuple.clone());
    let mut call = parse(&hidden);
    call.extend(paren(call_args));
    let mut exec = parse("fn execute");
    exec.extend(paren(exec_params));
    exec.extend(parse("-> impl ::std::future::Future<Output = Self::Output>"));
    let mut fut = parse("async move");
    fut.extend(brace(call));
    exec.extend(brace(fut));
    let mut body = parse("type Output =");
    if f.ret.is_empty() {
        body.extend(parse("()"));
    } else {
        body.extend(f.ret.iter().cloned());
    }
    body.extend(parse(";"));
    body.extend(exec);
    out.extend(parse(&format!("impl ::{krate}::runtime::DeviceFn<")));
    out.extend(tuple);
    out.extend(parse(&format!("> for {marker}")));
    out.extend(brace(body));
    out
}

/// `#[device(chip = N)]` of furiosa-visa-std 0.1.0.
#[proc_macro_attribute]
pub fn device_visa(attr: TokenStream, item: TokenStream) -> TokenStream {
    device(attr, item, Api::Visa01)
}

/// `#[device(chip = N)]` of furiosa-opt-std 0.6.0.
#[proc_macro_attribute]
pub fn device_opt(attr: TokenStream, item: TokenStream) -> TokenStream {
    device(attr, item, Api::Opt06)
}

fn tokio_fn(item: TokenStream, test: bool) -> TokenStream {
    let f = match split_fn(item) {
        Ok(f) => f,
        Err((s, m)) => return error(s, &format!("#[tokio::main]: {m}")),
    };
    if !f.is_async {
        return error(f.name.span(), "the `async` keyword is missing from the function declaration");
    }
    if !f.params.stream().is_empty() {
        return error(f.params.span(), "#[tokio::main] takes a function without parameters");
    }
    let mut out = TokenStream::new();
    if test {
        out.extend(parse("#[test]"));
    }
    out.extend(f.attrs.iter().cloned());
    out.extend(f.vis.iter().cloned());
    out.extend(parse("fn"));
    out.extend(TokenStream::from(TokenTree::Ident(f.name.clone())));
    out.extend(parse("()"));
    if !f.ret.is_empty() {
        out.extend(parse("->"));
        out.extend(f.ret.iter().cloned());
    }
    let mut fut = parse("async move");
    fut.extend(TokenStream::from(TokenTree::Group(f.body.clone())));
    let mut body = parse("::tokio::__block_on");
    body.extend(TokenStream::from(TokenTree::Group(Group::new(Delimiter::Parenthesis, fut))));
    out.extend(TokenStream::from(TokenTree::Group(Group::new(Delimiter::Brace, body))));
    out
}

/// `#[tokio::main]`.
#[proc_macro_attribute]
pub fn tokio_main(_attr: TokenStream, item: TokenStream) -> TokenStream {
    tokio_fn(item, false)
}

/// `#[tokio::test]`.
#[proc_macro_attribute]
pub fn tokio_test(_attr: TokenStream, item: TokenStream) -> TokenStream {
    tokio_fn(item, true)
}
