//! The README's "Five minutes on your machine", run as a newcomer runs it: each terminal's block
//! pasted whole into a fresh shell, with the built binary on the PATH (as the README's preamble
//! says), checking what each `# ⇒` comment says the line prints, in order. A change that breaks
//! the walk breaks this test; so does a block that needs its reader to wait between lines.
//!
//! Only the walk's state root (`/tmp/walk`) and its two ports are replaced, by a fresh directory
//! and free ports, so that runs cannot collide; every other word runs as written.

use super::serve_loop::{tmp, wait_for};
use crate::support::procs::{free_port, BIN};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

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
    // Bounded, so that a walk that waits forever (an attempt that never ends) fails instead.
    let mut c = Command::new("timeout");
    c.args(["120", "bash", "-c", script])
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

/// A terminal left running (the remote, the daemon), in a process group of its own: at the end
/// the whole group goes, the shell and what it started. (Killing the shell alone left the sim and
/// `serve` it had started running after the test.)
struct Terminal(std::process::Child);

impl Drop for Terminal {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.wait();
    }
}

/// Where `expect` (its `…` standing for anything) ends in `out`, if `out` says it.
fn says(out: &str, expect: &str) -> Option<usize> {
    let mut at = 0;
    for part in expect.split('…') {
        at += out[at..].find(part.trim())? + part.trim().len();
    }
    Some(at)
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
    let mut background: Vec<Terminal> = vec![];
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
                .process_group(0)
                .spawn()
                .expect("a terminal");
            background.push(Terminal(child));
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
        // A foreground terminal, pasted whole: one shell runs the block (stopping at the first line
        // that fails, where a newcomer would see a refusal), and each `# ⇒` is found in what it
        // printed, in order. Nothing is retried: a line run before its time fails the walk.
        let script: Vec<String> = block.iter().map(|l| local(&l.text)).collect();
        let out = shell(&format!("set -e\n{}", script.join("\n")))
            .output()
            .expect("a terminal");
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "terminal {} stopped (exit {:?}):\n{printed}\nterminal logs in {}",
            n + 1,
            out.status.code(),
            dir.display()
        );
        let mut at = 0;
        for line in block {
            let Some(expect) = line.expect.as_deref().map(&local) else {
                continue;
            };
            let Some(end) = says(&printed[at..], &expect) else {
                panic!(
                    "terminal {}: `{}` should print {expect:?}; the block printed:\n{printed}",
                    n + 1,
                    line.text
                );
            };
            at += end;
        }
    }
    drop(background);
    // Nothing the walk started outlives it: its remote and its daemon stop listening.
    wait_for("the walk's remote and daemon to be gone", || {
        [sim_port, serve_port]
            .iter()
            .all(|p| std::net::TcpStream::connect(("127.0.0.1", *p)).is_err())
    });
}
