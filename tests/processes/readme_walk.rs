//! The README's "Five minutes on your machine", run as a newcomer runs it: each terminal's block
//! in a fresh shell, with the built binary on the PATH (as the README's preamble says), checking
//! what each `# ⇒` comment says the line prints. A change that breaks the walk breaks this test.
//!
//! Only the walk's state root (`/tmp/walk`) and its two ports are replaced, by a fresh directory
//! and free ports, so that runs cannot collide; every other word runs as written.

use super::serve_loop::{tmp, wait_for};
use crate::support::procs::{free_port, Kill, BIN};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One logical line of a block (continuations joined) and what its `# ⇒` comment says it prints.
struct Line {
    text: String,
    expect: Option<String>,
}

/// The walk's blocks, in order, from the README's section.
fn walk() -> Vec<Vec<Line>> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README");
    let start = readme
        .find("## Five minutes on your machine")
        .expect("the walk's section");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut blocks = vec![];
    let mut rest = section;
    while let Some(open) = rest.find("```sh\n") {
        let body = &rest[open + 6..];
        let close = body.find("```").expect("a closed block");
        let mut lines: Vec<Line> = vec![];
        let mut pending = String::new();
        for raw in body[..close].lines() {
            pending.push_str(raw.trim_end_matches('\\'));
            if raw.ends_with('\\') {
                continue;
            }
            let text = std::mem::take(&mut pending);
            let expect = text.split_once("# ⇒ ").map(|(_, e)| e.trim().to_string());
            lines.push(Line { text, expect });
        }
        blocks.push(lines);
        rest = &body[close + 3..];
    }
    blocks
}

/// A shell as a fresh terminal gets it: the binary on the PATH, nothing of ours in the
/// environment, the checkout as its directory.
fn shell(script: &str) -> Command {
    let bin_dir = Path::new(BIN).parent().expect("the binary's directory");
    let mut c = Command::new("bash");
    c.args(["-c", script])
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", tmp("walk-home"))
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Reads that may be repeated until the walk's state shows what the README says.
fn is_read(line: &str) -> bool {
    [
        "campaigns show",
        "campaigns messages",
        "campaigns events",
        "campaigns list",
    ]
    .iter()
    .any(|r| line.contains(r))
}

fn says(out: &str, expect: &str) -> bool {
    let mut at = 0;
    expect
        .split('…')
        .all(|part| match out[at..].find(part.trim()) {
            Some(i) => {
                at += i + part.trim().len();
                true
            }
            None => false,
        })
}

#[test]
fn the_readmes_five_minute_walk_runs_as_written() {
    let dir = tmp("readme-walk");
    let home = dir.join("walk");
    let (sim_port, serve_port) = (free_port(), free_port());
    let local = |s: &str| {
        s.replace("/tmp/walk", &home.display().to_string())
            .replace("127.0.0.1:8790", &format!("127.0.0.1:{sim_port}"))
            .replace("127.0.0.1:8787", &format!("127.0.0.1:{serve_port}"))
    };
    let blocks = walk();
    assert_eq!(blocks.len(), 4, "the walk's four terminals");
    let mut background: Vec<Kill> = vec![];
    for (n, block) in blocks.iter().enumerate() {
        let last = block.last().map(|l| l.text.as_str()).unwrap_or("");
        // A terminal whose block ends in a long-running command (the remote, the daemon) stays
        // open; the walk goes on once it listens.
        if last.starts_with("argus-supervisor sim") || last.starts_with("argus-supervisor serve") {
            let script: Vec<String> = block.iter().map(|l| local(&l.text)).collect();
            let log =
                std::fs::File::create(dir.join(format!("terminal-{}.log", n + 1))).expect("log");
            let child = shell(&script.join("\n"))
                .stdout(Stdio::from(log.try_clone().expect("log")))
                .stderr(Stdio::from(log))
                .spawn()
                .expect("a terminal");
            background.push(Kill(child));
            let port = if last.contains("sim") {
                sim_port
            } else {
                serve_port
            };
            wait_for(&format!("terminal {} to listen", n + 1), || {
                std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            });
            continue;
        }
        // A foreground terminal: each line in the shell the block has built so far (its exports).
        let mut exports = String::new();
        for line in block {
            let text = local(&line.text);
            if text.starts_with("export ") {
                exports.push_str(&text);
                exports.push('\n');
                continue;
            }
            let deadline =
                Instant::now() + Duration::from_secs(if is_read(&text) { 30 } else { 0 });
            loop {
                let out = shell(&format!("{exports}{text}")).output().expect("a line");
                let printed = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                let ok = out.status.success()
                    && line
                        .expect
                        .as_deref()
                        .is_none_or(|e| says(&printed, &local(e)));
                if ok {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "terminal {}: `{}` printed (exit {:?}):\n{printed}\nexpected: {:?}\nterminal logs in {}",
                    n + 1,
                    line.text,
                    out.status.code(),
                    line.expect,
                    dir.display()
                );
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
    drop(background);
}
