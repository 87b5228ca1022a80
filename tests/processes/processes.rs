//! Real processes: `sim` and `serve` as child processes driven by the `campaigns` CLI, secrets
//! searched for in every answer and in the daemon's logs, exactly one listening socket, and
//! SIGKILL crash tests at random moments during a submit (20 rounds, tally printed).

use crate::support::procs;

use procs::free_port;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_argus-supervisor");
const SIM_TOKEN: &str = "sim-secret-91f2aa";
const API_TOKEN: &str = "api-secret-0c77d3";

struct Proc {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn capture_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    if let Some(mut err) = child.stderr.take() {
        let b = buf.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            b.lock().expect("stderr").push_str(&s);
        });
    }
    buf
}

fn start_sim() -> (procs::SimProc, String) {
    start_sim_with("long-noisy")
}

fn start_sim_with(scenario: &str) -> (procs::SimProc, String) {
    procs::spawn_sim("127.0.0.1:0", scenario, SIM_TOKEN, [] as [&str; 0])
}

fn serve(sim_url: &str, home: &Path, port: u16) -> Proc {
    serve_with(sim_url, home, port, &[])
}

/// `serve` on a fresh state root and a free port, against `sim_url`, answering `health`.
fn serving(sim_url: &str) -> (Proc, u16) {
    let port = free_port();
    let daemon = serve(sim_url, &tmp_home(), port);
    wait_healthy(port);
    (daemon, port)
}

