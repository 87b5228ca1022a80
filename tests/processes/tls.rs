//! HTTPS end to end through the shipped binary: `sim --tls-cert/--tls-key` with certificates made
//! here (a test CA, a server certificate for localhost, an expired one, one for the wrong name),
//! `probe` and `serve` trusting the CA through `ARGUS_SUPERVISOR_CA_FILE`, and every failure
//! classified by type (`tls_untrusted`, `tls_hostname`, `tls_expired`) with nothing sent past the
//! handshake and the path token never shown.

use crate::support::procs;

use procs::{assert_supervisor_clean, free_port, spawn_sim, Kill, SimProc, BIN};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const SIM_TOKEN: &str = "sim-secret-tls-5521";
const API_TOKEN: &str = "api-secret-tls-7d1e";
const PATH_TOKEN: &str = "t-pathtoken9931";

/// A test CA and the server certificates it (or nobody) signs, as PEM files in a fresh directory.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new() -> Pki {
        let dir = std::env::temp_dir().join(format!("argus-tls-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "argus-supervisor test CA");
        let ca_key = KeyPair::generate().expect("ca key");
        let ca_cert = ca.self_signed(&ca_key).expect("ca cert");
        std::fs::write(dir.join("ca.pem"), ca_cert.pem()).expect("write");
        let leaf = |name: &str, sans: Vec<String>, expired: bool| {
            let mut p = CertificateParams::new(sans).expect("params");
            p.distinguished_name.push(DnType::CommonName, name);
            if expired {
                p.not_before = rcgen::date_time_ymd(2020, 1, 1);
                p.not_after = rcgen::date_time_ymd(2021, 1, 1);
            }
            let key = KeyPair::generate().expect("key");
            let cert = p.signed_by(&key, &ca_cert, &ca_key).expect("sign");
            std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).expect("write");
            std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).expect("write");
        };
        let local = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        leaf("good", local.clone(), false);
        leaf("expired", local, true);
        leaf("wrong-name", vec!["wrong.example".to_string()], false);
        Pki { dir }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }
}

/// `sim` over HTTPS with the named certificate; returns the process and its base URL.
fn start_sim(pki: &Pki, cert: &str, scenario: &str) -> (SimProc, String) {
    let (child, url) = spawn_sim(
        "127.0.0.1:0",
        scenario,
        SIM_TOKEN,
        [
            "--tls-cert".as_ref(),
            pki.path(&format!("{cert}.pem")).as_os_str(),
            "--tls-key".as_ref(),
            pki.path(&format!("{cert}.key")).as_os_str(),
        ],
    );
    assert!(url.starts_with("https://localhost:"), "{url}");
    (child, url)
}

/// A client that trusts the test CA only (to read the sim's audit and the daemon's API).
fn client(pki: &Pki) -> (tokio::runtime::Runtime, reqwest::Client) {
    let ca = std::fs::read(pki.path("ca.pem")).expect("ca");
    let c = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("pem"))
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    (rt, c)
}

fn get(pki: &Pki, url: &str, token: &str) -> Option<(u16, Value)> {
    let (rt, c) = client(pki);
    rt.block_on(async {
        let r = c.get(url).bearer_auth(token).send().await.ok()?;
        let status = r.status().as_u16();
        Some((status, r.json().await.unwrap_or(Value::Null)))
    })
}

fn post(pki: &Pki, url: &str, token: &str, body: Value) -> Option<(u16, Value)> {
    let (rt, c) = client(pki);
    rt.block_on(async {
        let r = c
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .ok()?;
        let status = r.status().as_u16();
        Some((status, r.json().await.unwrap_or(Value::Null)))
    })
}

fn audit(pki: &Pki, sim: &str) -> Value {
    get(pki, &format!("{sim}_sim/audit"), SIM_TOKEN)
        .expect("audit")
        .1
}

fn requests_seen(pki: &Pki, sim: &str) -> usize {
    audit(pki, sim)["entries"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0)
}

/// `probe --json` with the CA trusted or not; the URL carries Agent Zero's path token.
fn probe(pki: &Pki, sim: &str, trust_ca: bool) -> (bool, Value, String) {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "probe",
        "--json",
        "--url",
        &format!("{sim}a2a/{PATH_TOKEN}/"),
    ])
    .env_remove("ARGUS_SUPERVISOR_CA_FILE")
    .env_remove("ARGUS_SUPERVISOR_CA_ONLY")
    .env("OPENTRAINING_A2A_TOKEN", SIM_TOKEN);
    if trust_ca {
        cmd.env("ARGUS_SUPERVISOR_CA_FILE", pki.path("ca.pem"));
    }
    let out = cmd.output().expect("probe");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), report, all)
}

