//! Issue 43's size targets, checked on the source: no function over 80 lines in `runtime/` or
//! `bridges/`, the driver's loop at most 150 lines, and no import from the
//! A2A client or `metrics` up into the runtime or the bridges.

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/supervisor/src")
}

/// Every `.rs` file under `dir`, unit-test files (`tests.rs`) left out.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("source dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code before the file's unit tests.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("source");
    text.split("#[cfg(test)]").next().unwrap_or("").to_string()
}

/// Each function's name and length in lines: from its `fn` line to the `}` at its indentation.
fn functions(code: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = vec![];
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let Some(at) = t.find("fn ") else { continue };
        let head = &t[..at];
        let is_fn = head
            .split_whitespace()
            .all(|w| w == "pub" || w.starts_with("pub(") || w == "async" || w == "const");
        if !is_fn || t.ends_with(';') {
            continue;
        }
        let name: String = t[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i..].iter().position(|l| l.trim_end() == close) {
            out.push((name, end + 1));
        }
    }
    out
}

#[test]
fn the_measure_counts_a_function_from_its_head_to_its_closing_brace() {
    let code =
        "fn a() {\n    x();\n}\n    pub(crate) async fn b(\n        y: u8,\n    ) {\n    }\n";
    assert_eq!(
        functions(code),
        [("a".to_string(), 3), ("b".to_string(), 4)]
    );
}

#[test]
fn no_function_in_the_runtime_or_the_bridges_is_over_80_lines() {
    let mut long = vec![];
    for dir in ["runtime", "bridges"] {
        for path in sources(&src().join(dir)) {
            for (name, len) in functions(&code(&path)) {
                if len > 80 {
                    long.push(format!("{}: {name} ({len} lines)", path.display()));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over 80 lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_drivers_loop_is_at_most_150_lines() {
    // The loop: the inbox and the heartbeat (`run`, `take`, `tick`), the event log's first read
    // (`resume`), and the pump that hands the core an input and performs its `Ready`s.
    let path = src().join("runtime/driver/mod.rs");
    let loop_fns = ["run", "take", "tick", "resume", "pump", "perform"];
    let found: Vec<(String, usize)> = functions(&code(&path))
        .into_iter()
        .filter(|(name, _)| loop_fns.contains(&name.as_str()))
        .collect();
    assert_eq!(
        found.len(),
        loop_fns.len(),
        "the loop's functions: {found:?}"
    );
    let lines: usize = found.iter().map(|(_, n)| n).sum();
    assert!(
        lines <= 150,
        "the driver's loop is {lines} lines: {found:?}"
    );
}

#[test]
fn nothing_in_the_runtime_or_the_bridges_imports_the_a2a_client_or_metrics() {
    let mut found = vec![];
    for dir in ["runtime", "bridges"] {
        for path in sources(&src().join(dir)) {
            for (n, line) in code(&path).lines().enumerate() {
                let l = line.split("//").next().unwrap_or("");
                if l.contains("crate::a2a") || l.contains("crate::metrics") {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "imports up:\n{}", found.join("\n"));
}
