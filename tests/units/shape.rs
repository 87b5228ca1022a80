//! Size targets, checked on the source as `syn` reads it (`source.rs`): no function over 80 lines
//! in the shipped code (the library crates and the binary), the driver one file of at most 150
//! lines that decides nothing, and no import from the A2A client or `metrics` up into the runtime
//! or the bridges.

use super::source::{self, Function, Module};
use syn::visit::Visit;

fn under(modules: &[Module], dir: &str) -> Vec<String> {
    modules
        .iter()
        .map(Module::name)
        .filter(|n| n.starts_with(dir))
        .collect()
}

#[test]
fn the_measure_counts_a_function_from_its_fn_to_its_closing_brace_and_leaves_tests_out() {
    let file = source::parse(
        "fn a() {\n    x();\n}\nimpl T {\n    pub(crate) async fn b(\n        y: u8,\n    ) {\n    }\n}\n\
         #[cfg(test)]\nmod tests {\n    fn c() {}\n}\n#[test]\nfn d() {}\n",
    )
    .expect("parses");
    assert_eq!(
        source::functions(&file),
        [
            Function {
                name: "a".into(),
                lines: 3
            },
            Function {
                name: "T::b".into(),
                lines: 4
            },
        ]
    );
}

#[test]
fn the_whole_crate_is_read_through_its_modules_and_test_modules_are_left_out() {
    let modules = source::shipped();
    let names: Vec<String> = modules.iter().map(Module::name).collect();
    for expected in [
        "crates/supervisor/src/runtime/core/mod.rs",
        "crates/supervisor/src/runtime/driver.rs",
        "crates/supervisor/src/bridges/argus.rs",
        "machines/src/campaign.rs",
        "src/main.rs",
        "src/demo.rs",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not read: {names:?}"
        );
    }
    assert!(
        !names.iter().any(|n| n.ends_with("/tests.rs")),
        "a test module was read: {names:?}"
    );
    // `Core` sits below a `#[cfg(test)] mod tests;` line in its file: it is measured all the same.
    let core = modules
        .iter()
        .find(|m| m.name() == "crates/supervisor/src/runtime/core/mod.rs")
        .expect("core");
    assert!(source::functions(&core.file)
        .iter()
        .any(|f| f.name == "Core::handle"));
}

#[test]
fn no_function_in_the_shipped_code_is_over_80_lines() {
    let long: Vec<String> = source::shipped()
        .iter()
        .flat_map(|m| {
            source::functions(&m.file)
                .into_iter()
                .filter(|f| f.lines > 80)
                .map(move |f| format!("{}: {} ({} lines)", m.name(), f.name, f.lines))
        })
        .collect();
    assert!(
        long.is_empty(),
        "functions over 80 lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_driver_is_one_file_of_at_most_150_lines() {
    // The whole pump (the loop over the inbox, the stream and the core's next instant, and the
    // effects it performs) is `driver.rs`; nothing else has a `Driver` function.
    let modules = source::shipped();
    let with_driver: Vec<String> = modules
        .iter()
        .filter(|m| {
            source::functions(&m.file)
                .iter()
                .any(|f| f.name.starts_with("Driver::"))
        })
        .map(Module::name)
        .collect();
    assert_eq!(with_driver, ["crates/supervisor/src/runtime/driver.rs"]);
    let driver = modules
        .iter()
        .find(|m| m.name() == "crates/supervisor/src/runtime/driver.rs")
        .expect("the driver");
    let text = std::fs::read_to_string(&driver.path).expect("the driver's text");
    let lines = text.lines().count();
    assert!(lines <= 150, "the driver is {lines} lines");
    // It performs; it does not decide: no pacing, budget or cap of its own.
    for word in ["Due::", ".hot", "max_streams", "needs_log", "stats."] {
        assert!(!text.contains(word), "the driver reads `{word}`");
    }
}

/// Paths that start `crate::a2a` or `crate::metrics`, in `use` trees and in code.
#[derive(Default)]
struct Upward(Vec<String>);

fn upward(segments: &[String]) -> bool {
    segments.first().is_some_and(|s| s == "crate")
        && segments
            .get(1)
            .is_some_and(|s| s == "a2a" || s == "metrics")
}

impl<'ast> Visit<'ast> for Upward {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if upward(&segs) {
            self.0.push(segs.join("::"));
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for at in source::use_paths(u) {
            if upward(&at) {
                self.0.push(at.join("::"));
            }
        }
    }
}

#[test]
fn nothing_in_the_runtime_or_the_bridges_imports_the_a2a_client_or_metrics() {
    let modules = source::shipped();
    let mut found = vec![];
    for dir in [
        "crates/supervisor/src/runtime/",
        "crates/supervisor/src/bridges/",
    ] {
        let names = under(&modules, dir);
        for m in modules.iter().filter(|m| names.contains(&m.name())) {
            let mut v = Upward::default();
            v.visit_file(&m.file);
            found.extend(v.0.into_iter().map(|p| format!("{}: {p}", m.name())));
        }
    }
    assert!(found.is_empty(), "imports up:\n{}", found.join("\n"));
    // The scanner sees both shapes.
    let mut v = Upward::default();
    v.visit_file(
        &source::parse("use crate::{x, a2a::Client};\nfn f() { crate::metrics::bump(); }")
            .expect("parses"),
    );
    assert_eq!(v.0, ["crate::a2a::Client", "crate::metrics::bump"]);
}
