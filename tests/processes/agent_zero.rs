//! Issue 53: today's OpenTraining for real — the supervisor against Agent Zero's own A2A server
//! (`tests/support/agent_zero.rs`: the vendored Agent Zero, real but for the model behind it,
//! which is a scripted double), through the shipped binary: `probe`, `qualify`, `serve` and the
//! CLI. Judged by what Agent Zero's own task store and log say, and by what the operator is told.

use crate::support::agent_zero::AgentZero;
use crate::support::procs::BIN;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("argus-a0-{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&d).expect("dir");
    d
}

/// A command of the shipped binary with a clean environment: `OPENTRAINING_A2A_URL` is Agent
/// Zero's A2A URL (the token in its path), and no `OPENTRAINING_A2A_TOKEN`.
fn binary(a0: &AgentZero) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("OPENTRAINING_A2A_URL", a0.url());
    cmd
}

/// Run it; the exit code and everything it printed (which must never hold the token).
fn run(a0: &AgentZero, mut cmd: Command) -> (i32, String) {
    let out = cmd.output().expect("run the binary");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!said.contains(&a0.token()), "the token was printed: {said}");
    (out.status.code().unwrap_or(-1), said)
}

#[test]
fn agent_zero_is_probed_and_qualified_as_it_is_with_its_token_in_the_url_path() {
    let dir = tmp("probe");
    let a0 = AgentZero::start(&dir);
    let home = dir.join("state");

    // probe: the token is named as riding in the URL's path, never printed.
    let mut probe = binary(&a0);
    probe.args(["probe", "--allow-insecure-loopback", "--json", "--home"]);
    probe.arg(&home);
    let (code, said) = run(&a0, probe);
    let report: Value = serde_json::from_str(&said).unwrap_or_else(|_| panic!("{said}"));
    assert_eq!(code, 0, "{said}");
    assert_eq!(report["auth"], "url_path", "{report}");
    let mut probe = binary(&a0);
    probe.args(["probe", "--allow-insecure-loopback", "--home"]);
    probe.arg(&home);
    let (_, text) = run(&a0, probe);
    assert!(
        text.contains("token          a token in the URL's path"),
        "{text}"
    );

    // qualify: observer only (no campaign-control extension); the path's token is proven by a
    // call without it, which Agent Zero refuses (401), and the report says so.
    let mut qualify = binary(&a0);
    qualify.args(["qualify", "--allow-insecure-loopback", "--json", "--home"]);
    qualify.arg(&home);
    let (code, said) = run(&a0, qualify);
    let report: Value = serde_json::from_str(&said).unwrap_or_else(|_| panic!("{said}"));
    assert_eq!(code, 3, "observer only: {said}");
    let check = |id: &str| {
        report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no check {id}: {report}"))
    };
    let anonymous = check("auth.anonymous");
    assert_eq!(anonymous["grade"], "PASS", "{anonymous}");
    assert!(
        anonymous["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("the URL's path without its t-… segment")
                && e.contains("refused (401/403)")),
        "{anonymous}"
    );
    assert!(
        report["auth_mode"]
            .as_str()
            .is_some_and(|m| m.starts_with("a token in the URL's path")),
        "{report}"
    );
    assert_ne!(
        report["auth_mode"],
        "none: the remote answers without credentials"
    );
    // Nothing was written to Agent Zero: it started no task.
    assert_eq!(a0.tasks_started(), 0, "{}", a0.log());
}
