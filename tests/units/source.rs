//! The source as `syn` reads it: the one parser of the guards (`shape.rs`, `strings.rs`). A crate
//! is read from its root (`lib.rs`, `main.rs`) through its `mod` declarations, so every module of
//! it is seen; test modules and test functions are left out by their attribute (`#[cfg(test)]`,
//! `#[test]`), once, as a file is parsed ([`parse`]), never by cutting a file at its first
//! `#[cfg(test)]`; the guards' visitors then see shipped code only.

use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::visit::Visit;

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The library and the binary: every crate the shipped `argus-supervisor` is built from.
pub fn shipped_roots() -> Vec<PathBuf> {
    let w = workspace();
    vec![
        w.join("crates/supervisor/src/lib.rs"),
        w.join("machines/src/lib.rs"),
        w.join("crates/sim/src/lib.rs"),
        w.join("crates/bench/src/lib.rs"),
        w.join("src/main.rs"),
    ]
}

/// Every module file of the shipped crates ([`shipped_roots`]), read through their modules.
pub fn shipped() -> Vec<Module> {
    shipped_roots()
        .iter()
        .flat_map(|r| crate_modules(r))
        .collect()
}

/// One module file, parsed.
pub struct Module {
    pub path: PathBuf,
    pub file: syn::File,
}

impl Module {
    /// The path relative to the workspace, for messages.
    pub fn name(&self) -> String {
        self.path
            .strip_prefix(workspace())
            .unwrap_or(&self.path)
            .display()
            .to_string()
    }
}

/// Whether the attributes leave an item out of the shipped code (`#[cfg(test)]`, `#[test]`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("test") {
            return true;
        }
        if !a.path().is_ident("cfg") {
            return false;
        }
        a.parse_args::<syn::Meta>()
            .is_ok_and(|m| matches!(&m, syn::Meta::Path(p) if p.is_ident("test")))
    })
}

/// `text` as `syn` reads it, its test code left out: the items `#[cfg(test)]` or `#[test]` marks,
/// in modules and in impls.
pub fn parse(text: &str) -> syn::Result<syn::File> {
    let mut file = syn::parse_file(text)?;
    strip_tests(&mut file.items);
    Ok(file)
}

fn strip_tests(items: &mut Vec<syn::Item>) {
    items.retain(|item| !is_test(item_attrs(item)));
    for item in items {
        match item {
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &mut m.content {
                    strip_tests(inner);
                }
            }
            syn::Item::Impl(i) => i
                .items
                .retain(|f| !matches!(f, syn::ImplItem::Fn(f) if is_test(&f.attrs))),
            _ => {}
        }
    }
}

/// The attributes of the items test code comes as.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// Every module file of the crate rooted at `root`, following `mod x;` declarations that are not
/// test modules (`x.rs` or `x/mod.rs` beside it, or its `#[path]`).
pub fn crate_modules(root: &Path) -> Vec<Module> {
    let mut out = vec![];
    let mut todo = vec![(root.to_path_buf(), true)];
    while let Some((path, owns_dir)) = todo.pop() {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let file = parse(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()));
        // `lib.rs`, `main.rs` and `mod.rs` own their directory; `foo.rs` owns `foo/`.
        let dir = match (owns_dir, path.parent()) {
            (true, Some(p)) => p.to_path_buf(),
            (false, Some(p)) => p.join(path.file_stem().unwrap_or_default()),
            (_, None) => PathBuf::new(),
        };
        let mut mods = vec![];
        nested_mods(&file.items, &dir, &mut mods);
        for (m, explicit) in mods {
            let (next, owns) = match explicit {
                Some(p) => (p, false),
                None if m.with_extension("rs").exists() => (m.with_extension("rs"), false),
                None => (m.join("mod.rs"), true),
            };
            assert!(
                next.exists(),
                "{} declares a module it does not have: {}",
                path.display(),
                next.display()
            );
            todo.push((next, owns));
        }
        out.push(Module { path, file });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The out-of-line modules `items` declare (inline ones searched within; test modules are gone).
fn nested_mods(items: &[syn::Item], dir: &Path, out: &mut Vec<(PathBuf, Option<PathBuf>)>) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        match &m.content {
            Some((_, inner)) => nested_mods(inner, &dir.join(&name), out),
            None => {
                let explicit = m.attrs.iter().find_map(|a| match &a.meta {
                    syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) => Some(dir.join(s.value())),
                        _ => None,
                    },
                    _ => None,
                });
                out.push((dir.join(&name), explicit));
            }
        }
    }
}

/// A function of the shipped code: its name (`Type::name` for a method) and its length in lines,
/// from its signature to its closing brace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub lines: usize,
}

/// Every function with a body in `file` (parsed by [`parse`]: test code is gone).
pub fn functions(file: &syn::File) -> Vec<Function> {
    let mut v = Functions::default();
    v.visit_file(file);
    v.out
}

#[derive(Default)]
struct Functions {
    owner: Vec<String>,
    out: Vec<Function>,
}