fn serve_with(sim_url: &str, home: &Path, port: u16, extra: &[(&str, &str)]) -> Proc {
    let mut child = procs::serve_command(sim_url, SIM_TOKEN, API_TOKEN, home, port)
        .arg("--allow-insecure-loopback")
        .envs(extra.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let stderr = capture_stderr(&mut child);
    Proc { child, stderr }
}

fn base(port: u16) -> String {
    format!("http://127.0.0.1:{port}/api/plugins/argus-supervisor")
}

/// A small synchronous HTTP client over a private runtime (the tests themselves are synchronous).
struct Http {
    rt: tokio::runtime::Runtime,
    c: reqwest::Client,
}

impl Http {
    fn call(
        &self,
        post: bool,
        url: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Option<(u16, String)> {
        self.rt.block_on(async {
            let mut req = if post {
                self.c.post(url).json(&body.unwrap_or(json!({})))
            } else {
                self.c.get(url)
            };
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let resp = req.send().await.ok()?;
            let status = resp.status().as_u16();
            Some((status, resp.text().await.unwrap_or_default()))
        })
    }
}

fn http() -> Http {
    Http {
        rt: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt"),
        c: reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .expect("client"),
    }
}

/// `GET` an API path with the token; the body.
fn api_get(port: u16, path: &str) -> String {
    http()
        .call(
            false,
            &format!("{}{path}", base(port)),
            Some(API_TOKEN),
            None,
        )
        .expect("GET")
        .1
}

/// The campaign ids `GET /campaigns` lists.
fn listed(port: u16) -> Vec<String> {
    let body = api_get(port, "/campaigns");
    let list: Value = serde_json::from_str(&body).expect("json");
    list["campaigns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["campaign_id"].as_str().map(str::to_string))
        .collect()
}

fn wait_healthy(port: u16) {
    let c = http();
    let deadline = Instant::now() + Duration::from_secs(20);
    while c
        .call(false, &format!("{}/health", base(port)), None, None)
        // "starting" answers 200 too (the process is alive); ready means the remote is discovered.
        .is_none_or(|(s, body)| s != 200 || !body.contains(r#""status":"ok""#))
    {
        assert!(Instant::now() < deadline, "serve never became healthy");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn cli(port: u16, args: &[&str]) -> (bool, String) {
    let out = Command::new(BIN)
        .arg("campaigns")
        .args(["--url", &format!("http://127.0.0.1:{port}")])
        .args(args)
        .env("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN)
        .output()
        .expect("cli");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn state(port: u16, id: &str) -> Option<String> {
    let (s, body) = http().call(
        false,
        &format!("{}/campaigns/{id}", base(port)),
        Some(API_TOKEN),
        None,
    )?;
    (s == 200)
        .then(|| {
            serde_json::from_str::<Value>(&body).ok()?["state"]
                .as_str()
                .map(str::to_string)
        })
        .flatten()
}

fn wait_state(port: u16, id: &str, want: &[&str]) -> String {
    let mut now = None;
    procs::wait_for(&format!("{id} to reach one of {want:?}"), 30, || {
        now = state(port, id);
        now.as_deref().is_some_and(|s| want.contains(&s))
    });
    now.unwrap_or_default()
}

fn audit(sim_url: &str) -> Value {
    procs::sim_audit(sim_url, SIM_TOKEN)
}

fn listening_sockets(pid: u32) -> usize {
    let mut inodes = std::collections::HashSet::new();
    if let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                let t = target.to_string_lossy().to_string();
                if let Some(inode) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    inodes.insert(inode.to_string());
                }
            }
        }
    }
    let mut n = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.get(3) == Some(&"0A") && f.get(9).is_some_and(|i| inodes.contains(*i)) {
                n += 1;
            }
        }
    }
    n
}

fn tmp_home() -> PathBuf {
    std::env::temp_dir().join(format!("argus-proc-{}", uuid::Uuid::new_v4()))
}

#[test]
fn serve_refuses_a_bad_configuration_naming_the_variable() {
    for (env, variable) in [
        (vec![], "OPENTRAINING_A2A_URL"),
        (
            vec![("OPENTRAINING_A2A_URL", "http://example.com/a2a/")],
            "OPENTRAINING_A2A_URL",
        ),
        (
            vec![
                ("OPENTRAINING_A2A_URL", "https://ot.example/"),
                ("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN),
                ("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "100"),
            ],
            "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS",
        ),
        (
            vec![
                ("OPENTRAINING_A2A_URL", "https://ot.example/"),
                ("ARGUS_SUPERVISOR_LISTEN", "0.0.0.0:8787"),
            ],
            "ARGUS_SUPERVISOR_API_TOKEN",
        ),
        (
            vec![
                ("OPENTRAINING_A2A_URL", "https://ot.example/"),
                ("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN),
                ("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "soon"),
            ],
            "ARGUS_SUPERVISOR_HEARTBEAT_SECONDS",
        ),
    ]
    .into_iter()
    .chain(
        [
            ("ARGUS_SUPERVISOR_HOT_POLL_SECONDS", "3601"),
            ("ARGUS_SUPERVISOR_REMOTE_BUDGET_RPS", "0"),
            ("ARGUS_SUPERVISOR_REMOTE_BUDGET_RPS", "lots"),
            ("ARGUS_SUPERVISOR_MAX_STREAMS", "100001"),
            ("ARGUS_SUPERVISOR_MAX_STREAMS", "-1"),
            ("ARGUS_SUPERVISOR_STREAM_SILENCE_SECONDS", "4"),
        ]
        .map(|(variable, bad)| {
            (
                vec![
                    ("OPENTRAINING_A2A_URL", "https://ot.example/"),
                    ("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN),
                    (variable, bad),
                ],
                variable,
            )
        }),
    ) {
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .env_clear()
            .env("OPENTRAINING_A2A_TOKEN", SIM_TOKEN);
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("serve");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{variable}: {err}");
        assert!(err.contains(variable), "{err}");
        assert!(
            !err.contains(SIM_TOKEN) && !err.contains(API_TOKEN),
            "{err}"
        );
    }
}

#[test]
fn sim_and_serve_driven_by_the_cli_never_show_a_secret() {
    let (sim, sim_url) = start_sim();
    let home = tmp_home();
    let port = free_port();
    let mut daemon = serve(&sim_url, &home, port);
    wait_healthy(port);
    assert_eq!(
        listening_sockets(daemon.child.id()),
        1,
        "exactly one listener"
    );
    let (ok, out) = cli(port, &["observe", "c1", "--objective", "train the adapter"]);
    assert!(ok, "{out}");
    let (ok, out) = cli(port, &["submit", "c1", "--message", "go"]);
    assert!(!ok && out.contains("forbidden_in_state"), "{out}");
    let (ok, out) = cli(port, &["claim", "c1"]);
    assert!(ok, "{out}");
    wait_state(port, "c1", &["controlling.ready"]);
    let (ok, out) = cli(port, &["submit", "c1", "--message", "go"]);
    assert!(ok, "{out}");
    wait_state(port, "c1", &["controlling.running"]);
    let (ok, list) = cli(port, &["list"]);
    assert!(
        ok && list.contains("c1") && list.contains("controlling.running"),
        "{list}"
    );
    let (ok, show) = cli(port, &["--json", "show", "c1"]);
    assert!(ok, "{show}");
    let a = audit(&sim_url);
    assert_eq!(a["counters"]["tasks_per_campaign"]["c1"], 1);
    assert_eq!(a["counters"]["stale_or_expired_accepted"], 0);
    // Every answer of every route, and the daemon's logs: no secret value anywhere.
    let c = http();
    let mut everything = format!("{list}{show}");
    for path in [
        "/health",
        "/status",
        "/campaigns",
        "/campaigns/c1",
        "/campaigns/c1/events",
        "/campaigns/c1/messages",
    ] {
        everything.push_str(&api_get(port, path));
    }
    let read_health =
        || -> Value { serde_json::from_str(&api_get(port, "/health")).expect("json") };
    let health = read_health();
    assert_eq!(
        health["secrets"],
        json!({"opentraining_token": true, "api_token": true})
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut health = health;
    while health["heartbeat"]["last_tick_age_seconds"].is_null() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        health = read_health();
    }
    assert!(
        health["heartbeat"]["last_tick_age_seconds"]
            .as_u64()
            .is_some_and(|age| age <= 5),
        "heartbeat freshness: {health}"
    );
    assert_eq!(health["remote"]["mutation_enabled"], true);
    let _ = c.call(
        false,
        &format!("{}/status", base(port)),
        Some("wrong-token"),
        None,
    );
    // Clean stop on SIGTERM: state persisted, exit 0.
    let term_sent = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let pid = daemon.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill")
        .success());
    let status = daemon.child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    // The stderr reader thread ends with the process; wait for it to have read the log.
    procs::wait_for("the daemon's log", 10, || {
        daemon
            .stderr
            .lock()
            .expect("stderr")
            .contains("serving the API")
    });
    everything.push_str(&daemon.stderr.lock().expect("stderr"));
    assert!(
        everything.contains("serving the API"),
        "the daemon's log was captured"
    );
    for secret in [SIM_TOKEN, API_TOKEN] {
        assert!(!everything.contains(secret), "{secret} leaked");
    }
    // What a clean stop persists: the stop time, the step finished (running, no write in
    // flight, the task bound), and the lease kept (the one the remote holds for us, not released).
    let raw = std::fs::read_to_string(home.join("campaigns/c1.json")).expect("persisted");
    assert!(!raw.contains(SIM_TOKEN));
    let doc: Value = serde_json::from_str(&raw).expect("campaign json");
    assert_eq!(doc["machine"]["state"]["name"], "controlling.running");
    assert_eq!(
        doc["machine"]["state"]["intent"],
        Value::Null,
        "no write left in flight"
    );
    let a = audit(&sim_url);
    let created = a["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|e| e["task_id"].as_str().map(str::to_string))
        .expect("the remote created a task");
    assert_eq!(doc["machine"]["state"]["task"], created.as_str());
    let granted = a["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["method"] == "campaign/claim_control" && e["accepted"] == true)
        .filter_map(|e| e["epoch"].as_u64())
        .max()
        .expect("a grant");
    assert_eq!(
        doc["machine"]["state"]["lease"]["epoch"], granted,
        "the lease kept"
    );
    assert!(
        !a["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["method"] == "campaign/release_control"),
        "a clean stop keeps the lease unless told to release it"
    );
    let stopped: Value = serde_json::from_str(
        &std::fs::read_to_string(home.join("state/supervisor.json")).expect("stop record"),
    )
    .expect("supervisor json");
    let stopped_at = stopped["stopped_at"].as_u64().expect("stop time");
    assert!(
        stopped_at >= term_sent && stopped_at <= term_sent + 30,
        "stopped_at {stopped_at}, SIGTERM at {term_sent}"
    );
    drop(sim);
}

/// SIGKILL during a submit, 20 rounds (ARGUS_SIGKILL_ROUNDS for more). Every other round restarts
/// while the submit is still held at the remote (the sim reports it held, before and after the new
/// process starts); the others kill at a random moment. The seed is printed and can be replayed
/// with ARGUS_SIGKILL_SEED. Judged by what the supervisor sent, per request id.
#[test]
fn sigkill_during_a_submit_never_duplicates_or_reacquires() {
    let (sim, sim_url) = start_sim();
    let c = http();
    let mut seed: u64 = match std::env::var("ARGUS_SIGKILL_SEED") {
        Ok(s) => s.parse().expect("ARGUS_SIGKILL_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(7),
    };
    let rounds: u32 = std::env::var("ARGUS_SIGKILL_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20)
        .max(20);
    println!("SIGKILL seed {seed} (replay with ARGUS_SIGKILL_SEED={seed}), {rounds} rounds");
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut tally = std::collections::BTreeMap::<&str, u32>::new();
    let mut restarted_mid_flight = 0;
    for round in 0..rounds {
        let id = format!("k{round}");
        let home = tmp_home();
        let port = free_port();
        let daemon = serve(&sim_url, &home, port);
        wait_healthy(port);
        assert!(cli(port, &["observe", &id, "--objective", "train"]).0);
        assert!(cli(port, &["claim", &id]).0);
        wait_state(port, &id, &["controlling.ready"]);
        // Held below the 3 s readback grace: a restart must wait for the held send, not decide
        // "not applied" while it is still on its way.
        let mid_flight = round % 2 == 0;
        let hold = if mid_flight {
            1_500 + next(1_000)
        } else {
            200 + next(600)
        };
        let fault = json!({"kind": "delay", "method": "message/send", "ms": hold, "times": 1});
        c.call(
            true,
            &format!("{sim_url}_sim/faults"),
            Some(SIM_TOKEN),
            Some(fault),
        )
        .expect("arm");
        let submit_url = format!("{}/campaigns/{id}/submit", base(port));
        std::thread::spawn(move || {
            let _ = http().call(
                true,
                &submit_url,
                Some(API_TOKEN),
                Some(json!({"message": "go"})),
            );
        });
        if mid_flight {
            procs::wait_for("the submit to be held at the remote", 30, || {
                audit(&sim_url)["held_now"].as_u64().unwrap_or(0) > 0
            });
        } else {
            std::thread::sleep(Duration::from_millis(next(900)));
        }
        let killed_at = audit(&sim_url)["entries"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0);
        drop(daemon); // SIGKILL
        let port = free_port();
        let _daemon = serve(&sim_url, &home, port);
        if audit(&sim_url)["held_now"].as_u64().unwrap_or(0) > 0 {
            restarted_mid_flight += 1;
        }
        wait_healthy(port);
        let end = wait_state(port, &id, &["controlling.running", "controlling.ready"]);
        let a = audit(&sim_url);
        let entries = a["entries"].as_array().cloned().unwrap_or_default();
        let sends: Vec<&Value> = entries
            .iter()
            .filter(|e| e["campaign_id"] == id.as_str() && e["method"] == "message/send")
            .collect();
        let tasks = a["counters"]["tasks_per_campaign"][&id]
            .as_u64()
            .unwrap_or(0);
        // One decision, one request id; each request id reaches the remote in one message/send;
        // at most one task.
        let request_ids: std::collections::BTreeSet<&str> = sends
            .iter()
            .filter_map(|e| e["request_id"].as_str())
            .collect();
        assert!(request_ids.len() <= 1, "round {round}: {request_ids:?}");
        for rid in &request_ids {
            assert_eq!(
                a["counters"]["submits_per_request_id"][rid], 1,
                "round {round}: {rid} was sent more than once"
            );
        }
        assert!(tasks <= 1, "round {round}: {tasks} tasks");
        assert_eq!(a["counters"]["rejected_stale_epoch"], 0, "round {round}");
        procs::assert_supervisor_clean(&a);
        let after: Vec<&str> = entries[killed_at..]
            .iter()
            .filter(|e| e["campaign_id"] == id.as_str())
            .map(|e| e["method"].as_str().unwrap_or(""))
            .filter(|m| m.starts_with("campaign/"))
            .collect();
        assert!(
            !after.contains(&"campaign/claim_control"),
            "round {round}: reacquired without read_control: {after:?}"
        );
        // Bound to the one task the remote created, compared by id; ready again only if the
        // remote created nothing.
        let created = sends.iter().find_map(|e| e["task_id"].as_str());
        let bound: Value =
            serde_json::from_str(&api_get(port, &format!("/campaigns/{id}"))).expect("json");
        match created {
            Some(task) => {
                assert_eq!(end, "controlling.running", "round {round}");
                assert_eq!(bound["machine"]["state"]["task"], task, "round {round}");
                assert!(
                    after.first() == Some(&"campaign/request_status")
                        || after.first() == Some(&"campaign/read_control"),
                    "round {round}: {after:?}"
                );
                *tally.entry("re-attached to the one task").or_default() += 1;
            }
            None => {
                assert_eq!(end, "controlling.ready", "round {round}");
                assert_eq!(tasks, 0, "round {round}");
                *tally
                    .entry("nothing applied; ready for a new decision")
                    .or_default() += 1;
            }
        }
    }
    println!(
        "SIGKILL tally over {rounds} rounds ({restarted_mid_flight} restarted while the submit was held): {tally:?}"
    );
    assert!(
        restarted_mid_flight * 3 >= rounds,
        "only {restarted_mid_flight} of {rounds} rounds restarted mid-flight"
    );
    drop(sim);
}

/// `demo --serve`: after the mission the demo keeps running, prints the panel's URL and a token
/// made for this run, serves the finished campaign behind that token, and stops on Ctrl-C.
#[test]
fn the_demo_serves_its_finished_campaign_in_the_panel_until_ctrl_c() {
    let home = tmp_home();
    let mut child = Command::new(BIN)
        .args(["demo", "--serve", "--listen", "127.0.0.1:0", "--home"])
        .arg(&home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("demo");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let (mut panel, mut token) = (None, None);
    let deadline = Instant::now() + Duration::from_secs(60);
    while token.is_none() {
        assert!(
            Instant::now() < deadline,
            "the demo never offered its panel"
        );
        let line = lines.next().expect("demo output").expect("line");
        if let Some(url) = line.strip_prefix("panel:") {
            panel = Some(url.trim().to_string());
        }
        if let Some(rest) = line.strip_prefix("API token:") {
            token = rest.split_whitespace().next().map(str::to_string);
        }
    }
    let (panel, token) = (panel.expect("panel url"), token.expect("token"));
    assert!(
        panel.starts_with("http://127.0.0.1:")
            && panel.ends_with("/api/plugins/argus-supervisor/ui/")
    );
    let api = panel.trim_end_matches("/ui/").to_string();
    let c = http();
    let (status, page) = c.call(false, &panel, None, None).expect("panel");
    assert_eq!(status, 200);
    assert!(
        page.contains("panel.js") && !page.contains(&token),
        "public assets carry no data"
    );
    let (status, _) = c
        .call(
            false,
            &format!("{api}/campaigns"),
            Some("not-the-token"),
            None,
        )
        .expect("refused");
    assert_eq!(status, 401);
    let (status, body) = c
        .call(false, &format!("{api}/campaigns"), Some(&token), None)
        .expect("campaigns");
    assert_eq!(status, 200);
    let list: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(list["campaigns"][0]["campaign_id"], "training-master-demo");
    assert_eq!(list["campaigns"][0]["state"], "closed.accepted");
    let (_, doc) = c
        .call(
            false,
            &format!("{api}/campaigns/training-master-demo"),
            Some(&token),
            None,
        )
        .expect("campaign");
    let doc: Value = serde_json::from_str(&doc).expect("json");
    assert_eq!(doc["diagram_state"], "Accepted");
    assert!(
        doc["path"].as_array().is_some_and(|p| p.len() >= 8),
        "{}",
        doc["path"]
    );
    assert_eq!(
        doc["allowed_actions"],
        json!([]),
        "nothing to do on a closed campaign"
    );
    // Its health is the contract's shape, as serve's is: the panel's tiles read words, never an
    // object ("[object Object]") or nothing ("undefined").
    let (status, health) = c
        .call(false, &format!("{api}/health"), Some(&token), None)
        .expect("health");
    assert_eq!(status, 200, "{health}");
    let typed: argus_supervisor_lib::api::contract::Health =
        serde_json::from_str(&health).expect("the demo's health reads whole");
    assert_eq!(
        (typed.argus.as_str(), typed.foreman.as_str()),
        ("not configured", "not configured")
    );
    assert_eq!(
        typed.supervision,
        argus_supervisor_lib::api::Supervision::On
    );
    assert!(
        matches!(
            typed.remote,
            Some(argus_supervisor_lib::api::contract::RemoteShown::Simulated(
                _
            ))
        ),
        "{health}"
    );
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill")
        .success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(
                status.success(),
                "Ctrl-C stops the demo cleanly: {status:?}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "the demo ignored Ctrl-C");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_demo_plays_the_repair_scenario_to_acceptance() {
    let home = tmp_home();
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["demo", "--home"])
        .arg(&home)
        .output()
        .expect("demo");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the demo takes under 30 s"
    );
    let expected = [
        "qualification of the simulated remote: QUALIFIED (18 checks passed, 0 failed",
        "Attempt 1 failed during preprocessing",
        "Evidence (remote text, untrusted)",
        "bounded repair approved",
        "Attempt 2 completed",
        "Mission complete",
        "attempts:            2",
        "(the mission's; the qualification made ",
        "stale-epoch writes:  0",
        "resent submits:      0",
    ];
    let mut at = 0;
    for e in expected {
        let found = text[at..]
            .find(e)
            .unwrap_or_else(|| panic!("missing or out of order: {e}\n{text}"));
        at += found;
    }
    assert!(
        !text.to_lowercase().contains("heartbeat"),
        "no routine chatter: {text}"
    );
    // No Argus is attached: nothing is counted as its wake.
    assert!(
        !text.contains("wakes:") && text.contains("no Argus attached: the operator decided each"),
        "{text}"
    );
    // The mission's calls exclude the qualification's: a submit per attempt, and not the cancel
    // the qualification made of its own harmless task.
    let calls = text
        .lines()
        .find(|l| l.trim_start().starts_with("remote calls:"))
        .unwrap_or_default();
    assert!(
        calls.contains("message/send=2,") && !calls.contains("tasks/cancel"),
        "{calls}"
    );
    assert!(home.join("campaigns/training-master-demo.json").exists());
    // The demo's writes went under the policy serve applies by default: its record is there.
    let records = std::fs::read_dir(home.join("qualification"))
        .expect("the qualification record")
        .count();
    assert_eq!(records, 1);
    assert!(home.join("path.mmd").exists());
    // The persisted feed starts with what happened (the claim), never with a refusal.
    let feed = std::fs::read_to_string(home.join("messages/training-master-demo.jsonl"))
        .expect("the demo's feed");
    let first: Value =
        serde_json::from_str(feed.lines().next().expect("a first line")).expect("a feed line");
    assert_eq!(
        first["text"], "Operator claim: control acquired (epoch 1).",
        "{feed}"
    );
    assert!(
        !feed.contains("refused") && !feed.contains("not allowed"),
        "{feed}"
    );
}

// ----- Issue 11 through the shipped binary --------------------------------------------------------

fn sends(audit: &Value) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in audit["entries"].as_array().into_iter().flatten() {
        if e["method"] == "message/send" {
            *m.entry(e["request_id"].as_str().unwrap_or("").to_string())
                .or_default() += 1;
        }
    }
    m
}

fn wait_exit(p: &mut Proc, within: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(Some(status)) = p.child.try_wait() {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_second_serve_on_the_same_state_root_exits_2_naming_the_holder() {
    let (_sim, url) = start_sim();
    let home = std::env::temp_dir().join(format!("argus-lock-{}", uuid::Uuid::new_v4()));
    let (p1, p2) = (free_port(), free_port());
    let first = serve(&url, &home, p1);
    wait_healthy(p1);
    let mut second = serve(&url, &home, p2);
    let status = wait_exit(&mut second, Duration::from_secs(20)).expect("the second exits");
    assert_eq!(status.code(), Some(2));
    std::thread::sleep(Duration::from_millis(200));
    let err = second.stderr.lock().expect("stderr").clone();
    let pid = first.child.id().to_string();
    assert!(err.contains("in use") && err.contains(&pid), "{err}");
}

#[test]
fn a_heartbeat_too_large_to_compute_with_exits_2_naming_the_variable() {
    let home = std::env::temp_dir().join(format!("argus-hb-{}", uuid::Uuid::new_v4()));
    let mut p = serve_with(
        "http://127.0.0.1:9/",
        &home,
        free_port(),
        &[("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "9223372036854775808")],
    );
    let status = wait_exit(&mut p, Duration::from_secs(20)).expect("exits");
    assert_eq!(status.code(), Some(2));
    std::thread::sleep(Duration::from_millis(200));
    let err = p.stderr.lock().expect("stderr").clone();
    assert!(err.contains("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS"), "{err}");
}

#[test]
fn probe_help_never_prints_the_remote_url() {
    let out = Command::new(BIN)
        .args(["probe", "--help"])
        .env(
            "OPENTRAINING_A2A_URL",
            "https://agent.example/a2a/t-pathsecret77/",
        )
        .output()
        .expect("probe --help");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("OPENTRAINING_A2A_URL"), "{text}");
    assert!(!text.contains("pathsecret77"), "{text}");
}

/// `probe`, `qualify` and `bench --remote` read serve's trust, zone and Foreman settings through
/// the same declarations: a value serve refuses, they refuse alike, naming the variable, exit 2,
/// before anything is sent (the remote named here does not exist).
#[test]
fn the_tools_refuse_what_serve_refuses_naming_the_same_variable() {
    let remote = "https://agent.example/a2a/t-pathsecret77/";
    for (args, variable, bad) in [
        (
            vec!["probe", "--url", remote],
            "ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET",
            "east",
        ),
        (
            vec!["qualify", "--url", remote],
            "ARGUS_SUPERVISOR_CA_ONLY",
            "maybe",
        ),
        (
            vec!["probe", "--url", remote],
            "ARGUS_SUPERVISOR_FOREMAN_ENV",
            "OPENTRAINING_A2A_TOKEN",
        ),
        (
            vec!["bench", "--remote", remote],
            "ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET",
            "+25:00",
        ),
        (
            vec!["probe", "--url", remote],
            "ARGUS_SUPERVISOR_QUALIFICATION_MAX_AGE_DAYS",
            "ninety",
        ),
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .env_clear()
            .env(variable, bad)
            .output()
            .expect("the tool");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {variable}: {err}");
        assert!(err.contains(variable), "{args:?}: {err}");
        assert!(!err.contains("pathsecret77"), "{args:?}: {err}");
    }
}

/// A state root `serve` left behind (and stopped): `c1` claimed and `controlling.ready`, and
/// `observers` observing without a task (objective "watch").
fn stopped_with_a_controller(url: &str, tag: &str, observers: &[&str]) -> (PathBuf, u16) {
    let home = std::env::temp_dir().join(format!("argus-{tag}-{}", uuid::Uuid::new_v4()));
    let port = free_port();
    let _serve = serve(url, &home, port);
    wait_healthy(port);
    assert!(cli(port, &["observe", "c1", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "c1"]).0);
    for id in observers {
        assert!(cli(port, &["observe", id, "--objective", "watch"]).0);
    }
    wait_state(port, "c1", &["controlling.ready"]);
    (home, port)
}

#[test]
fn serve_sets_aside_a_stale_copy_and_a_bad_path_and_drives_one_campaign() {
    let (_sim, url) = start_sim();
    let (home, port) = stopped_with_a_controller(&url, "copy", &[]);
    let campaigns = home.join("campaigns");
    std::fs::copy(campaigns.join("c1.json"), campaigns.join("c1.bak.json")).expect("copy");
    std::fs::create_dir_all(campaigns.join("x.json")).expect("dir");
    // A directory where p007's event log would be: start reads no event log; p007's driver
    // reads its own before its first step, and moves this one aside.
    let p007_log = home.join("events").join("p007.jsonl");
    let _ = std::fs::remove_file(&p007_log);
    std::fs::create_dir_all(&p007_log).expect("dir");
    let _serve = serve(&url, &home, port);
    wait_healthy(port);
    wait_state(port, "c1", &["controlling.ready"]);
    // The copy is set aside; the directory where x's document should be is a damaged document
    // like any other: set aside, and x comes back as a blank observer that asks.
    assert_eq!(listed(port), ["c1", "x"]);
    assert!(!campaigns.join("c1.bak.json").exists());
    assert!(campaigns.join("x.json").is_file());
    let x: Value = serde_json::from_str(&api_get(port, "/campaigns/x")).expect("json");
    assert_eq!(x["state"], "observing.detached", "{x}");
    assert!(
        x["pending_question"]["text"]
            .as_str()
            .is_some_and(|q| q.contains("could not be read")),
        "{x}"
    );
    let status = api_get(port, "/status");
    assert!(
        status.contains("c1.bak.json") && status.contains("x.json"),
        "{status}"
    );
    assert!(cli(port, &["submit", "c1", "--message", "run"]).0);
    wait_state(port, "c1", &["controlling.running"]);
    let audit = audit(&url);
    assert_eq!(audit["counters"]["tasks_per_campaign"]["c1"], 1);
    assert!(sends(&audit).values().all(|n| *n == 1));
    assert_eq!(audit["counters"]["rejected_stale_epoch"], 0);
}

/// Copies of the observer `c2` in `campaigns/`, as `p000` .. (`n` of them), each under its own id.
fn plant_observers(campaigns: &Path, n: usize) {
    let observer: Value =
        serde_json::from_slice(&std::fs::read(campaigns.join("c2.json")).expect("c2"))
            .expect("json");
    for i in 0..n {
        let id = format!("p{i:03}");
        let mut doc = observer.clone();
        doc["campaign_id"] = json!(id);
        doc["machine"]["campaign_id"] = json!(id);
        std::fs::write(
            campaigns.join(format!("{id}.json")),
            serde_json::to_vec(&doc).expect("bytes"),
        )
        .expect("plant");
    }
}

/// Recovery of a large state root: every campaign is driven (each read by its own driver, the
/// listing asking them all), and the odd files are set aside and reported when they are read.
#[test]
fn serve_recovers_hundreds_of_campaigns_and_sets_aside_the_odd_ones() {
    let (_sim, url) = start_sim();
    let (home, port) = stopped_with_a_controller(&url, "many", &["c2"]);
    let campaigns = home.join("campaigns");
    let planted = 600;
    plant_observers(&campaigns, planted);
    std::fs::copy(campaigns.join("c1.json"), campaigns.join("c1.bak.json")).expect("copy");
    std::fs::write(
        campaigns.join("garbled.json"),
        b"{\"schema_version\": 2, \"campaign",
    )
    .expect("corrupt");
    std::fs::create_dir_all(campaigns.join("x.json")).expect("dir");
    // A directory where p007's event log would be: start reads no event log; p007's driver
    // reads its own before its first step, and moves this one aside.
    let p007_log = home.join("events").join("p007.jsonl");
    let _ = std::fs::remove_file(&p007_log);
    std::fs::create_dir_all(&p007_log).expect("dir");
    let _serve = serve(&url, &home, port);
    wait_healthy(port);
    wait_state(port, "c1", &["controlling.ready"]);
    let ids = listed(port);
    assert_eq!(
        ids.len(),
        planted + 4,
        "c1, c2, the corrupt one, the unreadable one, and every planted copy"
    );
    for id in ["c1", "c2", "garbled", "x", "p000", "p599"] {
        assert!(ids.iter().any(|i| i == id), "{id} is driven");
    }
    let view = api_get(port, "/campaigns/p321");
    let view: Value = serde_json::from_str(&view).expect("json");
    assert_eq!(view["objective"], "watch", "{view}");
    assert!(!campaigns.join("c1.bak.json").exists());
    assert!(campaigns.join("x.json").is_file(), "x's blank document");
    let status = api_get(port, "/status");
    assert!(
        status.contains("c1.bak.json") && status.contains("x.json") && status.contains("corrupt"),
        "{status}"
    );
    // The corrupt campaign comes back without authority, asking for a review.
    let garbled = api_get(port, "/campaigns/garbled");
    assert!(garbled.contains("observing"), "{garbled}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status: Value = serde_json::from_str(&api_get(port, "/status")).expect("json");
        let reported = status["recovery_reports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|r| r.starts_with("p007: unreadable event log"));
        if reported {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "p007's event log is never reported: {status}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!p007_log.is_dir(), "moved aside");
    assert!(
        std::fs::read_dir(home.join("quarantine"))
            .expect("quarantine")
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with("p007.jsonl")),
        "kept in quarantine"
    );
}

/// A campaign's offset into the first heartbeat after a start, as a share of it: FNV-1a of its
/// id, as the driver computes it (the same campaign at the same point of every restart).
fn first_offset_share(id: &str) -> f64 {
    let h = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// `serve` on a state root of hundreds of campaigns reads none of their files to start: each
/// driver reads its own at its offset into the first heartbeat (here an hour), or when it is
/// first asked. `status` answers at once, counting the campaigns not read yet as `unread`; a
/// campaign's view reads that one; the listing reads them all.
#[test]
fn serve_reads_no_campaign_file_to_start_and_each_is_read_at_its_first_need() {
    let (_sim, url) = start_sim();
    let (home, port) = stopped_with_a_controller(&url, "lazy", &["c2"]);
    let campaigns = home.join("campaigns");
    let planted = 300;
    plant_observers(&campaigns, planted);
    let all = planted + 2;
    let hour = 3600.0;
    // The campaigns whose offset is more than ten minutes away: no test step takes that long.
    let far: Vec<String> = (0..planted)
        .map(|i| format!("p{i:03}"))
        .filter(|id| first_offset_share(id) * hour > 600.0)
        .collect();
    assert!(far.len() > planted / 2, "{}", far.len());
    let _serve = serve_with(
        &url,
        &home,
        port,
        &[
            ("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "3600"),
            ("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "86400"),
        ],
    );
    wait_healthy(port);
    let unread = |port: u16| -> u64 {
        let status: Value = serde_json::from_str(&api_get(port, "/status")).expect("json");
        assert_eq!(status["campaigns"], json!(all), "{status}");
        status["by_state"]["unread"].as_u64().unwrap_or(0)
    };
    let before = unread(port);
    assert!(before >= far.len() as u64, "{before} unread of {all}");
    // One campaign's view reads that campaign (and only it could have moved the count: the
    // others due before ten minutes may be read meanwhile, never one of `far` but this one).
    let view: Value =
        serde_json::from_str(&api_get(port, &format!("/campaigns/{}", far[0]))).expect("json");
    assert_eq!(view["objective"], "watch", "{view}");
    let after = unread(port);
    assert!(
        after < before && after >= far.len() as u64 - 1,
        "{before} -> {after}"
    );
    // The listing reads every campaign not read yet.
    assert_eq!(listed(port).len(), all);
    assert_eq!(unread(port), 0);
}

/// `bench` with a share of controlling campaigns at a given heartbeat: they claim control on the
/// bench's own sim and renew through the window; a renewal writes its lease record alone, unsynced
/// (the campaign document carries the new expiry from its next write: `Journal::persist`), and
/// nothing else is written, waited for or woken. A foreign remote has nothing to claim, so `--controlling` is refused there.
/// `argus-supervisor bench ARGS`, which must succeed: its report.
fn bench(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("bench")
        .args(args)
        .output()
        .expect("bench");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn bench_controlling_campaigns_claim_and_renew_and_only_the_renewals_write() {
    let stdout = bench(&[
        "--campaigns",
        "40",
        "--seconds",
        "20",
        "--heartbeat",
        "1",
        "--controlling",
        "0.25",
    ]);
    assert!(
        stdout.contains("--heartbeat 1 --controlling 0.25"),
        "the command line reproduces the run: {stdout}"
    );
    let row = procs::bench_row(&stdout, 40);
    let number = |name: &str| -> u64 { row[name].parse().expect(name) };
    assert_eq!(row["heartbeat"], "1.0s");
    assert_eq!(number("ctl"), 10, "a quarter of 40 hold control");
    // Leases of 64 s are renewed 47 s before they end: each controller renews once in the window.
    assert!(number("renewals") >= 10, "{row:?}");
    assert_eq!(number("writes"), number("renewals"), "{row:?}");
    // Nothing waits for the disk: the lease record is not fsynced (nothing reads it back) and the
    // campaign document is not written.
    assert_eq!(number("durable"), 0, "{row:?}");
    assert_eq!(number("wakes"), 0, "{row:?}");
    assert!(number("ticks") >= 40 * 15, "the cadence was kept: {row:?}");
    let refused = Command::new(BIN)
        .args([
            "bench",
            "--campaigns",
            "5",
            "--seconds",
            "1",
            "--controlling",
            "0.5",
        ])
        .args([
            "--remote",
            "http://127.0.0.1:9/",
            "--allow-insecure-loopback",
        ])
        .output()
        .expect("bench");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("--controlling needs the bench's own simulated remote"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// `bench --campaigns 0` measures only time-to-notice (it panicked on an empty task list), and
/// the polling row sets beside the supervisor's CPU a bare poll loop's at the same request rate.
#[test]
fn bench_times_notice_by_polling_against_a_bare_poll_loop_at_the_same_rate() {
    let stdout = bench(&[
        "--campaigns",
        "0",
        "--notice",
        "20",
        "--notice-streaming",
        "0",
    ]);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("time-to-notice, polling-only remote: 20 campaigns, 2 live"))
        .unwrap_or_else(|| panic!("no polling row: {stdout}"));
    assert!(row.contains("2 of 2 noticed"), "{row}");
    let floor = row
        .split("a bare poll loop at the same rate: ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|f| f.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no floor figure: {row}"));
    assert!(floor > 0.0 && floor.is_finite(), "{row}");
    assert!(
        !stdout
            .lines()
            .any(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())),
        "no steady row was asked for: {stdout}"
    );
}

#[test]
fn a_failing_disk_during_a_submit_sends_nothing_even_across_sigkill() {
    let (_sim, url) = start_sim();
    let home = std::env::temp_dir().join(format!("argus-disk-{}", uuid::Uuid::new_v4()));
    let flag = home.with_extension("disk-full");
    let flag_var = flag.to_string_lossy().into_owned();
    let env = [("ARGUS_SUPERVISOR_TEST_FAIL_WRITES_FLAG", flag_var.as_str())];
    let port = free_port();
    let mut serve1 = serve_with(&url, &home, port, &env);
    wait_healthy(port);
    assert!(cli(port, &["observe", "c1", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "c1"]).0);
    wait_state(port, "c1", &["controlling.ready"]);
    std::fs::write(&flag, b"").expect("disk full");
    let (ok, out) = cli(port, &["submit", "c1", "--message", "run"]);
    assert!(
        !ok,
        "a submit that could not be persisted is not accepted: {out}"
    );
    assert!(out.contains("storage"), "{out}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        sends(&audit(&url)).is_empty(),
        "nothing sent without its intent on disk"
    );
    // SIGKILL, the disk comes back, restart: still nothing sent.
    let _ = serve1.child.kill();
    let _ = serve1.child.wait();
    std::fs::remove_file(&flag).expect("disk back");
    let _serve2 = serve_with(&url, &home, port, &env);
    wait_healthy(port);
    wait_state(port, "c1", &["controlling.ready"]);
    std::thread::sleep(Duration::from_millis(1_500));
    let audit = audit(&url);
    assert!(sends(&audit).is_empty(), "{audit}");
    assert_eq!(audit["counters"]["rejected_stale_epoch"], 0);
}

// ----- Issue 13: an operator carries every campaign to its end, and every answer tells the truth --

fn feed(port: u16, id: &str) -> Vec<String> {
    let body = api_get(port, &format!("/campaigns/{id}/messages"));
    procs::feed_texts(&serde_json::from_str(&body).expect("json"))
}

fn arm(sim_url: &str, fault: Value) {
    let (s, _) = http()
        .call(
            true,
            &format!("{sim_url}_sim/faults"),
            Some(SIM_TOKEN),
            Some(fault),
        )
        .expect("arm");
    assert_eq!(s, 200);
}

fn assert_clean_sends(sim_url: &str) -> Value {
    let audit = audit(sim_url);
    assert!(
        sends(&audit).values().all(|n| *n == 1),
        "a request id was sent twice: {:?}",
        sends(&audit)
    );
    assert_eq!(audit["counters"]["rejected_stale_epoch"], 0);
    audit
}

#[test]
fn an_operator_carries_a_two_attempt_mission_to_its_end_through_the_cli() {
    let (_sim, url) = start_sim_with("repair-then-question");
    let (_serve, port) = serving(&url);
    let mut transcript = vec![];
    let mut run = |args: &[&str]| {
        let (ok, out) = cli(port, args);
        transcript.push(format!(
            "$ campaigns {}\n{}",
            args.join(" "),
            out.trim_end()
        ));
        (ok, out)
    };
    let (ok, out) = run(&["observe", "m1", "--objective", "make the campaign pass"]);
    assert!(ok, "{out}");
    let (ok, again) = run(&["observe", "m1", "--objective", "make the campaign pass"]);
    assert!(ok, "observe is idempotent: {again}");
    let (ok, out) = run(&["observe", "m1", "--objective", "something else"]);
    assert!(!ok && out.contains("exists"), "{out}");
    let (ok, out) = run(&["claim", "m1"]);
    assert!(ok && out.contains("lease epoch"), "{out}");
    let (ok, out) = run(&["submit", "m1", "--message", "run attempt 1"]);
    assert!(ok, "{out}");
    wait_state(port, "m1", &["remote_terminal_local_pending"]);
    // A second submit is refused by the state, says so and what to do instead.
    let (ok, out) = run(&["submit", "m1", "--message", "again"]);
    assert!(
        !ok && out.contains("refused here (forbidden_in_state)"),
        "{out}"
    );
    assert!(
        out.contains("Next: the attempt failed: use next-attempt or reject"),
        "{out}"
    );
    let (ok, out) = run(&[
        "next-attempt",
        "m1",
        "--message",
        "run attempt 2 with the repair",
    ]);
    assert!(ok, "{out}");
    wait_state(port, "m1", &["controlling.awaiting_input"]);
    let (ok, show) = run(&["show", "m1"]);
    assert!(
        ok && show.contains("intervene"),
        "the question is pending: {show}"
    );
    assert!(show.contains("attempts  2"), "{show}");
    let (ok, out) = run(&["intervene", "m1", "--message", "use dataset A"]);
    assert!(ok, "{out}");
    wait_state(port, "m1", &["remote_terminal_local_pending"]);
    let (ok, out) = run(&["accept", "m1", "--reason", "evaluation passed"]);
    assert!(ok && out.contains("closed.accepted"), "{out}");
    let (ok, out) = run(&["messages", "m1"]);
    assert!(ok, "{out}");
    println!("{}", transcript.join("\n"));
    println!("feed:\n{out}");

    let lines = feed(port, "m1");
    let expected = [
        "Operator claim: control acquired",
        "Operator submit: done",
        "Attempt 1 failed during preprocessing",
        "Operator next-attempt: done",
        "Needs you: OpenTraining asks (untrusted text): «Two candidate datasets match",
        "Operator intervene: done",
        "Attempt 2 completed; local validation is pending",
        // An action's own line follows what it caused.
        "Mission complete",
        "Operator accept: done",
    ];
    let mut at = 0;
    for want in expected {
        match lines[at..].iter().position(|l| l.starts_with(want)) {
            Some(i) => at += i + 1,
            None => panic!("feed lacks {want:?} after line {at}: {lines:#?}"),
        }
    }
    let audit = assert_clean_sends(&url);
    assert_eq!(
        audit["counters"]["tasks_per_campaign"]["m1"], 2,
        "one task per attempt"
    );
    let (_, events) = cli(port, &["--json", "events", "m1"]);
    assert!(
        !events.contains(r#""evidence_revision": 0"#),
        "no evidence event for an attempt without evidence: {events}"
    );
}

#[test]
fn a_claim_refused_by_another_holder_says_so_and_exits_non_zero() {
    let (_sim, url) = start_sim();
    let (_serve, port) = serving(&url);
    assert!(cli(port, &["observe", "r1", "--objective", "train"]).0);
    arm(
        &url,
        json!({"kind": "takeover", "campaign_id": "r1", "controller_id": "someone-else"}),
    );
    let (ok, out) = cli(port, &["claim", "r1"]);
    println!("$ campaigns claim r1\n{out}");
    assert!(!ok, "a refused claim is not success: {out}");
    assert!(
        out.contains("refused by OpenTraining (held_by_other)"),
        "{out}"
    );
    // The refusal changed nothing: it is the answer's, not the permanent feed's.
    let lines = feed(port, "r1");
    assert!(!lines.iter().any(|l| l.contains("refused")), "{lines:?}");
    let (_, json_out) = cli(port, &["--json", "claim", "r1"]);
    let v: Value = serde_json::from_str(&json_out).expect("json");
    assert_eq!(v["outcome"], "refused");
    assert_eq!(v["code"], "held_by_other");
    assert_eq!(v["refused_by"], "remote");

    // A submit fenced by a takeover is refused too, and the loss says who holds the lease.
    assert!(cli(port, &["observe", "r2", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "r2"]).0);
    wait_state(port, "r2", &["controlling.ready"]);
    arm(
        &url,
        json!({"kind": "takeover", "campaign_id": "r2", "controller_id": "someone-else"}),
    );
    let (ok, out) = cli(port, &["submit", "r2", "--message", "go"]);
    // Fenced by the remote, or — when the heartbeat's read_control saw the takeover first —
    // refused here because the lease is gone: never sent as ours either way.
    assert!(
        !ok && (out.contains("held_by_other") || out.contains("forbidden_in_state")),
        "{out}"
    );
    wait_for_line(
        port,
        "r2",
        "Control lost (another controller holds the lease)",
    );

    // A submit answered by a redirect is not "accepted": its outcome is unknown, and read back.
    assert!(cli(port, &["observe", "r3", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "r3"]).0);
    wait_state(port, "r3", &["controlling.ready"]);
    arm(
        &url,
        json!({"kind": "redirect", "method": "message/send", "location": "http://127.0.0.1:9/", "times": 1}),
    );
    let (ok, out) = cli(port, &["submit", "r3", "--message", "go"]);
    assert!(!ok && out.contains("ambiguous"), "{out}");
    wait_for_line(port, "r3", "Operator submit: sent, outcome unknown");
    wait_for_line(
        port,
        "r3",
        "Needs you: the submit whose answer was lost was read back as not applied",
    );
    // Answering a supervisor's question with no Argus attached says where the answer went.
    let (ok, out) = cli(port, &["answer", "r3", "--message", "understood; leave it"]);
    assert!(
        ok && out.contains("recorded in the campaign's feed"),
        "{out}"
    );
    wait_for_line(port, "r3", "Operator answered: understood; leave it");
    let (ok, out) = cli(port, &["answer", "r3", "--message", "again"]);
    assert!(!ok && out.contains("nothing_pending"), "{out}");
    let audit = assert_clean_sends(&url);
    assert!(audit["counters"]["tasks_per_campaign"]["r3"].is_null());
}

#[test]
fn a_claim_on_an_observer_only_peer_is_refused_as_observer_only_and_changes_nothing() {
    let (_sim, url) = start_sim();
    arm(
        &url,
        json!({"kind": "card", "change": {"change": "remove_operation", "operation": "claim_control"}}),
    );
    let port = free_port();
    let _serve = serve(&url, &tmp_home(), port);
    wait_healthy(port);
    assert!(cli(port, &["observe", "o1", "--objective", "watch"]).0);
    let (_, events_before) = cli(port, &["--json", "events", "o1"]);
    let (ok, out) = cli(port, &["claim", "o1"]);
    assert!(
        !ok && out.contains("claim: refused here (observer_only)"),
        "{out}"
    );
    // A refusal changes nothing: no event, and the campaign is where it was.
    let (_, events) = cli(port, &["--json", "events", "o1"]);
    assert_eq!(events, events_before);
    assert_eq!(state(port, "o1").as_deref(), Some("observing.detached"));
}

#[test]
fn an_unresolvable_ambiguous_write_is_resolved_by_the_operator() {
    let (_sim, url) = start_sim();
    let (_serve, port) = serving(&url);
    assert!(cli(port, &["observe", "a1", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "a1"]).0);
    wait_state(port, "a1", &["controlling.ready"]);
    arm(&url, json!({"kind": "request_status_unavailable"}));
    arm(
        &url,
        json!({"kind": "drop_after_apply", "method": "message/send", "times": 1}),
    );
    let (ok, out) = cli(port, &["submit", "a1", "--message", "go"]);
    assert!(!ok && out.contains("ambiguous"), "{out}");
    // Not while readback may still answer…
    wait_for_question(port, "a1");
    let (ok, out) = cli(port, &["resolve", "a1", "--applied", "task-0001"]);
    println!("$ campaigns resolve a1 --applied task-0001\n{out}");
    assert!(ok, "{out}");
    wait_state(port, "a1", &["controlling.running"]);
    let (_, show) = cli(port, &["show", "a1"]);
    assert!(show.contains("task-0001"), "{show}");
    let audit = assert_clean_sends(&url);
    assert_eq!(audit["counters"]["tasks_per_campaign"]["a1"], 1);
}

fn wait_for_question(port: u16, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let body = api_get(port, &format!("/campaigns/{id}"));
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if v["pending_question"]["text"]
            .as_str()
            .is_some_and(|q| q.contains("campaigns resolve"))
        {
            return;
        }
        assert!(Instant::now() < deadline, "no question: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn abandon_from_a_controlling_state_releases_the_lease_first() {
    let (_sim, url) = start_sim();
    let (_serve, port) = serving(&url);
    assert!(cli(port, &["observe", "b1", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "b1"]).0);
    wait_state(port, "b1", &["controlling.ready"]);
    let (ok, out) = cli(port, &["abandon", "b1", "--reason", "no longer needed"]);
    assert!(ok && out.contains("closed.abandoned"), "{out}");
    let audit = audit(&url);
    assert!(
        audit["entries"].as_array().into_iter().flatten().any(|e| {
            e["method"] == "campaign/release_control"
                && e["campaign_id"] == "b1"
                && e["accepted"] == true
        }),
        "{audit}"
    );
    // Router errors use the one error shape.
    let (s, body) = http()
        .call(
            false,
            &format!("{}/campaigns/b1/claim", base(port)),
            Some(API_TOKEN),
            None,
        )
        .expect("405");
    assert_eq!(s, 405);
    let v: Value = serde_json::from_str(&body).expect("json error");
    assert_eq!(v["error"]["code"], "method_not_allowed");
    let big = json!({"message": "x".repeat(70 * 1024)});
    let (s, body) = http()
        .call(
            true,
            &format!("{}/campaigns/b1/submit", base(port)),
            Some(API_TOKEN),
            Some(big),
        )
        .expect("413");
    assert_eq!(s, 413);
    let v: Value = serde_json::from_str(&body).expect("json error");
    assert_eq!(v["error"]["code"], "body_too_large");
}

#[test]
fn a_vanished_task_and_refused_credentials_are_told_apart_from_an_unreachable_remote() {
    let (_sim, url) = start_sim();
    let port = free_port();
    let _serve = serve(&url, &tmp_home(), port);
    wait_healthy(port);
    assert!(
        cli(
            port,
            &[
                "observe",
                "g1",
                "--objective",
                "watch",
                "--task",
                "no-such-task"
            ]
        )
        .0
    );
    wait_for_line(port, "g1", "The remote task is gone");
    assert!(!feed(port, "g1").iter().any(|l| l.contains("unreachable")));

    let port = free_port();
    let _wrong = serve_with(
        &url,
        &tmp_home(),
        port,
        &[("OPENTRAINING_A2A_TOKEN", "not-the-token")],
    );
    wait_healthy(port);
    assert!(
        cli(
            port,
            &[
                "observe",
                "g2",
                "--objective",
                "watch",
                "--task",
                "task-0001"
            ]
        )
        .0
    );
    wait_for_line(port, "g2", "OpenTraining refused our credentials (");
    assert!(cli(port, &["observe", "g3", "--objective", "watch"]).0);
    let (ok, out) = cli(port, &["claim", "g3"]);
    assert!(!ok && out.contains("auth_failed"), "{out}");
}

fn wait_for_line(port: u16, id: &str, prefix: &str) {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let lines = feed(port, id);
        if lines.iter().any(|l| l.starts_with(prefix)) {
            return;
        }
        assert!(Instant::now() < deadline, "no {prefix:?} in {lines:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A renewal is kept in the lease record alone: through the shipped `serve` (1 s heartbeat, 62 s
/// leases, so one renewal every ~15 s), the API and `leases/<id>.json` show each renewed expiry
/// while `campaigns/<id>.json` keeps the granted one, byte for byte. Killed (SIGKILL) and started
/// again only after that written expiry has passed, the daemon confirms the lease the remote still
/// holds for it — `read_control`, never a claim — and controls again at the same epoch.
#[test]
fn a_renewal_goes_to_the_lease_record_and_a_restart_past_the_written_expiry_still_confirms() {
    let (_sim, sim_url) = start_sim();
    let home = tmp_home();
    let pacing = [("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "62")];
    let port = free_port();
    let daemon = serve_with(&sim_url, &home, port, &pacing);
    wait_healthy(port);
    assert!(cli(port, &["observe", "r1", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "r1"]).0);
    wait_state(port, "r1", &["controlling.ready"]);
    let doc_path = home.join("campaigns/r1.json");
    let lease_of = |v: &Value| -> (u64, u64) {
        let l = &v["machine"]["state"]["lease"];
        (
            l["epoch"].as_u64().expect("epoch"),
            l["expires_at"].as_u64().expect("expiry"),
        )
    };
    let written_bytes = std::fs::read(&doc_path).expect("campaign document");
    let (epoch, written) = lease_of(&serde_json::from_slice(&written_bytes).expect("json"));
    let shown =
        |port| lease_of(&serde_json::from_str(&api_get(port, "/campaigns/r1")).expect("json"));
    assert_eq!(shown(port), (epoch, written));
    // Three renewals: far enough past the written expiry that a restart after it still finds
    // the renewed lease usable (more than the 30 s safety margin left).
    procs::wait_for("three renewals", 90, || shown(port).1 >= written + 40);
    let renewed = shown(port).1;
    let renewals = audit(&sim_url)["entries"]
        .as_array()
        .map(|e| {
            e.iter()
                .filter(|e| e["method"] == "campaign/renew_control")
                .count()
        })
        .unwrap_or(0);
    assert!(renewals >= 3, "{renewals} renewals");
    drop(daemon); // SIGKILL
    assert_eq!(
        std::fs::read(&doc_path).expect("campaign document"),
        written_bytes,
        "no renewal rewrote the campaign document"
    );
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("leases/r1.json")).expect("lease"))
            .expect("lease json");
    let recorded = record["held"]["expires_at"].as_u64().expect("recorded");
    assert!(recorded >= renewed, "{recorded} < {renewed}: {record}");
    assert_eq!(record["held"]["epoch"], epoch);
    // Down until the expiry the campaign document holds has passed.
    procs::wait_for("the written expiry to pass", 90, || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .is_ok_and(|d| d.as_secs() > written + 1)
    });
    let killed_at = audit(&sim_url)["entries"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    let port = free_port();
    let _daemon = serve_with(&sim_url, &home, port, &pacing);
    wait_healthy(port);
    wait_state(port, "r1", &["controlling.ready"]);
    let (now_epoch, now_expiry) = shown(port);
    assert_eq!(now_epoch, epoch, "the same epoch");
    assert!(
        now_expiry >= recorded,
        "the remote's expiry, not the document's"
    );
    let a = audit(&sim_url);
    let after: Vec<&str> = a["entries"].as_array().expect("entries")[killed_at..]
        .iter()
        .filter(|e| e["campaign_id"] == "r1")
        .filter_map(|e| e["method"].as_str())
        .collect();
    assert_eq!(after.first(), Some(&"campaign/read_control"), "{after:?}");
    assert!(!after.contains(&"campaign/claim_control"), "{after:?}");
    procs::assert_supervisor_clean(&a);
    let _ = std::fs::remove_dir_all(&home);
}

/// `campaigns watch` follows the feed as the daemon publishes it: the lines so far, then each new
/// one as it is persisted, and it ends (exit 0) when the campaign closes — through `serve` and the
/// CLI, a second follower alongside.
#[test]
fn watch_follows_the_feed_as_it_is_published_and_ends_when_the_campaign_closes() {
    let (_sim, url) = start_sim_with("long-noisy");
    let (_daemon, port) = serving(&url);
    assert!(cli(port, &["observe", "w1", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "w1"]).0);
    let watch = || {
        let mut child = Command::new(BIN)
            .args([
                "campaigns",
                "--url",
                &format!("http://127.0.0.1:{port}"),
                "watch",
                "w1",
            ])
            .env("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("watch");
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let out = child.stdout.take().expect("stdout");
        let seen = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                seen.lock().expect("lines").push(line);
            }
        });
        (procs::Kill(child), lines, reader)
    };
    let (mut first, first_lines, first_reader) = watch();
    let has = |lines: &Arc<Mutex<Vec<String>>>, text: &str| {
        lines
            .lock()
            .expect("lines")
            .iter()
            .any(|l| l.contains(text))
    };
    // The lines so far.
    procs::wait_for("the claim's line", 30, || {
        has(&first_lines, "Operator claim: control acquired")
    });
    let (mut second, second_lines, second_reader) = watch();
    procs::wait_for("the claim's line, again", 30, || {
        has(&second_lines, "Operator claim: control acquired")
    });
    // Each new line as it is persisted, to both followers.
    assert!(cli(port, &["submit", "w1", "--message", "go"]).0);
    for lines in [&first_lines, &second_lines] {
        procs::wait_for("the submit's line", 30, || {
            has(lines, "Operator submit: done")
        });
    }
    assert!(cli(port, &["abandon", "w1", "--reason", "enough"]).0);
    for child in [&mut first.0, &mut second.0] {
        procs::wait_for("watch to end at the closing", 30, || {
            matches!(child.try_wait(), Ok(Some(_)))
        });
        assert!(child.wait().expect("status").success());
    }
    // Every line the watchers printed is read before it is judged.
    for reader in [first_reader, second_reader] {
        reader.join().expect("reader");
    }
    for lines in [&first_lines, &second_lines] {
        let lines = lines.lock().expect("lines");
        let texts: Vec<&String> = lines.iter().collect();
        let claim = texts
            .iter()
            .filter(|l| l.contains("Operator claim"))
            .count();
        assert_eq!(claim, 1, "each line once: {texts:?}");
        assert!(
            texts.iter().any(|l| l.contains("Operator abandon")),
            "{texts:?}"
        );
    }
}

/// Issue 71: a campaign whose attempt runs on while `serve` is down (stopped as a container stop
/// does, then killed) is read again after each restart, its feed saying so once per restart
/// (`REATTACHED`), and nothing is submitted again: judged by the remote's audit.
#[test]
fn a_restart_during_an_attempt_reattaches_once_per_restart_and_submits_nothing() {
    let (_sim, url) = start_sim();
    let home = tmp_home();
    let reattached = |port: u16| -> Vec<String> {
        let body: Value =
            serde_json::from_str(&api_get(port, "/campaigns/c1/messages")).expect("json");
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["kind"] == "REATTACHED")
            .filter_map(|m| m["text"].as_str().map(str::to_string))
            .collect()
    };
    let port = free_port();
    let mut first = serve(&url, &home, port);
    wait_healthy(port);
    assert!(cli(port, &["observe", "c1", "--objective", "train"]).0);
    assert!(cli(port, &["claim", "c1"]).0);
    wait_state(port, "c1", &["controlling.ready"]);
    assert!(cli(port, &["submit", "c1", "--message", "run"]).0);
    wait_state(port, "c1", &["controlling.running"]);
    assert!(reattached(port).is_empty(), "{:?}", reattached(port));
    // Stopped as `podman stop` stops it (SIGTERM), then started again.
    assert!(Command::new("kill")
        .args(["-TERM", &first.child.id().to_string()])
        .status()
        .expect("kill")
        .success());
    assert!(wait_exit(&mut first, Duration::from_secs(30)).is_some_and(|s| s.success()));
    let port = free_port();
    let second = serve(&url, &home, port);
    wait_healthy(port);
    procs::wait_for("the reattachment said", 30, || reattached(port).len() == 1);
    let said = reattached(port);
    assert!(
        said[0].starts_with("Supervision resumed after the supervisor restarted: task ")
            && said[0].ends_with("is read again. Nothing was submitted again."),
        "{said:?}"
    );
    assert_eq!(state(port, "c1").as_deref(), Some("controlling.running"));
    // Killed, started again: one more line, for this restart only.
    drop(second);
    let port = free_port();
    let _third = serve(&url, &home, port);
    wait_healthy(port);
    procs::wait_for("the second reattachment said", 30, || {
        reattached(port).len() == 2
    });
    // Several more heartbeats read the task: still one line per restart.
    let reads = |a: &Value| {
        a["entries"]
            .as_array()
            .map(|e| e.iter().filter(|e| e["method"] == "tasks/get").count())
            .unwrap_or(0)
    };
    let now = reads(&audit(&url));
    procs::wait_for("three more reads", 30, || reads(&audit(&url)) >= now + 3);
    assert_eq!(reattached(port).len(), 2, "{:?}", reattached(port));
    let a = assert_clean_sends(&url);
    assert_eq!(sends(&a).len(), 1, "one submit in all: {:?}", sends(&a));
    let _ = std::fs::remove_dir_all(&home);
}
