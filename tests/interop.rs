//! Interoperability against real A2A servers from PyPI, each run as a child process on a free
//! loopback port: fasta2a 0.5.0 (what Agent Zero runs), fasta2a 2.1.1, and the official a2a-sdk
//! 1.3.0 served both 0.3-compatible and as 1.0. The servers are small echo agents of ours
//! (`tests/interop/servers/`); for fasta2a 2.1.1 and a2a-sdk the campaign-control extension is served
//! in front of the framework's dispatcher, so our `message/send` / `SendMessage` encoding is parsed
//! by two independent server stacks.
//!
//! The venvs come from `scripts/test.sh` (`ARGUS_INTEROP_VENVS`). Without them these tests fail with
//! a message saying so, rather than passing without having run.

#[path = "support/mod.rs"]
mod support;
use support::procs;

use argus_machines::RemoteState;
use argus_supervisor_lib::a2a::card::Dialect;
use argus_supervisor_lib::a2a::{A2aClient, HttpConfig};
use argus_supervisor_lib::control::*;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Python A2A server child process, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

async fn start(venv: &str, script: &str, args: &[&str]) -> Server {
    let port = free_port();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/servers");
    let child = Command::new(procs::venv_python(venv))
        .arg(dir.join(script))
        .arg("--port")
        .arg(port.to_string())
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn python server");
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}/"),
    };
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        for path in [".well-known/agent-card.json", ".well-known/agent.json"] {
            if let Ok(r) = http.get(format!("{}{path}", server.url)).send().await {
                if r.status().is_success() {
                    return server;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "{script} {args:?} did not come up"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn discover(server: &Server) -> A2aClient {
    let mut config = HttpConfig::new(&server.url);
    config.allow_insecure_loopback = true;
    A2aClient::discover(&config).await.expect("discover")
}

/// Create a task with a plain JSON-RPC request of the test's own, in the server's dialect.
async fn create_task(server: &Server, dialect: Dialect, text: &str) -> TaskId {
    let (method, params, header) = match dialect {
        Dialect::V03 => (
            "message/send",
            json!({"message": {"kind": "message", "role": "user", "messageId": uuid::Uuid::new_v4().to_string(),
                               "parts": [{"kind": "text", "text": text}]},
                   "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"]}}),
            None,
        ),
        Dialect::V1 => (
            "SendMessage",
            json!({"message": {"role": "ROLE_USER", "messageId": uuid::Uuid::new_v4().to_string(), "parts": [{"text": text}]},
                   "configuration": {"returnImmediately": true, "acceptedOutputModes": ["text/plain"]}}),
            Some("1.0"),
        ),
    };
    let mut req = reqwest::Client::new()
        .post(&server.url)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(v) = header {
        req = req.header("A2A-Version", v);
    }
    let v: Value = req.send().await.expect("send").json().await.expect("json");
    let result = &v["result"];
    let task = result.get("task").unwrap_or(result);
    TaskId::new(
        task["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no task id in {v}")),
    )
}

