//! Issue 43's rule, checked: no string comparison steers control flow in `runtime/`, `verbs/`,
//! `api/` or `bridges/`. Outcomes, refusal codes, who asked a question, a bridge's status and the
//! remote's discovery are enums; text from outside is parsed into a type once, at the edge. The
//! edge parsers that still compare text are listed here, each with why; anything else fails.

const DIRS: [&str; 4] = ["runtime", "verbs", "api", "bridges"];

/// (file, the comparison, why it stays).
const EDGE: &[(&str, &str, &str)] = &[
    (
        "verbs/mod.rs",
        r#"path == ".""#,
        "serde_path_to_error's name for the whole request body",
    ),
    (
        "bridges/decisions.rs",
        r#"x == "json""#,
        "file names listed from Argus's decisions directory",
    ),
    (
        "bridges/link/board.rs",
        r#"!= Some("json")"#,
        "file names listed from a directory",
    ),
];

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
    let mut edges_seen = vec![false; EDGE.len()];
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
                    match EDGE
                        .iter()
                        .position(|(f, c, _)| rel == *f && line.contains(c))
                    {
                        Some(i) => edges_seen[i] = true,
                        None => found.push(format!("{rel}:{}: {}", n + 1, line.trim())),
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "string comparisons steering control flow:\n{}",
        found.join("\n")
    );
    // An edge that no longer compares text leaves the list.
    for (seen, (f, c, _)) in edges_seen.iter().zip(EDGE) {
        assert!(seen, "{f}: `{c}` is gone: remove it from EDGE");
    }
}
