//! No import cycle between modules: at every level of each shipped crate, the modules one folder
//! (or file) holds depend on each other in one direction only, so the layout reads top to bottom.
//! A module's file and its children are one room: a child that reads its parent (`super::X`) or a
//! parent that reads its child is inside that room, not an arrow between two.

use super::source::{self, Module};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use syn::visit::Visit;

/// The module path of a file of the crate rooted at `root` (`api/health.rs` → `api::health`).
fn module_path(root: &Path, file: &Path) -> Vec<String> {
    let dir = root.parent().unwrap_or(Path::new(""));
    let rel = file.strip_prefix(dir).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// Every path a file names that starts at `crate`, `super` or `self` (in `use` trees and in code),
/// made absolute from the file's own module.
#[derive(Default)]
struct Paths {
    at: Vec<String>,
    found: Vec<Vec<String>>,
}

impl Paths {
    fn absolute(&self, segs: &[String]) -> Option<Vec<String>> {
        let mut out = self.at.clone();
        let mut rest = segs;
        match segs.first().map(String::as_str) {
            Some("crate") => {
                out.clear();
                rest = &segs[1..];
            }
            Some("self") => rest = &segs[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    out.pop();
                    rest = &rest[1..];
                }
            }
            _ => return None,
        }
        out.extend(rest.iter().cloned());
        Some(out)
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(a) = self.absolute(&segs) {
            self.found.push(a);
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A glob lands in the module it names (`super::x::*` reads `x`).
        for segs in source::use_paths(u) {
            if let Some(a) = self.absolute(&segs) {
                self.found.push(a);
            }
        }
    }
}

/// The arrows between sibling modules: for each path a module names, the two children of the
/// deepest module holding both ends, when they differ (`parent → (from, to)`).
fn arrows(
    modules: &[(Vec<String>, &syn::File)],
) -> BTreeMap<Vec<String>, BTreeSet<(String, String)>> {
    let known: BTreeSet<&Vec<String>> = modules.iter().map(|(m, _)| m).collect();
    let mut out: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for (from, file) in modules {
        let mut v = Paths {
            at: from.clone(),
            found: vec![],
        };
        v.visit_file(file);
        for path in v.found {
            // The module the path lands in: its longest prefix that is a module.
            let Some(to) = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| known.contains(p))
            else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                out.entry(from[..common].to_vec())
                    .or_default()
                    .insert((from[common].clone(), to[common].clone()));
            }
        }
    }
    out
}

/// A cycle among `edges`, if there is one (its nodes in order).
fn cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    fn visit<'a>(
        n: &'a String,
        edges: &'a BTreeSet<(String, String)>,
        stack: &mut Vec<&'a String>,
        done: &mut BTreeSet<&'a String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| *s == n) {
            return Some(stack[i..].iter().map(|s| s.to_string()).collect());
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n);
        for (_, to) in edges.iter().filter(|(a, _)| a == n) {
            if let Some(c) = visit(to, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n);
        None
    }
    let mut done = BTreeSet::new();
    nodes
        .into_iter()
        .find_map(|n| visit(n, edges, &mut vec![], &mut done))
}

#[test]
fn no_two_modules_import_each_other_at_any_level_of_a_shipped_crate() {
    let mut found = vec![];
    for root in source::shipped_roots() {
        let modules: Vec<Module> = source::crate_modules(&root);
        let paths: Vec<(Vec<String>, &syn::File)> = modules
            .iter()
            .map(|m| (module_path(&root, &m.path), &m.file))
            .collect();
        for (parent, edges) in arrows(&paths) {
            if let Some(c) = cycle(&edges) {
                found.push(format!(
                    "{}: in `crate::{}`: {} → {}",
                    root.display(),
                    parent.join("::"),
                    c.join(" → "),
                    c[0]
                ));
            }
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_a_cycle_between_siblings_and_none_between_a_module_and_its_parent() {
    let file = |text: &str| source::parse(text).expect("parses");
    let (a, b, p, c) = (
        file("use super::b::Thing;"),
        file("fn f() { crate::x::a::g(); }"),
        file("use self::a::g; mod a; mod b;"),
        file("use super::super::Top;"),
    );
    let m = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let modules = vec![
        (m(&["x", "a"]), &a),
        (m(&["x", "b"]), &b),
        (m(&["x"]), &p),
        (m(&["x", "b", "c"]), &c),
    ];
    let arrows = arrows(&modules);
    assert_eq!(arrows.len(), 1, "{arrows:?}");
    let edges = &arrows[&m(&["x"])];
    assert_eq!(
        edges.iter().cloned().collect::<Vec<_>>(),
        [("a".to_string(), "b".to_string()), ("b".into(), "a".into())]
    );
    assert_eq!(cycle(edges), Some(m(&["a", "b"])));
    let one_way: BTreeSet<(String, String)> = [("a".to_string(), "b".to_string())].into();
    assert_eq!(cycle(&one_way), None);
}

/// The modules `module` names (from its file and, for a folder, every file under it).
fn named_by(module: &[&str]) -> BTreeSet<String> {
    let root = source::workspace().join("crates/supervisor/src/lib.rs");
    let mut out = BTreeSet::new();
    for m in source::crate_modules(&root) {
        let at = module_path(&root, &m.path);
        if !at.starts_with(&module.iter().map(|s| s.to_string()).collect::<Vec<_>>()) {
            continue;
        }
        let mut v = Paths {
            at: at.clone(),
            found: vec![],
        };
        v.visit_file(&m.file);
        out.extend(v.found.into_iter().filter_map(|p| p.first().cloned()));
    }
    out
}

/// `qualify` and the CLI stand on the typed client (`api::client`), not on each other or on
/// `serve`: the API's client and its token file are the API's, below all three.
#[test]
fn qualify_and_the_cli_stand_on_the_api_client_not_on_each_other_or_on_serve() {
    let qualify = named_by(&["qualify"]);
    for above in ["cli", "daemon"] {
        assert!(
            !qualify.contains(above),
            "qualify/ names crate::{above}: {qualify:?}"
        );
    }
    assert!(qualify.contains("api"), "{qualify:?}");
    let cli = named_by(&["cli"]);
    for above in ["qualify", "daemon"] {
        assert!(!cli.contains(above), "cli.rs names crate::{above}: {cli:?}");
    }
    assert!(cli.contains("api"), "{cli:?}");
}