fn base_probe(pki: &Pki, sim: &str, trust_ca: bool) -> (bool, Value, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(["probe", "--json", "--url", sim])
        .env_remove("ARGUS_SUPERVISOR_CA_ONLY")
        .env("OPENTRAINING_A2A_TOKEN", SIM_TOKEN);
    if trust_ca {
        cmd.env("ARGUS_SUPERVISOR_CA_FILE", pki.path("ca.pem"));
    } else {
        cmd.env_remove("ARGUS_SUPERVISOR_CA_FILE");
    }
    let out = cmd.output().expect("probe");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), report, stdout)
}

#[test]
fn probe_over_https_trusted_untrusted_wrong_name_expired_and_a_redirect_to_http() {
    let pki = Pki::new();
    let (_good, sim) = start_sim(&pki, "good", "happy");

    // Untrusted first, so the audit proves nothing was sent past the handshake.
    let (ok, report, all) = probe(&pki, &sim, false);
    println!("untrusted: {report}");
    assert!(!ok);
    assert_eq!(report["error"], "tls_untrusted", "{all}");
    assert!(!all.contains(PATH_TOKEN), "the path token leaked: {all}");
    assert_eq!(requests_seen(&pki, &sim), 0, "nothing beyond the handshake");

    let (ok, report, _) = base_probe(&pki, &sim, true);
    println!("trusted: {report}");
    assert!(ok, "{report}");
    assert_eq!(report["compatibility"], "verified_compatible", "{report}");
    assert_eq!(report["mutation_enabled"], true);

    for (cert, class) in [("wrong-name", "tls_hostname"), ("expired", "tls_expired")] {
        let (_bad, bad_sim) = start_sim(&pki, cert, "happy");
        let (ok, report, all) = probe(&pki, &bad_sim, true);
        println!("{cert}: {report}");
        assert!(!ok);
        assert_eq!(report["error"], class, "{all}");
        assert!(!all.contains(PATH_TOKEN));
    }

    // HTTPS redirecting to plain HTTP is refused, not followed.
    let (s, _) = post(
        &pki,
        &format!("{sim}_sim/faults"),
        SIM_TOKEN,
        json!({"kind": "redirect", "method": "card", "location": "http://127.0.0.1:9/agent.json"}),
    )
    .expect("arm");
    assert_eq!(s, 200);
    let (ok, report, _) = base_probe(&pki, &sim, true);
    println!("redirect: {report}");
    assert!(!ok);
    assert_eq!(report["error"], "redirect_refused", "{report}");
}

fn serve(sim: &str, home: &Path, port: u16, ca: Option<&Path>) -> Kill {
    let log = std::fs::File::create(home.with_extension("log")).expect("log");
    // Plain `serve` (no --allow-insecure-loopback): the remote is HTTPS.
    let mut cmd = procs::serve_command(sim, SIM_TOKEN, API_TOKEN, home, port);
    cmd.stdout(Stdio::null()).stderr(log);
    if let Some(ca) = ca {
        cmd.env("ARGUS_SUPERVISOR_CA_FILE", ca);
    }
    Kill(cmd.spawn().expect("spawn serve"))
}

fn api(port: u16) -> String {
    format!("http://127.0.0.1:{port}/api/plugins/argus-supervisor")
}

fn plain(method_post: bool, url: &str, body: Value) -> Option<(u16, Value)> {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5));
    procs::call(method_post, url, API_TOKEN, body, client)
}

fn wait_for(what: &str, f: impl FnMut() -> bool) {
    procs::wait_for(what, 40, f)
}