async fn wait_for(
    client: &A2aClient,
    task: &TaskId,
    state: RemoteState,
) -> argus_machines::Observation {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let o = client.status(task).await.expect("status").observation;
        if o.state == state {
            return o;
        }
        assert!(
            Instant::now() < deadline,
            "task never reached {state:?}; last {:?}",
            o.state
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Stock server: observer only; the client reads a task it did not create to completion.
async fn stock(venv: &str, script: &str, args: &[&str], dialect: Dialect, card_path: &str) {
    let server = start(venv, script, args).await;
    let client = discover(&server).await;
    assert_eq!(client.dialect(), dialect, "{script} {args:?}");
    assert_eq!(client.card().path, card_path);
    assert!(!client.mutation().enabled);
    support::fake::claim_refused_locally(&client, "interop").await;
    let task = create_task(&server, dialect, "hello interop").await;
    wait_for(&client, &task, RemoteState::Completed).await;
    let evidence = client.evidence(&task).await.expect("evidence");
    let texts: Vec<&str> = evidence
        .artifacts
        .iter()
        .filter_map(|a| a.text.as_ref())
        .map(|t| t.as_str())
        .collect();
    assert_eq!(texts, vec!["echo: hello interop"], "{script} {args:?}");
    print_probe(script, args, &server).await;
}

/// The probe's report for the closing note (`cargo test --test interop -- --nocapture`).
async fn print_probe(script: &str, args: &[&str], server: &Server) {
    let mut c = HttpConfig::new(&server.url);
    c.allow_insecure_loopback = true;
    let report = argus_supervisor_lib::a2a::probe(&c).await;
    assert!(report.compatibility.is_compatible(), "{report:?}");
    println!(
        "{script} {args:?}: {}",
        serde_json::to_string(&report).expect("report")
    );
}

/// Extension served in front of the framework: the whole controlled lifecycle through the client.
async fn controlled(venv: &str, script: &str, args: &[&str], dialect: Dialect) {
    let server = start(venv, script, args).await;
    let client = discover(&server).await;
    assert_eq!(client.dialect(), dialect);
    assert!(client.mutation().enabled, "{:?}", client.mutation());
    print_probe(script, args, &server).await;
    let observer = Observer::new("c1", ControllerId::new("argus-openoperator"));
    let asked = observer.ask_claim(WriteIntent::fresh(), 120);
    let ctl = match call(&client, &SystemClock, asked).await {
        Settled::Claim(_, ClaimOutcome::Granted(c)) => c,
        other => panic!("{other:?}"),
    };
    let submit = WriteIntent::fresh();
    let submit_id = submit.request_id().clone();
    let request = SubmitRequest {
        text: "hello campaign".into(),
        project: None,
    };
    let asked = ctl.ask_write(submit, Mutation::Submit(request), SystemClock.now());
    let asked = asked.expect("a fresh lease is usable");
    let (ctl, task) = match call(&client, &SystemClock, asked).await {
        Settled::Write(_, WriteResult::Applied(c, Some(t))) => (c, t),
        other => panic!("{other:?}"),
    };
    wait_for(&client, &task, RemoteState::Working).await;
    let ctl = support::fake::renew_then_cancel(&client, ctl, &task).await;
    wait_for(&client, &task, RemoteState::Canceled).await;
    match client.request_status("c1", &submit_id).await {
        Ok(ReadbackAnswer::Applied { task: Some(t) }) => assert_eq!(t, task),
        other => panic!("{other:?}"),
    }
    match call(&client, &SystemClock, ctl.ask_release()).await {
        Settled::Release(_, _, released) => assert_eq!(released, Ok(())),
        other => panic!("{other:?}"),
    }
    assert_eq!(client.read_control("c1").await, Ok(None));
}

#[tokio::test]
async fn fasta2a_0_5_0_stock() {
    stock(
        "fasta2a-0.5.0",
        "fasta2a_echo.py",
        &[],
        Dialect::V03,
        ".well-known/agent.json",
    )
    .await;
}

#[tokio::test]
async fn fasta2a_2_1_1_stock() {
    stock(
        "fasta2a-2.1.1",
        "fasta2a_echo.py",
        &[],
        Dialect::V1,
        ".well-known/agent-card.json",
    )
    .await;
}

#[tokio::test]
async fn a2a_sdk_1_3_0_as_0_3_stock() {
    stock(
        "a2a-sdk-1.3.0",
        "a2a_sdk_echo.py",
        &["--mode", "v03"],
        Dialect::V03,
        ".well-known/agent-card.json",
    )
    .await;
}

#[tokio::test]
async fn a2a_sdk_1_3_0_as_1_0_stock() {
    stock(
        "a2a-sdk-1.3.0",
        "a2a_sdk_echo.py",
        &["--mode", "v1"],
        Dialect::V1,
        ".well-known/agent-card.json",
    )
    .await;
}

#[tokio::test]
async fn fasta2a_2_1_1_with_extension() {
    controlled(
        "fasta2a-2.1.1",
        "fasta2a_echo.py",
        &["--extension", "--delay", "5"],
        Dialect::V1,
    )
    .await;
}

/// a2a-sdk 1.3.0 serving A2A 0.3 and 1.0, each with the extension in front.
#[rstest::rstest]
#[case("v03", Dialect::V03)]
#[case("v1", Dialect::V1)]
#[tokio::test]
async fn a2a_sdk_1_3_0_with_extension(#[case] mode: &str, #[case] dialect: Dialect) {
    let args = ["--mode", mode, "--extension", "--delay", "5"];
    controlled("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &args, dialect).await;
}

/// `bench --remote`: the figures measured against a remote we did not write, in either dialect.
/// The bench creates its tasks there with plain sends, polls them read-only, measures the bare
/// reqwest floor against the same server, and never prints the token it was given.
#[rstest::rstest]
#[case("fasta2a-0.5.0", Dialect::V03)]
#[case("fasta2a-2.1.1", Dialect::V1)]
#[tokio::test]
async fn bench_measures_against_a_remote_it_did_not_write(
    #[case] venv: &str,
    #[case] dialect: Dialect,
) {
    let server = start(venv, "fasta2a_echo.py", &[]).await;
    assert_eq!(discover(&server).await.dialect(), dialect);
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_argus-supervisor"))
        .args(["bench", "--campaigns", "20", "--seconds", "2", "--remote"])
        .arg(&server.url)
        .arg("--allow-insecure-loopback")
        .env("OPENTRAINING_A2A_TOKEN", "bench-token-never-printed")
        .output()
        .await
        .expect("run bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        !stdout.contains("bench-token-never-printed")
            && !stderr.contains("bench-token-never-printed"),
        "the token was printed"
    );
    assert!(
        stdout.contains(&format!("--remote {}", server.url)),
        "the command line names the remote: {stdout}"
    );
    let row = procs::bench_row(&stdout, 20);
    let ticks: u64 = row["ticks"].parse().expect("ticks");
    let writes: u64 = row["writes"].parse().expect("writes");
    let floor: f64 = row["floor_s/1000"].parse().expect("floor");
    assert!(ticks >= 20, "the campaigns polled the remote: {row:?}");
    assert_eq!(writes, 0, "unchanged readings write nothing: {row:?}");
    let paced: f64 = row["paced_s/1000"].parse().expect("paced floor");
    assert!(
        floor > 0.0 && paced > 0.0,
        "the floor was measured against the same remote, flat out and at the same rate: {row:?}"
    );
}

/// `qualify` against real A2A servers that do not offer campaign control: the verdict is
/// "observer only" with the reason, exit 3, and — by the server's own log of what arrived — only
/// reads were sent, never a write.
#[rstest::rstest]
#[case("fasta2a-2.1.1", "fasta2a_echo.py", &[])]
#[case("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v03"])]
#[case("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v1"])]
#[tokio::test]
async fn qualify_finds_a_real_server_without_campaign_control_observer_only_and_writes_nothing(
    #[case] venv: &str,
    #[case] script: &str,
    #[case] args: &[&str],
) {
    let (code, stdout, dir, sent) = qualify_logged(venv, script, args, "qual-interop").await;
    assert_eq!(code, Some(3), "{stdout}");
    let report: Value = serde_json::from_str(&stdout).expect("the JSON report");
    assert_eq!(report["standing"], "observer_only", "{stdout}");
    assert_eq!(
        report["reason"],
        "observer only: campaign-control extension not advertised; nothing was written"
    );
    for c in report["checks"].as_array().expect("checks") {
        let id = c["id"].as_str().unwrap_or("");
        let want = if id.starts_with("lease.")
            || id.starts_with("mutation.")
            || id.starts_with("live.")
            || id == "discovery.control"
            || id == "read.read_control"
            || id == "read.request_status"
            || id == "auth.scheme"
        {
            "SKIPPED"
        } else {
            "PASS"
        };
        assert_eq!(c["grade"], want, "{c}");
    }
    let methods: Vec<&str> = sent.lines().collect();
    assert!(!methods.is_empty());
    assert!(
        methods
            .iter()
            .all(|m| matches!(*m, "tasks/get" | "GetTask")),
        "only reads: {methods:?}"
    );
    let kept = std::fs::read_dir(dir.join("qualification"))
        .expect("the record")
        .count();
    assert_eq!(kept, 1);
    println!("{script} {args:?}: {}", report["reason"]);
}

/// `qualify` against the campaign-control extension served in front of real frameworks (a second
/// implementation of the contract's rules, not the sim's): every read and write check passes, and
/// the test task it submitted runs on the framework, and the cancel of exactly that task is sent.
#[rstest::rstest]
#[case("fasta2a-2.1.1", "fasta2a_echo.py", &["--extension"])]
#[case("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v03", "--extension"])]
#[case("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v1", "--extension"])]
#[tokio::test]
async fn qualify_passes_the_extension_served_in_front_of_a_real_framework(
    #[case] venv: &str,
    #[case] script: &str,
    #[case] args: &[&str],
) {
    // fasta2a's in-memory broker runs a cancel only after the task's run ends, so the echo keeps
    // its short default delay: the cancel then finds the task running or already finished.
    let (code, stdout, _, sent) = qualify_logged(venv, script, args, "qual-ext").await;
    assert_eq!(code, Some(0), "{stdout}");
    let report: Value = serde_json::from_str(&stdout).expect("the JSON report");
    assert_eq!(report["standing"], "qualified", "{stdout}");
    let count = |m: &[&str]| sent.lines().filter(|l| m.contains(l)).count();
    assert_eq!(
        count(&["message/send", "SendMessage"]),
        2,
        "the submit and its repeat: {sent}"
    );
    assert_eq!(count(&["tasks/cancel", "CancelTask"]), 1, "{sent}");
    println!("{script} {args:?}: {}", report["reason"]);
}

/// `qualify` with a write phase on `campaign` against a real server started with `args` and a
/// log of every JSON-RPC method it receives: the exit code, what it printed, the record directory
/// and the server's log (read after the run).
async fn qualify_logged(
    venv: &str,
    script: &str,
    args: &[&str],
    campaign: &str,
) -> (Option<i32>, String, PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("argus-qualify-interop-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let log = dir.join("methods.log");
    let log_arg = log.display().to_string();
    let mut server_args = args.to_vec();
    server_args.extend(["--method-log", log_arg.as_str()]);
    let server = start(venv, script, &server_args).await;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_argus-supervisor"))
        .args([
            "qualify",
            "--url",
            &server.url,
            "--allow-insecure-loopback",
            "--json",
        ])
        .args(["--write-campaign", campaign, "--message", "hello", "--home"])
        .arg(&dir)
        .env_remove("OPENTRAINING_A2A_TOKEN")
        .output()
        .await
        .expect("qualify");
    let sent = std::fs::read_to_string(&log).expect("the server's method log");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        dir,
        sent,
    )
}

/// `serve` follows a real server's stream: against fasta2a 2.1.1 (which always streams; its card
/// is v1.0, so `SubscribeToTask`) and a2a-sdk 1.3.0 (told to stream; 0.3 and 1.0), with the
/// campaign-control extension in front and the echo agent asking for input a second after it
/// starts. With a heartbeat of a minute and hot polling off, only the stream can notice the
/// question; it is noticed, once, and the server's own log shows the subscription arrived.
#[rstest::rstest]
#[case("fasta2a-2.1.1", "fasta2a_echo.py", &["--extension", "--ask"], "SubscribeToTask")]
#[case("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v03", "--extension", "--ask", "--streaming"], "tasks/resubscribe")]
#[case("a2a-sdk-1.3.0", "a2a_sdk_echo.py", &["--mode", "v1", "--extension", "--ask", "--streaming"], "SubscribeToTask")]
fn serve_follows_a_real_servers_stream_and_notices_its_question(
    #[case] venv: &str,
    #[case] script: &str,
    #[case] args: &[&str],
    #[case] subscribe: &str,
) {
    const API_TOKEN: &str = "interop-api-token";
    let dir = std::env::temp_dir().join(format!("argus-stream-interop-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let log = dir.join("methods.log");
    let log_arg = log.display().to_string();
    let mut server_args = args.to_vec();
    server_args.extend(["--method-log", log_arg.as_str()]);
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let server = rt.block_on(start(venv, script, &server_args));
    let port = procs::free_port();
    let _serve = procs::Kill(
        procs::serve_command(&server.url, "unused", API_TOKEN, &dir.join("state"), port)
            .arg("--allow-insecure-loopback")
            .env("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "60")
            .env("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "600")
            .env("ARGUS_SUPERVISOR_HOT_POLL_SECONDS", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve"),
    );
    let api = |path: &str| format!("http://127.0.0.1:{port}/api/plugins/argus-supervisor{path}");
    let ask = |post: bool, path: &str, body: Value| {
        procs::call(
            post,
            &api(path),
            API_TOKEN,
            body,
            reqwest::Client::builder(),
        )
    };
    let mut health = Value::Null;
    procs::wait_for("the remote discovered", 60, || {
        health = ask(false, "/health", Value::Null).map_or(Value::Null, |(_, h)| h);
        health["remote"]["state"] == "discovered"
    });
    assert_eq!(health["notice"]["mode"], "streaming", "{health}");
    let started = argus_supervisor_lib::time::now_ms();
    for (verb, body) in [
        ("observe", json!({"objective": "echo"})),
        ("claim", json!({})),
        ("submit", json!({"message": "hello"})),
    ] {
        let answer = ask(true, &format!("/campaigns/r1/{verb}"), body);
        assert_eq!(
            answer.as_ref().map(|a| a.0),
            Some(200),
            "{verb}: {answer:?}"
        );
    }
    procs::wait_for("the question noticed by the stream", 40, || {
        ask(false, "/campaigns/r1", Value::Null)
            .is_some_and(|(_, c)| c["state"] == "controlling.awaiting_input")
    });
    let feed = ask(false, "/campaigns/r1/messages", Value::Null)
        .map(|(_, m)| procs::feed_texts(&m))
        .unwrap_or_default();
    let questions = feed.iter().filter(|l| l.starts_with("Needs you")).count();
    assert_eq!(questions, 1, "{feed:?}");
    let health = ask(false, "/health", Value::Null).map_or(Value::Null, |(_, h)| h);
    assert_eq!(
        health["heartbeat"]["ticks"], 0,
        "no heartbeat noticed it: {health}"
    );
    let sent = std::fs::read_to_string(&log).expect("the server's method log");
    assert!(
        sent.lines().any(|l| l == subscribe),
        "no {subscribe} arrived: {sent}"
    );
    println!(
        "{script} {args:?}: the server received {:?}",
        sent.lines().collect::<Vec<_>>()
    );
    // Time-to-notice is timed by the server's own `status.timestamp` as it writes it (fasta2a:
    // Python's naive local time; a2a-sdk: protobuf JSON, with `Z`): every change noticed was
    // timed, none longer than the campaign has run.
    let auth = format!("Bearer {API_TOKEN}");
    let (_, m) =
        procs::raw("GET", &api("/metrics"), &[("authorization", &auth)], None).expect("metrics");
    let (count, sum) = procs::notice_times(&m);
    let since = argus_supervisor_lib::time::now_ms().saturating_sub(started) as f64 / 1000.0;
    println!("{script}: {count} notices timed, {sum:.3} s in all, {since:.3} s since the submit");
    assert!(count >= 1, "{m}");
    assert!(sum >= 0.0 && sum <= count as f64 * since, "{m}");
    assert!(
        m.contains("argus_supervisor_notices_unmeasured_total{why=\"no_timestamp\"} 0\n"),
        "{m}"
    );
}