impl Functions {
    fn push(&mut self, sig: &syn::Signature, body: &syn::Block) {
        let (name, start) = (&sig.ident, sig.fn_token.span.start().line);
        let lines = body.brace_token.span.close().end().line + 1 - start;
        let name = match self.owner.last() {
            Some(o) => format!("{o}::{name}"),
            None => name.to_string(),
        };
        self.out.push(Function { name, lines });
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.push(&f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let owner = match &*i.self_ty {
            syn::Type::Path(p) => p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default(),
            _ => "_".to_string(),
        };
        self.owner.push(owner);
        syn::visit::visit_item_impl(self, i);
        self.owner.pop();
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.push(&f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.push(&f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// Where shipped code compares text to steer control flow: `==`/`!=` against a string literal
/// (or `Some("…")`), `starts_with("…")`/`ends_with("…")`, a match arm or `matches!` on a string
/// literal anywhere in its pattern (inside a tuple, a slice or an `Option` too), `if let "…" =`.
/// Each as (line, what).
pub fn text_comparisons(file: &syn::File) -> Vec<(usize, String)> {
    let mut v = Comparisons::default();
    v.visit_file(file);
    v.out
}

#[derive(Default)]
struct Comparisons {
    out: Vec<(usize, String)>,
}

fn is_str_lit(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        }) => true,
        syn::Expr::Call(c) => {
            matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident("Some"))
                && c.args.iter().any(is_str_lit)
        }
        syn::Expr::Reference(r) => is_str_lit(&r.expr),
        syn::Expr::Paren(p) => is_str_lit(&p.expr),
        _ => false,
    }
}

/// Whether a pattern names a string literal anywhere within it.
fn pat_has_str(p: &syn::Pat) -> bool {
    match p {
        syn::Pat::Lit(l) => matches!(l.lit, syn::Lit::Str(_)),
        syn::Pat::Or(o) => o.cases.iter().any(pat_has_str),
        syn::Pat::Tuple(t) => t.elems.iter().any(pat_has_str),
        syn::Pat::TupleStruct(t) => t.elems.iter().any(pat_has_str),
        syn::Pat::Slice(s) => s.elems.iter().any(pat_has_str),
        syn::Pat::Struct(s) => s.fields.iter().any(|f| pat_has_str(&f.pat)),
        syn::Pat::Reference(r) => pat_has_str(&r.pat),
        syn::Pat::Paren(p) => pat_has_str(&p.pat),
        syn::Pat::Ident(i) => i.subpat.as_ref().is_some_and(|(_, p)| pat_has_str(p)),
        _ => false,
    }
}

impl Comparisons {
    fn found(&mut self, span: proc_macro2::Span, what: &str) {
        self.out.push((span.start().line, what.to_string()));
    }
}

impl<'ast> Visit<'ast> for Comparisons {
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        if matches!(b.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_))
            && (is_str_lit(&b.left) || is_str_lit(&b.right))
        {
            self.found(b.span(), "== or != against text");
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        let m = c.method.to_string();
        if matches!(m.as_str(), "starts_with" | "ends_with" | "eq" | "ne")
            && c.args.iter().any(is_str_lit)
        {
            self.found(c.span(), "a method comparing with text");
        }
        syn::visit::visit_expr_method_call(self, c);
    }
    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        if pat_has_str(&a.pat) {
            self.found(a.pat.span(), "a match arm on text");
        }
        syn::visit::visit_arm(self, a);
    }
    fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
        if pat_has_str(&l.pat) {
            self.found(l.pat.span(), "a let pattern on text");
        }
        syn::visit::visit_expr_let(self, l);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // `matches!(x, "a" | "b")`: its second argument is a pattern.
        if m.path.is_ident("matches") {
            let parsed = m.parse_body_with(|input: syn::parse::ParseStream| {
                let _: syn::Expr = input.parse()?;
                let _: syn::Token![,] = input.parse()?;
                let pat = syn::Pat::parse_multi_with_leading_vert(input)?;
                let _: proc_macro2::TokenStream = input.parse()?;
                Ok(pat)
            });
            if parsed.is_ok_and(|p| pat_has_str(&p)) {
                self.found(m.span(), "matches! on text");
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// Every path a `use` item imports, one per leaf of its tree (`a::{b, c::d}` gives `a::b` and
/// `a::c::d`; a rename gives the imported name, a glob `*`): the one reader of use trees the
/// guards share.
pub fn use_paths(u: &syn::ItemUse) -> Vec<Vec<String>> {
    fn walk(t: &syn::UseTree, mut at: Vec<String>, out: &mut Vec<Vec<String>>) {
        match t {
            syn::UseTree::Path(p) => {
                at.push(p.ident.to_string());
                return walk(&p.tree, at, out);
            }
            syn::UseTree::Name(n) => at.push(n.ident.to_string()),
            syn::UseTree::Rename(r) => at.push(r.ident.to_string()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, at.clone(), out);
                }
                return;
            }
            syn::UseTree::Glob(_) => at.push("*".into()),
        }
        out.push(at);
    }
    let mut out = vec![];
    walk(&u.tree, vec![], &mut out);
    out
}
