//! Issue 43's rule, checked: no string comparison steers control flow in `runtime/`, `api/` (and
//! its `verbs/`) or `bridges/`. Outcomes, refusal codes, who asked a question, a bridge's status and the
//! remote's discovery are enums, verbs are the machine's `Verb`; text from outside is parsed into a
//! type once, at the edge (and a file's kind by its name is the store's: `store::is_json_file`).

// The verbs live in `api/verbs/`.
const DIRS: [&str; 3] = ["runtime", "api", "bridges"];

/// Whether a line compares text: `== "…"`, `!= "…"`, `== Some("…")`, `starts_with("…")`,
/// `ends_with("…")`, `matches!(x, "…")`, or a match arm on a literal (`"…" =>`, `Some("…") =>`).
fn compares_text(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    let t = code.trim_start();
    [
        "== \"",
        "!= \"",
        "== Some(\"",
        "!= Some(\"",
        "starts_with(\"",
        "ends_with(\"",
    ]
    .iter()
    .any(|p| code.contains(p))
        || (code.contains("matches!(") && code.contains(", \""))
        || ((t.starts_with('"') || t.starts_with("Some(\"")) && code.contains("=>"))
}

#[test]
fn no_string_comparison_steers_control_flow_in_the_runtime_verbs_api_or_bridges() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/supervisor/src");
    let mut found = vec![];
    for dir in DIRS {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("source dir").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                // A `tests.rs` beside a module is its unit tests.
                if path.extension().and_then(|x| x.to_str()) != Some("rs")
                    || path.file_name().is_some_and(|n| n == "tests.rs")
                {
                    continue;
                }
                let rel = path
                    .strip_prefix(&root)
                    .expect("under src")
                    .display()
                    .to_string();
                let text = std::fs::read_to_string(&path).expect("source");
                // Unit tests compare text freely: the rule is for what the code does.
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for (n, line) in code.lines().enumerate() {
                    if !compares_text(line) {
                        continue;
                    }
                    found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "string comparisons steering control flow:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scanner_sees_each_kind_of_text_comparison_and_not_a_comment() {
    for line in [
        r#"    if outcome == "done" {"#,
        r#"    if code != "stale_epoch" {"#,
        r#"    if ext == Some("json") {"#,
        r#"    if name.starts_with("degraded") {"#,
        r#"    if matches!(verb, "submit" | "cancel") {"#,
        r#"        "accept" => Verdict::Accepted,"#,
    ] {
        assert!(compares_text(line), "missed: {line}");
    }
    for line in [
        r#"    // if outcome == "done""#,
        r#"    let name = "done";"#,
        r#"    format!("{verb}: done")"#,
    ] {
        assert!(!compares_text(line), "not a comparison: {line}");
    }
}
