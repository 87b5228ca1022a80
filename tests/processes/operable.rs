//! Issue 34: operable like the daemons people run — readiness that says why, metrics that match
//! what the remote saw, logs that follow `RUST_LOG`, configuration declared once (`serve --help`),
//! a CLI with exit codes, encoded ids and times for people, and input errors that name the field.
//! Every test starts the shipped binary and judges it from outside.

use super::serve_loop::{audit, serve, sim, tmp, wait_for, Daemon, API_TOKEN};
use crate::support::procs::{self, free_port, raw, BIN};
use serde_json::{json, Value};
use std::process::Command;

fn get(d: &Daemon, path: &str, token: Option<&str>) -> (u16, String) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
    raw("GET", &d.api(path), &headers, None).unwrap_or((0, String::new()))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The Dockerfile's HEALTHCHECK command, run as Docker runs it (`/bin/sh -c`), against a daemon
/// listening on `port` (the image's `ARGUS_SUPERVISOR_LISTEN`): whether it passed.
fn docker_healthcheck(port: u16) -> bool {
    let dockerfile = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile"))
        .expect("Dockerfile");
    let check = dockerfile
        .split("HEALTHCHECK")
        .nth(1)
        .and_then(|h| h.split("CMD ").nth(1))
        .and_then(|c| c.lines().next())
        .expect("a HEALTHCHECK CMD");
    Command::new("sh")
        .args(["-c", check])
        .env("ARGUS_SUPERVISOR_LISTEN", format!("0.0.0.0:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("sh")
        .success()
}

#[test]
fn health_is_ready_only_when_it_is_and_says_why_not_to_anyone_and_more_to_the_token() {
    let dir = tmp("ready");
    // A remote that is not there: the daemon lives, and is not ready.
    let nowhere = format!("http://127.0.0.1:{}/", free_port());
    let d = serve(&nowhere, &dir.join("a"), &[]);
    wait_for("live", || get(&d, "/health/live", None).0 == 200);
    let (code, body) = get(&d, "/health", None);
    assert_eq!(code, 503, "{body}");
    // Without the token: the status and the reasons' classes, nothing else.
    assert_eq!(
        json_of(&body),
        json!({"status": "unready", "reasons": ["remote_undiscovered"]})
    );
    let (code, body) = get(&d, "/health", Some(API_TOKEN));
    assert_eq!(code, 503);
    let h = json_of(&body);
    assert_eq!(h["reasons"][0]["class"], "remote_undiscovered", "{h}");
    assert!(
        h["controller_id"].is_string() && h["remote"].is_object(),
        "{h}"
    );
    drop(d);

    // A remote that is there: ready; a disk that refuses writes: not ready, and why.
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let flag = dir.join("disk-full");
    let d = serve(
        &url,
        &dir.join("b"),
        &[(
            "ARGUS_SUPERVISOR_TEST_FAIL_WRITES_FLAG",
            flag.display().to_string(),
        )],
    );
    wait_for("ready", || get(&d, "/health", None).0 == 200);
    assert_eq!(
        json_of(&get(&d, "/health", None).1),
        json!({"status": "ok", "reasons": []})
    );
    assert!(
        docker_healthcheck(d.port),
        "the image's HEALTHCHECK fails a ready daemon"
    );
    std::fs::write(&flag, b"").expect("flag");
    let (code, body) = get(&d, "/health", None);
    assert_eq!(
        (code, json_of(&body)["reasons"].clone()),
        (503, json!(["store_unwritable"]))
    );
    assert!(
        !docker_healthcheck(d.port),
        "the image's HEALTHCHECK passes a daemon that cannot write"
    );
    std::fs::remove_file(&flag).expect("flag");
    assert_eq!(get(&d, "/health", None).0, 200);
    drop(d);

    // Supervision off: not ready, and said.
    let d = serve(
        &url,
        &dir.join("c"),
        &[("ARGUS_SUPERVISOR_ENABLED", "0".into())],
    );
    wait_for("live", || get(&d, "/health/live", None).0 == 200);
    let (code, body) = get(&d, "/health", None);
    assert_eq!(code, 503);
    assert!(
        json_of(&body)["reasons"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("supervision_off"))),
        "{body}"
    );
}

/// The value of one sample line of a Prometheus text exposition (0 when absent).
pub(crate) fn sample(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

#[test]
fn metrics_match_what_the_remote_saw() {
    let dir = tmp("metrics");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve(&url, &dir.join("state"), &[]);
    d.wait_health(|h| h["status"] == "ok");
    d.observe_and_claim("m1", "train");
    assert_eq!(
        d.act("m1", "submit", json!({"message": "attempt 1"})).0,
        200
    );
    d.wait_state("m1", "remote_terminal_local_pending");
    assert_eq!(get(&d, "/metrics", None).0, 401, "metrics need the token");
    let (code, text) = get(&d, "/metrics", Some(API_TOKEN));
    assert_eq!(code, 200, "{text}");
    // Read after the scrape: the remote has seen at least every call counted.
    let seen = audit(&url);
    let count = |method: &str| {
        seen["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["method"] == method)
            .count() as u64
    };
    let calls = |m: &str| {
        sample(
            &text,
            &format!("argus_supervisor_remote_calls_total{{method=\"{m}\",outcome=\"ok\"}}"),
        )
    };
    assert_eq!(calls("submit"), count("message/send"), "{text}");
    assert_eq!(
        calls("claim_control"),
        count("campaign/claim_control"),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "argus_supervisor_remote_writes_total{kind=\"submit\"}"
        ),
        1,
        "{text}"
    );
    let polls = sample(&text, "argus_supervisor_polls_total");
    assert!(
        polls >= 1 && polls <= count("tasks/get"),
        "polls {polls}: {text}"
    );
    assert_eq!(
        sample(
            &text,
            "argus_supervisor_campaigns{state=\"remote_terminal_local_pending\"}"
        ),
        1,
        "{text}"
    );
    assert!(
        sample(
            &text,
            "argus_supervisor_significant_events_total{class=\"ATTEMPT_COMPLETED\"}"
        ) >= 1,
        "{text}"
    );
    assert!(
        text.contains("# TYPE argus_supervisor_lease_losses counter"),
        "{text}"
    );
    assert!(
        text.contains("argus_supervisor_store_failures_total 0"),
        "{text}"
    );
}

#[test]
fn logs_follow_rust_log_and_log_json_makes_every_line_json() {
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let dir = tmp("logs");
    let run = |name: &str, extra: &[(&str, &str)], args: &[&str]| -> String {
        let log = dir.join(format!("{name}.log"));
        let port = free_port();
        let mut cmd = procs::serve_command(
            &url,
            super::serve_loop::SIM_TOKEN,
            API_TOKEN,
            &dir.join(name),
            port,
        );
        cmd.arg("--allow-insecure-loopback")
            .args(args)
            .envs(extra.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"));
        let _p = procs::Kill(cmd.spawn().expect("serve"));
        let health = format!("http://127.0.0.1:{port}/api/plugins/argus-supervisor/health");
        wait_for("ready", || {
            raw("GET", &health, &[], None).is_some_and(|(c, _)| c == 200)
        });
        drop(_p);
        std::fs::read_to_string(&log).unwrap_or_default()
    };
    let quiet = run("warn", &[("RUST_LOG", "warn")], &[]);
    assert!(
        !quiet.contains("INFO"),
        "RUST_LOG=warn still logs INFO:\n{quiet}"
    );
    let plain = run("plain", &[], &[]);
    assert!(
        plain.contains("INFO") && plain.contains("serving the API"),
        "{plain}"
    );
    assert!(
        !plain.contains('\u{1b}'),
        "colour went into a file:\n{plain}"
    );
    let lines = run("json", &[("RUST_LOG", "debug")], &["--log-json"]);
    assert!(lines.lines().count() > 3, "{lines}");
    for l in lines.lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}"));
        assert!(v["level"].is_string(), "{l}");
    }
    assert!(
        lines.contains("\"DEBUG\""),
        "RUST_LOG=debug logged no DEBUG line"
    );
    let bad = Command::new(BIN)
        .args(["serve", "--log-level", "no such=level=x"])
        .env("OPENTRAINING_A2A_URL", &url)
        .env("ARGUS_SUPERVISOR_API_TOKEN", "t")
        .args(["--allow-insecure-loopback", "--home"])
        .arg(dir.join("bad"))
        .output()
        .expect("serve");
    assert_eq!(
        bad.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

fn cli(url: &str, token: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .arg("campaigns")
        .args(args)
        .env_clear()
        .env("ARGUS_SUPERVISOR_URL", url)
        .env("ARGUS_SUPERVISOR_API_TOKEN", token)
        .output()
        .expect("cli");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn the_cli_has_exit_codes_encodes_ids_and_shows_times_for_people() {
    let dir = tmp("cli34");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve(&url, &dir.join("state"), &[]);
    d.wait_health(|h| h["status"] == "ok");
    let base = format!("http://127.0.0.1:{}", d.port);
    // The URL comes from ARGUS_SUPERVISOR_URL; 0 done.
    let (code, out) = cli(&base, API_TOKEN, &["observe", "t1", "--objective", "train"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(cli(&base, API_TOKEN, &["claim", "t1"]).0, 0);
    // 1 refused: an id the API refuses (and, being one path segment, never misrouted).
    let (code, out) = cli(
        &base,
        API_TOKEN,
        &["observe", "x?y", "--objective", "train"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("campaign id") && !out.contains("method_not_allowed"),
        "an id is one path segment: {out}"
    );
    // 2 usage (clap's own), 5 not found, 4 unauthorized, 3 unreachable (naming where it looked).
    assert_eq!(cli(&base, API_TOKEN, &["frobnicate", "t1"]).0, 2);
    let (code, out) = cli(&base, API_TOKEN, &["show", "nope"]);
    assert_eq!(code, 5, "{out}");
    assert_eq!(cli(&base, "wrong", &["list"]).0, 4);
    let nowhere = format!("http://127.0.0.1:{}", free_port());
    let (code, out) = cli(&nowhere, API_TOKEN, &["list"]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains(&nowhere), "{out}");
    // Times for people: relative, with the absolute time beside.
    let (_, show) = cli(&base, API_TOKEN, &["show", "t1"]);
    assert!(
        show.contains("expires in ") && show.contains("Z)"),
        "{show}"
    );
    let (code, feed) = cli(&base, API_TOKEN, &["messages", "t1"]);
    assert_eq!(code, 0);
    let first = feed.lines().next().unwrap_or_default();
    assert!(
        (first.contains(" ago (") || first.starts_with("just now (")) && !first.contains("in 0s"),
        "{feed}"
    );
    let (_, events) = cli(&base, API_TOKEN, &["events", "t1"]);
    assert!(
        events.contains("CONTROL_CHANGED") && !events.contains("{\""),
        "readable by default: {events}"
    );
    let (_, raw_events) = cli(&base, API_TOKEN, &["--json", "events", "t1"]);
    assert!(json_of(&raw_events)["events"].is_array(), "{raw_events}");
}

#[test]
fn configuration_is_declared_once_and_the_readme_lists_what_serve_help_lists() {
    let help = Command::new(BIN)
        .args(["serve", "--help"])
        .env_clear()
        .env("OPENTRAINING_A2A_TOKEN", "secret-value-never-shown")
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(!help.contains("secret-value-never-shown"), "{help}");
    assert!(
        help.contains("[now: set] [env: OPENTRAINING_A2A_TOKEN]"),
        "{help}"
    );
    assert!(
        help.contains("[now: unset] [env: ARGUS_SUPERVISOR_API_TOKEN]"),
        "{help}"
    );
    let in_help: std::collections::BTreeSet<String> = help
        .split("[env: ")
        .skip(1)
        .filter_map(|r| r.split(']').next().map(str::to_string))
        .collect();
    let section = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/configuration.md"
    ))
    .expect("docs/configuration.md");
    let in_readme: std::collections::BTreeSet<String> = section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('`').nth(1).map(str::to_string))
        .collect();
    assert_eq!(
        in_readme, in_help,
        "docs/configuration.md's table and `serve --help` differ"
    );
    // A secret on the command line is refused before anything starts.
    let out = Command::new(BIN)
        .args(["serve", "--api-token", "x"])
        .env_clear()
        .output()
        .expect("serve");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("environment only"));
    let version = Command::new(BIN)
        .arg("--version")
        .output()
        .expect("version");
    assert!(String::from_utf8_lossy(&version.stdout).contains("(commit "));
}

/// Completion completes past the first word — a subcommand, a verb and a flag — in bash, zsh and
/// fish: each shell's own completion, run in a pseudo-terminal on the script `completions` prints
/// (completest-pty, clap_complete's own test tool), the screen read back. clap_complete's bash
/// script completes nothing past the first word of a hyphenated binary name
/// (clap-rs/clap#6421): `completions` respells it, and this pins it.
#[test]
fn shell_completion_completes_subcommands_verbs_and_flags() {
    use completest_pty::{BashRuntime, FishRuntime, Runtime, Term, ZshRuntime};
    let term = Term::new();
    let bin_root = std::path::Path::new(BIN)
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    let cases: [(&str, &str); 4] = [
        ("argus-supervisor camp\t", "campaigns"),
        ("argus-supervisor campaigns sh\t", "show"),
        ("argus-supervisor serve --hel\t", "--help"),
        ("argus-supervisor campaigns show --js\t", "--json"),
    ];
    for shell in ["bash", "zsh", "fish"] {
        let home = tmp(&format!("completest-{shell}"));
        let mut runtime: Box<dyn Runtime> = match shell {
            "bash" => Box::new(BashRuntime::new(bin_root.clone(), home).expect("bash")),
            "zsh" => Box::new(ZshRuntime::new(bin_root.clone(), home).expect("zsh")),
            _ => Box::new(FishRuntime::new(bin_root.clone(), home).expect("fish")),
        };
        let out = Command::new(BIN)
            .args(["completions", shell])
            .output()
            .expect("completions");
        assert!(out.status.success(), "{shell}");
        runtime
            .register("argus-supervisor", &String::from_utf8_lossy(&out.stdout))
            .expect("register");
        for (typed, want) in cases {
            // completest-pty stops reading after 50-100 ms without output: on a loaded machine
            // the shell can pause that long before it completes, so a screen is asked for again
            // (at most five times) until the completion shows.
            let mut screen = String::new();
            for _ in 0..5 {
                screen = runtime.complete(typed, &term).expect("complete");
                if screen.contains(want) {
                    break;
                }
            }
            assert!(screen.contains(want), "{shell} `{typed}`: {screen}");
        }
    }
}

#[test]
fn serve_prints_urls_that_answer() {
    use std::io::BufRead;
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let dir = tmp("urls");
    let port = free_port();
    let mut child = procs::serve_command(&url, super::serve_loop::SIM_TOKEN, API_TOKEN, &dir, port)
        .arg("--allow-insecure-loopback")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    let out = child.stdout.take().expect("stdout");
    let _p = procs::Kill(child);
    let printed: Vec<String> = std::io::BufReader::new(out)
        .lines()
        .take(2)
        .map_while(Result::ok)
        .collect();
    let base = format!("http://127.0.0.1:{port}/api/plugins/argus-supervisor");
    assert_eq!(
        printed,
        [
            format!("panel   {base}/ui/"),
            format!("health  {base}/health")
        ]
    );
    for line in &printed {
        let target = line.split_whitespace().nth(1).unwrap_or_default();
        wait_for(target, || {
            raw("GET", target, &[], None).is_some_and(|(c, _)| c == 200 || c == 503)
        });
    }
    let (code, page) = raw("GET", &format!("{base}/ui/"), &[], None).expect("panel");
    assert_eq!(code, 200);
    assert!(page.contains("<title>argus-supervisor</title>"));
}

/// The inodes of the TCP sockets in LISTEN state on this machine (`/proc/net/tcp{,6}`).
fn tcp_listeners() -> std::collections::BTreeSet<String> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|t| {
            t.lines()
                .skip(1)
                .filter_map(|l| {
                    let cols: Vec<&str> = l.split_whitespace().collect();
                    (cols.get(3) == Some(&"0A")).then(|| cols.get(9).map(|i| i.to_string()))?
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The socket inodes process `pid` holds open.
fn sockets_of(pid: u32) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            l.to_string_lossy()
                .strip_prefix("socket:[")
                .and_then(|s| s.strip_suffix(']'))
                .map(str::to_string)
        })
        .collect()
}

fn curl_unix(socket: &std::path::Path, path: &str, token: Option<&str>) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-o", "-", "-w", "\n%{http_code}", "--unix-socket"])
        .arg(socket)
        .arg(format!(
            "http://localhost/api/plugins/argus-supervisor{path}"
        ));
    if let Some(t) = token {
        cmd.args(["-H", &format!("Authorization: Bearer {t}")]);
    }
    let out = String::from_utf8_lossy(&cmd.output().expect("curl").stdout).into_owned();
    let (body, code) = out.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

#[test]
fn on_a_unix_socket_there_is_no_tcp_listener_and_the_api_cli_and_panel_work() {
    use std::os::unix::fs::PermissionsExt;
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let home = tmp("unix");
    // serve on a socket under the state root, given no API token.
    let on_socket = || {
        procs::serve_command(&url, super::serve_loop::SIM_TOKEN, API_TOKEN, &home, 0)
            .arg("--allow-insecure-loopback")
            .env("ARGUS_SUPERVISOR_LISTEN", "unix:api.sock")
            .env_remove("ARGUS_SUPERVISOR_API_TOKEN")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("serve")
    };
    let child = on_socket();
    let pid = child.id();
    let _p = procs::Kill(child);
    let socket = home.join("api.sock");
    wait_for("the socket", || {
        curl_unix(&socket, "/health/live", None).0 == 200
    });
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    };
    assert_eq!(mode(&socket), 0o600, "the socket is its owner's only");
    // No token was given: serve made one, kept in the state root for local clients, 0600.
    let token_file = home.join("api-token");
    assert_eq!(mode(&token_file), 0o600);
    let token = std::fs::read_to_string(&token_file).expect("token");
    assert!(token.len() >= 32);
    assert_eq!(curl_unix(&socket, "/campaigns", None).0, 401);
    assert_eq!(curl_unix(&socket, "/campaigns", Some(&token)).0, 200);
    // The panel's assets, over the socket.
    let (code, page) = curl_unix(&socket, "/ui/", None);
    assert!(
        code == 200 && page.contains("<title>argus-supervisor</title>"),
        "{code}"
    );
    assert_eq!(curl_unix(&socket, "/ui/views/overview.svg", None).0, 200);
    // The CLI, over the socket.
    let target = format!("unix:{}", socket.display());
    for args in [
        &["observe", "u1", "--objective", "train"][..],
        &["claim", "u1"],
        &["submit", "u1", "--message", "attempt 1"],
    ] {
        let (code, out) = cli(&target, &token, args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    let (_, list) = cli(&target, &token, &["list"]);
    assert!(list.contains("u1"), "{list}");
    assert_eq!(cli(&target, "wrong", &["list"]).0, 4);
    // Nothing of the daemon's listens on TCP.
    let listening = tcp_listeners();
    let held = sockets_of(pid);
    assert!(!held.is_empty(), "the daemon's sockets are visible");
    assert!(
        held.is_disjoint(&listening),
        "the daemon holds a TCP listener: {:?}",
        held.intersection(&listening).collect::<Vec<_>>()
    );
    // A socket left behind by a daemon killed outright is taken over at the next start, and the
    // token kept in the state root stays the same.
    drop(_p);
    assert!(socket.exists(), "SIGKILL leaves the socket file");
    let _again = procs::Kill(on_socket());
    wait_for("the socket again", || {
        curl_unix(&socket, "/health/live", None).0 == 200
    });
    assert_eq!(curl_unix(&socket, "/campaigns/u1", Some(&token)).0, 200);
}