#[test]
fn serve_over_https_runs_the_controller_flow_and_without_the_ca_says_why_it_cannot() {
    let pki = Pki::new();
    let (_sim, sim) = start_sim(&pki, "good", "happy");

    // Without the CA: the daemon answers at once, health names the class, nothing is sent.
    let home = std::env::temp_dir().join(format!("argus-tls-home-{}", uuid::Uuid::new_v4()));
    let port = free_port();
    {
        // Agent Zero's form of URL: the token in the path, never to be shown.
        let _serve = serve(&format!("{sim}a2a/{PATH_TOKEN}/"), &home, port, None);
        wait_for("health naming tls_untrusted", || {
            plain(false, &format!("{}/health", api(port)), Value::Null)
                .is_some_and(|(_, h)| h["remote"]["last_error"] == "tls_untrusted")
        });
        // Reads answer (campaigns recovered from disk); actions that need the remote answer 503.
        let (s, body) =
            plain(false, &format!("{}/campaigns", api(port)), Value::Null).expect("answer");
        assert_eq!(s, 200, "{body}");
        let (s, _) = plain(
            true,
            &format!("{}/campaigns/c0/observe", api(port)),
            json!({"objective": "train"}),
        )
        .expect("observe");
        assert_eq!(s, 200);
        let (s, body) = plain(
            true,
            &format!("{}/campaigns/c0/claim", api(port)),
            json!({}),
        )
        .expect("claim");
        assert_eq!(s, 503, "{body}");
        assert_eq!(body["error"]["code"], "remote_unavailable");
        assert_eq!(requests_seen(&pki, &sim), 0, "nothing beyond the handshake");
        let (_, health) =
            plain(false, &format!("{}/health", api(port)), Value::Null).expect("health");
        println!("health while the CA is not trusted: {health}");
        let log = std::fs::read_to_string(home.with_extension("log")).unwrap_or_default();
        assert!(log.contains("tls_untrusted"), "{log}");
        assert!(!log.contains(PATH_TOKEN) && !health.to_string().contains(PATH_TOKEN));
    }

    // With the CA: observe → claim → submit → completion → release, over HTTPS.
    let home = std::env::temp_dir().join(format!("argus-tls-home-{}", uuid::Uuid::new_v4()));
    let port = free_port();
    let _serve = serve(&sim, &home, port, Some(&pki.path("ca.pem")));
    wait_for("the remote to be discovered", || {
        plain(false, &format!("{}/health", api(port)), Value::Null)
            .is_some_and(|(_, h)| h["remote"]["state"] == "discovered")
    });
    let act = |action: &str, body: Value| {
        plain(true, &format!("{}/campaigns/c1/{action}", api(port)), body).expect("answer")
    };
    assert_eq!(act("observe", json!({"objective": "train"})).0, 200);
    assert_eq!(act("claim", json!({})).0, 200);
    let state = || {
        plain(false, &format!("{}/campaigns/c1", api(port)), Value::Null)
            .and_then(|(_, d)| d["state"].as_str().map(str::to_string))
    };
    wait_for("controlling.ready", || {
        state().as_deref() == Some("controlling.ready")
    });
    assert_eq!(act("submit", json!({"message": "train"})).0, 200);
    wait_for("the attempt to complete", || {
        state().as_deref() == Some("remote_terminal_local_pending")
    });
    wait_for("the lease to be released", || {
        audit(&pki, &sim)["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["method"] == "campaign/release_control" && e["accepted"] == true)
    });
    let a = audit(&pki, &sim);
    assert_eq!(a["counters"]["tasks_per_campaign"]["c1"], 1);
    assert_eq!(a["counters"]["rejected_stale_epoch"], 0);
    // The sim offers HTTP/2 by ALPN: the supervisor's calls (its only JSON-RPC client here) took
    // it. At least as many as the entries: a poll counted on arrival may not be recorded yet.
    let calls = a["entries"].as_array().map_or(0, Vec::len) as u64;
    let http2 = a["http2_calls"].as_u64().unwrap_or(0);
    assert!(
        calls > 0 && http2 >= calls,
        "{http2} of {calls} calls over HTTP/2"
    );
    assert_supervisor_clean(&a);
}

#[test]
fn an_unusable_trust_configuration_is_refused_before_anything_starts() {
    let home = std::env::temp_dir().join(format!("argus-tls-cfg-{}", uuid::Uuid::new_v4()));
    for (vars, named) in [
        (
            vec![("ARGUS_SUPERVISOR_CA_FILE", "/nonexistent/ca.pem")],
            "ARGUS_SUPERVISOR_CA_FILE",
        ),
        (
            vec![("ARGUS_SUPERVISOR_CA_ONLY", "1")],
            "ARGUS_SUPERVISOR_CA_FILE",
        ),
        (
            vec![("ARGUS_SUPERVISOR_CA_ONLY", "maybe")],
            "ARGUS_SUPERVISOR_CA_ONLY",
        ),
    ] {
        let out = Command::new(BIN)
            .arg("serve")
            .env_clear()
            .env("OPENTRAINING_A2A_URL", "https://localhost:9/")
            .env("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN)
            .env("ARGUS_SUPERVISOR_HOME", &home)
            .envs(vars.iter().copied())
            .output()
            .expect("serve");
        assert_eq!(out.status.code(), Some(2), "{vars:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{vars:?}: {err}");
    }
}

#[test]
fn the_platform_trust_store_is_honoured_through_ssl_cert_file() {
    let pki = Pki::new();
    let (_sim, sim) = start_sim(&pki, "good", "happy");
    // No ARGUS_SUPERVISOR_CA_FILE: the CA reaches the client only as the platform store's override.
    let out = Command::new(BIN)
        .args(["probe", "--json", "--url", &sim])
        .env_remove("ARGUS_SUPERVISOR_CA_FILE")
        .env_remove("ARGUS_SUPERVISOR_CA_ONLY")
        .env("SSL_CERT_FILE", pki.path("ca.pem"))
        .env("OPENTRAINING_A2A_TOKEN", SIM_TOKEN)
        .output()
        .expect("probe");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(out.status.success(), "{report}");
    assert_eq!(report["compatibility"], "verified_compatible");
}
