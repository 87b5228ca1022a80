//! The API is one typed contract (`crates/supervisor/src/api/contract.rs`): the project reads its
//! own API into types, never by key. The CLI, `qualify`, the binary (`src/`: the demo, `probe`'s
//! text), the health route and the daemon hold no untyped JSON — no `serde_json::Value`, `Map` or
//! `json!` — outside their tests.

use super::source::{self, Module};
use syn::visit::Visit;

/// Where untyped JSON would be the API read by key.
const TYPED_ONLY: [&str; 6] = [
    "crates/supervisor/src/cli.rs",
    "crates/supervisor/src/qualify/",
    "crates/supervisor/src/api/health.rs",
    "crates/supervisor/src/daemon.rs",
    "crates/supervisor/src/daemon/",
    "src/",
];

/// The untyped JSON a file names: `serde_json::{Value, Map, json}` in `use` trees and paths, and
/// any `json!` invocation.
#[derive(Default)]
struct Untyped(Vec<String>);

const UNTYPED: [&str; 3] = ["Value", "Map", "json"];

fn untyped(segments: &[String]) -> bool {
    segments.first().is_some_and(|s| s == "serde_json")
        && segments
            .get(1)
            .is_some_and(|s| UNTYPED.contains(&s.as_str()))
}

impl<'ast> Visit<'ast> for Untyped {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if untyped(&segs) {
            self.0.push(segs.join("::"));
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.segments.last().is_some_and(|s| s.ident == "json") {
            self.0.push("json!".into());
        }
        syn::visit::visit_macro(self, m);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for at in source::use_paths(u) {
            let glob = at.first().is_some_and(|s| s == "serde_json")
                && at.last().is_some_and(|s| s == "*");
            if untyped(&at) || glob {
                self.0.push(at.join("::"));
            }
        }
    }
}

fn found_in(file: &syn::File) -> Vec<String> {
    let mut v = Untyped::default();
    v.visit_file(file);
    v.0
}

#[test]
fn the_cli_qualify_the_binary_the_health_route_and_the_daemon_read_the_api_typed() {
    let modules: Vec<Module> = source::shipped();
    let guarded: Vec<&Module> = modules
        .iter()
        .filter(|m| TYPED_ONLY.iter().any(|p| m.name().starts_with(p)))
        .collect();
    // Every place the target names is read (a moved file would otherwise escape the guard).
    for place in TYPED_ONLY {
        assert!(
            guarded.iter().any(|m| m.name().starts_with(place)),
            "{place}: no module read there"
        );
    }
    let found: Vec<String> = guarded
        .iter()
        .flat_map(|m| {
            found_in(&m.file)
                .into_iter()
                .map(move |f| format!("{}: {f}", m.name()))
        })
        .collect();
    assert!(found.is_empty(), "untyped JSON:\n{}", found.join("\n"));
}

#[test]
fn the_scanner_sees_every_shape_of_untyped_json_and_leaves_tests_out() {
    let file = source::parse(
        "use serde_json::{json, Value as V};\nuse serde_json::*;\n\
         fn f(x: serde_json::Value) { let m = serde_json::Map::new(); let y = json!({}); \
         let z = serde_json::json!(1); let t: Thing = serde_json::from_str(\"\").unwrap(); }\n\
         #[cfg(test)]\nmod tests { use serde_json::Value; }\n",
    )
    .expect("parses");
    assert_eq!(
        found_in(&file),
        [
            "serde_json::json",
            "serde_json::Value",
            "serde_json::*",
            "serde_json::Value",
            "serde_json::Map::new",
            "json!",
            "json!",
            "serde_json::json",
        ]
    );
}
