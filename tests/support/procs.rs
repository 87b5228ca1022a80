//! Helpers shared by the tests that run the shipped binary as processes (`sim`, `serve`).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_argus-supervisor");

/// A child process killed (SIGKILL) and reaped when dropped.
pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Judge the supervisor by what it sent, from a sim's `_sim/audit` answer: no submit sent twice
/// under one request id, no write it should have known was stale, no stale write accepted.
pub fn assert_supervisor_clean(audit: &serde_json::Value) {
    assert_sent_on_purpose(audit, Deliberate::default());
    assert_eq!(audit["counters"]["stale_or_expired_accepted"], 0);
}

/// What a test sent on purpose that the sim counts against a supervisor: `qualify`'s checks
/// repeat one submit's request id and renew under a stale and a released epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deliberate {
    pub repeated_submits: u64,
    pub known_stale_writes: u64,
}

/// [`assert_supervisor_clean`], where exactly `deliberate` was sent on purpose, and nothing more.
pub fn assert_sent_on_purpose(audit: &serde_json::Value, deliberate: Deliberate) {
    let c = &audit["counters"];
    assert_eq!(
        c["repeated_submits"], deliberate.repeated_submits,
        "a submit was sent twice under one request id: {}",
        c["submits_per_request_id"]
    );
    assert_eq!(
        c["known_stale_writes"], deliberate.known_stale_writes,
        "the supervisor sent a write it should have known was stale"
    );
}

/// A sim's audit over plain HTTP.
pub fn sim_audit(url: &str, token: &str) -> serde_json::Value {
    call(
        false,
        &format!("{url}_sim/audit"),
        token,
        serde_json::Value::Null,
        reqwest::Client::builder(),
    )
    .map(|(_, body)| body)
    .expect("sim audit")
}

/// A sim process. Over plain HTTP it is audited when the test ends (unless the test already
/// failed or stopped the sim itself): [`assert_supervisor_clean`] holds in every process test.
pub struct SimProc {
    child: Kill,
    url: String,
    token: String,
    deliberate: Deliberate,
}

impl SimProc {
    /// The test sends these on purpose (`qualify`); the audit at the end expects exactly them.
    pub fn expect_deliberate(&mut self, deliberate: Deliberate) {
        self.deliberate = deliberate;
    }
}

impl Drop for SimProc {
    fn drop(&mut self) {
        let running = matches!(self.child.0.try_wait(), Ok(None));
        if running && self.url.starts_with("http://") && !std::thread::panicking() {
            // On a thread of its own: the drop may run inside an async test's runtime.
            let (url, token) = (self.url.clone(), self.token.clone());
            let audit = std::thread::spawn(move || sim_audit(&url, &token))
                .join()
                .expect("sim audit");
            if self.deliberate == Deliberate::default() {
                assert_supervisor_clean(&audit);
            } else {
                // A lying sim (armed on purpose) may accept what it should not: only what the
                // test sent is judged.
                assert_sent_on_purpose(&audit, self.deliberate);
            }
        }
    }
}

