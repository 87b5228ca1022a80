//! Issue 43's rule, checked on the source as `syn` reads it: no string comparison steers control
//! flow in `runtime/`, `api/` (and its `verbs/`) or `bridges/`. Outcomes, refusal codes, who asked a
//! question, a bridge's status and the remote's discovery are enums, verbs are the machine's
//! `Verb`; text from outside is parsed into a type once, at the edge (and a file's kind by its name
//! is the store's: `store::is_json_file`). Test code is left out by its attribute.

use super::source;

const DIRS: [&str; 3] = [
    "crates/supervisor/src/runtime/",
    "crates/supervisor/src/api/",
    "crates/supervisor/src/bridges/",
];

fn found(code: &str) -> Vec<(usize, String)> {
    source::text_comparisons(&source::parse(code).expect("parses"))
}

#[test]
fn no_string_comparison_steers_control_flow_in_the_runtime_verbs_api_or_bridges() {
    let mut out = vec![];
    for m in source::crate_modules(&source::workspace().join("crates/supervisor/src/lib.rs")) {
        let name = m.name();
        if !DIRS.iter().any(|d| name.starts_with(d)) {
            continue;
        }
        for (line, what) in source::text_comparisons(&m.file) {
            out.push(format!("{name}:{line}: {what}"));
        }
    }
    assert!(
        out.is_empty(),
        "string comparisons steering control flow:\n{}",
        out.join("\n")
    );
}

#[test]
fn the_scanner_sees_each_kind_of_text_comparison_and_not_a_comment_or_a_test() {
    for code in [
        r#"fn f() { if outcome == "done" {} }"#,
        r#"fn f() { if code != "stale_epoch" {} }"#,
        r#"fn f() { if ext == Some("json") {} }"#,
        r#"fn f() { if name.starts_with("degraded") {} }"#,
        r#"fn f() { if matches!(verb, "submit" | "cancel") {} }"#,
        r#"fn f() { match v { "accept" => 1, _ => 2 }; }"#,
        r#"fn f() { match (a, b) { (Some(x), "ok") => 1, _ => 2 }; }"#,
        r#"fn f() { if let Some("x") = v {} }"#,
        r#"impl T { fn f(&self) { let _ = matches!(self.0.as_deref(), Some("y")); } }"#,
    ] {
        assert_eq!(found(code).len(), 1, "missed: {code}");
    }
    for code in [
        r#"fn f() { /* if outcome == "done" */ }"#,
        r#"fn f() { let name = "done"; }"#,
        r#"fn f() { let _ = format!("{verb}: done"); }"#,
        r#"#[cfg(test)] mod tests { fn f() { assert!(x == "y"); if a == "b" {} } }"#,
        r#"#[test] fn t() { if a == "b" {} }"#,
    ] {
        assert!(
            found(code).is_empty(),
            "not a comparison in shipped code: {code}"
        );
    }
}