/// `argus-supervisor sim` on `listen` with `scenario`, `token` and any extra arguments; returns the
/// process and the base URL it prints.
pub fn spawn_sim<I, S>(listen: &str, scenario: &str, token: &str, extra: I) -> (SimProc, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut child = Command::new(BIN)
        .args([
            "sim",
            "--listen",
            listen,
            "--scenario",
            scenario,
            "--token",
            token,
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn sim");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("sim url");
    let url = line.trim().to_string();
    let sim = SimProc {
        child: Kill(child),
        url: url.clone(),
        token: token.to_string(),
        deliberate: Deliberate::default(),
    };
    (sim, url)
}

/// Wait until `ok` holds, polling, for at most `secs` seconds.
pub fn wait_for(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `argus-supervisor serve` as the process tests run it: a clean environment with the remote's
/// URL and token, the API token, the state root and listener, a 1 s heartbeat, a 120 s lease and a
/// 3 s readback grace (above the longest request a test holds at the remote), writes not waiting
/// for a qualification record. Add to it (e.g.
/// `--allow-insecure-loopback` for a plain-HTTP sim), then spawn.
pub fn serve_command(
    remote_url: &str,
    remote_token: &str,
    api_token: &str,
    home: &std::path::Path,
    port: u16,
) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("OPENTRAINING_A2A_URL", remote_url)
        .env("OPENTRAINING_A2A_TOKEN", remote_token)
        .env("ARGUS_SUPERVISOR_API_TOKEN", api_token)
        .env("ARGUS_SUPERVISOR_HOME", home)
        .env("ARGUS_SUPERVISOR_LISTEN", format!("127.0.0.1:{port}"))
        .env("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "1")
        .env("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "120")
        .env("ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS", "3")
        // These tests start where an operator has accepted the remote; the policy's own tests
        // (`qualification.rs`) run `serve` with its default (on) and `qualify` first.
        .env("ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION", "0");
    cmd
}

/// One HTTP call with a bearer token; the status and the JSON body (null when not JSON).
pub fn call(
    post: bool,
    url: &str,
    token: &str,
    body: serde_json::Value,
    client: reqwest::ClientBuilder,
) -> Option<(u16, serde_json::Value)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        let c = client.build().ok()?;
        let req = if post {
            c.post(url).json(&body)
        } else {
            c.get(url)
        };
        let r = req.bearer_auth(token).send().await.ok()?;
        let status = r.status().as_u16();
        Some((status, r.json().await.unwrap_or(serde_json::Value::Null)))
    })
}

/// The texts of a `GET campaigns/{id}/messages` answer, oldest first.
pub fn feed_texts(messages: &serde_json::Value) -> Vec<String> {
    messages["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["text"].as_str().map(str::to_string))
        .collect()
}

/// One row of `bench`'s report, by the header's column names (each one word, as every value is).
pub fn bench_row(stdout: &str, campaigns: usize) -> std::collections::BTreeMap<String, String> {
    let words = |first: &str| -> Vec<String> {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(first))
            .unwrap_or_else(|| panic!("no line starting {first}: {stdout}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let (header, row) = (words("campaigns"), words(&campaigns.to_string()));
    assert_eq!(header.len(), row.len(), "{header:?}\n{row:?}");
    header.into_iter().zip(row).collect()
}

/// The time-to-notice histogram's count and sum in a `metrics` scrape.
pub fn notice_times(metrics: &str) -> (u64, f64) {
    let value = |series: &str| {
        metrics
            .lines()
            .find_map(|l| {
                l.strip_prefix(series)?
                    .strip_prefix(' ')?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {series} in {metrics}"))
    };
    (
        value("argus_supervisor_time_to_notice_seconds_count") as u64,
        value("argus_supervisor_time_to_notice_seconds_sum"),
    )
}

/// One HTTP call as given (method, headers, body): the status and the body as text.
pub fn raw(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Option<(u16, String)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        let c = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .ok()?;
        let mut req = c.request(method.parse().ok()?, url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_vec());
        }
        let r = req.send().await.ok()?;
        Some((r.status().as_u16(), r.text().await.unwrap_or_default()))
    })
}

/// An executable shell script at `path` running `body` (a stand-in or a wrapper for a neighbour).
pub fn executable(path: &std::path::Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The Python of the venv `name` scripts/test.sh prepares (a real A2A server's, Agent Zero's, …).
pub fn venv_python(name: &str) -> std::path::PathBuf {
    venv_file(name, "bin/python")
}

/// A file in the venv `name` scripts/test.sh prepares (under `ARGUS_INTEROP_VENVS`); the tests
/// fail, saying so, without it: they never pass without having run.
pub fn venv_file(name: &str, file: &str) -> std::path::PathBuf {
    let venvs = std::env::var("ARGUS_INTEROP_VENVS").expect(
        "ARGUS_INTEROP_VENVS is not set: run the tests with scripts/test.sh, which prepares the Python peers",
    );
    let path = std::path::PathBuf::from(venvs).join(name).join(file);
    assert!(
        path.exists(),
        "{} is missing: run scripts/test.sh",
        path.display()
    );
    path
}

/// The real Argus MCP server: `argus-plugin-server` from the vendored argus-skill 0.1.2, in the
/// venv scripts/test.sh prepares.
pub fn real_argus_server() -> std::path::PathBuf {
    venv_file("argus-skill-0.1.2", "bin/argus-plugin-server")
}
