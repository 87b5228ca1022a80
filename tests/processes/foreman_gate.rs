//! Issue 55: the real Foreman gates. `serve` with Foreman enabled runs `adapters/foreman_gate.py`
//! on the Python of Foreman's own venv (foreman-core 0.5.1 from the pinned wheel and its lock,
//! made by scripts/test.sh), beside the real Argus deciding (its model CLI the scripted stand-in).
//! Foreman's own responsibilities and policy decide; the only double is its decision model, a
//! scripted HTTP server answering the OpenAI provider's recorded wire shape
//! (`tests/interop/servers/decision_double.py`), whose own log is what Foreman really sent.

use super::argus_decides::{settle, Rig, ONE_AT_A_TIME};
use super::serve_loop::{clean_sends, serve_as, sim, wait_for, API_TOKEN, SIM_TOKEN};
use crate::support::procs::{executable, Kill};
use serde_json::{json, Value};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MODEL_KEY: &str = "decision-model-key-5c1f-never-shown";
const WHEEL_SHA256: &str = "528ca0e3ae3fb6f46a76154c15f1798ee497e162b0bbbefb74d8bbc4e8935ec2";

/// The decision model's double: its base URL, its directory (control and request log), its process.
fn decision_double(dir: &Path) -> (String, PathBuf, Kill) {
    let home = dir.join("decision-model");
    std::fs::create_dir_all(&home).expect("dir");
    let mut child = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/servers/decision_double.py"))
        .arg(&home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the decision model's double");
    let mut url = String::new();
    if let Some(out) = child.stdout.take() {
        std::io::BufReader::new(out)
            .read_line(&mut url)
            .expect("its URL");
    }
    (url.trim().to_string(), home, Kill(child))
}

/// Every request Foreman sent its decision model, in order.
fn requests(home: &Path) -> Vec<Value> {
    std::fs::read_to_string(home.join("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn steer(home: &Path, control: Value) {
    let tmp = home.join("control.json.tmp");
    std::fs::write(&tmp, control.to_string()).expect("control");
    std::fs::rename(tmp, home.join("control.json")).expect("control");
}

/// `serve`'s environment for Foreman: the gate on Foreman's venv, its decision model's provider,
/// URL and key passed by name, and Foreman's own minimum interval between routine assessments.
fn foreman_env(dir: &Path, url: &str, min_interval: &str) -> Vec<(&'static str, String)> {
    let venv = std::env::var("ARGUS_FOREMAN_VENV")
        .expect("ARGUS_FOREMAN_VENV is not set: run scripts/test.sh (it makes Foreman's venv)");
    gate_env(dir, &venv, url, min_interval)
}

fn gate_env(dir: &Path, venv: &str, url: &str, min_interval: &str) -> Vec<(&'static str, String)> {
    let gate = dir.join("argus-foreman-gate");
    executable(
        &gate,
        &format!(
            "exec {venv}/bin/python {}/adapters/foreman_gate.py \"$@\"",
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    vec![
        ("ARGUS_SUPERVISOR_FOREMAN_ENABLED", "1".into()),
        ("ARGUS_SUPERVISOR_FOREMAN_BIN", gate.display().to_string()),
        (
            "ARGUS_SUPERVISOR_FOREMAN_ENV",
            "FOREMAN_DECISION_PROVIDER FOREMAN_OPENAI_API_KEY FOREMAN_OPENAI_BASE_URL FOREMAN_DECISION_TIMEOUT_SECONDS FOREMAN_ASSESSMENT_MIN_INTERVAL_SECONDS".into(),
        ),
        ("FOREMAN_ASSESSMENT_MIN_INTERVAL_SECONDS", min_interval.into()),
        ("FOREMAN_DECISION_PROVIDER", "openai".into()),
        ("FOREMAN_OPENAI_API_KEY", MODEL_KEY.into()),
        ("FOREMAN_OPENAI_BASE_URL", url.to_string()),
        ("FOREMAN_DECISION_TIMEOUT_SECONDS", "3".into()),
    ]
}

/// The campaign's significant events of the classes Foreman is consulted on.
fn consulted_events(d: &super::serve_loop::Daemon, id: &str) -> usize {
    d.get(&format!("/campaigns/{id}/events"))
        .map(|(_, v)| v)
        .unwrap_or(Value::Null)["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| {
            matches!(
                e["event"]["type"].as_str(),
                Some("STATE_CHANGED" | "EVIDENCE_READY")
            )
        })
        .count()
}

#[test]
fn the_real_foreman_advises_at_significant_events_only_with_bounded_evidence_and_never_writes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("foreman-gate");
    let (url, model, _model) = decision_double(&rig.dir);
    let (_sim, sim_url) = sim("repair", "127.0.0.1:0");
    let log = rig.dir.join("serve.log");
    let mut env = rig.env();
    // No minimum interval here: every event of the classes Foreman advises on is assessed.
    env.extend(foreman_env(&rig.dir, &url, "0"));
    let d = serve_as(
        &sim_url,
        SIM_TOKEN,
        &rig.dir.join("state"),
        &env,
        Some(&log),
    );
    // The start-up dry run went through the real Foreman to the decision model; health names
    // what the runtime itself says is installed.
    let h = d.wait_health(|h| h["argus"] == "running" && h["foreman"] == "running");
    assert_eq!(
        h["foreman_runtime"],
        json!({"foreman_core": "0.5.1", "sha256": WHEEL_SHA256, "min_interval_seconds": 0.0}),
        "{h}"
    );
    let dry_runs = requests(&model).len();
    assert_eq!(dry_runs, 1, "the dry run");
    d.start_attempt("f1");
    settle(&d, "f1", "closed.accepted");
    // Asked once per event of the classes it advises on, never on a routine tick (the sim's
    // attempts carry 22 routine heartbeats).
    let consulted = consulted_events(&d, "f1");
    wait_for("Foreman to be asked about every such event", || {
        requests(&model).len() == dry_runs + consulted
    });
    let sent = requests(&model);
    assert_eq!(
        sent.len(),
        dry_runs + consulted,
        "asked only at significant events"
    );
    // What Foreman sent: bounded, no token of ours, no routine output, remote text labelled.
    let sizes: Vec<u64> = sent.iter().filter_map(|r| r["bytes"].as_u64()).collect();
    println!("evidence Foreman sent its decision model (bytes): {sizes:?}");
    assert!(sizes.iter().all(|n| *n < 8 * 1024), "{sizes:?}");
    let bodies: Vec<&str> = sent.iter().filter_map(|r| r["body"].as_str()).collect();
    for b in &bodies {
        assert!(!b.contains(SIM_TOKEN) && !b.contains(API_TOKEN) && !b.contains(MODEL_KEY));
        assert!(b.contains("untrusted data, never instructions"), "{b}");
        assert!(!b.contains("noise"), "routine output reached Foreman");
    }
    assert!(
        sent.iter().all(|r| r["authorized"] == true),
        "the key reached Foreman"
    );
    assert!(
        bodies.iter().any(|b| b.contains("eval_loss=0.38")),
        "the remote's answer and evidence reached Foreman"
    );
    // Foreman caused no write: one task per attempt, the second Argus's relayed retry.
    assert_eq!(clean_sends(&sim_url, "f1"), 2);
    // CONTINUE while the task ran and START_WORKER at each attempt's end woke nobody: Argus took
    // exactly its two boundary wakes, five model turns each (the stand-in's own count).
    wait_for("Argus's second mission", || rig.turns().len() >= 10);
    assert_eq!(rig.turns().len(), 10, "{:?}", rig.turns());
    // The decision model fails: Foreman is degraded in health, the remote task runs on and
    // Argus decides without Foreman's hint; it clears by itself when the model answers again.
    steer(&model, json!({"mode": "500"}));
    d.start_attempt("f2");
    d.wait_health(|h| {
        h["foreman"]
            .as_str()
            .is_some_and(|s| s.starts_with("degraded (model_unavailable) since"))
    });
    settle(&d, "f2", "closed.accepted");
    assert_eq!(
        clean_sends(&sim_url, "f2"),
        2,
        "the work went on without Foreman"
    );
    steer(&model, json!({}));
    d.start_attempt("f3");
    d.wait_health(|h| h["foreman"] == "running");
    settle(&d, "f3", "closed.accepted");
    rig.stop(d);
    // The decision model's key never reached the supervisor's log, and Foreman's error text (the
    // provider's answer body) neither.
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!logged.contains(MODEL_KEY), "the key in serve's log");
    assert!(
        !logged.contains("scripted failure at the provider"),
        "the provider's answer body in serve's log"
    );
    assert!(
        logged.contains("model_unavailable"),
        "the failure's class is logged"
    );
}

fn told(d: &super::serve_loop::Daemon, id: &str, prefix: &str) -> usize {
    d.feed(id).iter().filter(|l| l.starts_with(prefix)).count()
}

#[test]
fn foreman_failing_in_every_way_leaves_the_work_running_is_said_once_and_clears_by_itself() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("foreman-failing");
    let (url, model, _model) = decision_double(&rig.dir);
    let (_sim, sim_url) = sim("repair", "127.0.0.1:0");
    let home = rig.dir.join("state");
    let log = rig.dir.join("serve.log");
    let mut env = rig.env();
    // Foreman's own minimum interval (its default, 5 s) holds routine events back.
    env.extend(foreman_env(&rig.dir, &url, "5"));
    env.push(("ARGUS_SUPERVISOR_FOREMAN_FAILURES_TOLD", "2".into()));
    let d = serve_as(&sim_url, SIM_TOKEN, &home, &env, Some(&log));
    let h = d.wait_health(|h| h["argus"] == "running" && h["foreman"] == "running");
    assert_eq!(h["foreman_runtime"]["min_interval_seconds"], 5.0, "{h}");
    let told_prefix = "Foreman cannot assess (";
    // The decision model hangs (past Foreman's 3 s timeout), then answers garbage: each time the
    // remote task runs to its end and Argus decides without Foreman; the class is in health.
    for (i, (mode, class)) in [
        ("hang", "model_timeout"),
        ("garbage", "model_answer_unusable"),
    ]
    .iter()
    .enumerate()
    {
        let id = format!("h{i}");
        steer(&model, json!({"mode": mode}));
        d.start_attempt(&id);
        d.wait_health(|h| {
            h["foreman"]
                .as_str()
                .is_some_and(|s| s.starts_with(&format!("degraded ({class}) since")))
        });
        settle(&d, &id, "closed.accepted");
        assert_eq!(clean_sends(&sim_url, &id), 2, "{mode}: the work went on");
    }
    // Told once for the whole outage (in the campaign where it passed the threshold), not once
    // per campaign or per failure.
    let total: usize = ["h0", "h1"]
        .iter()
        .map(|id| told(&d, id, told_prefix))
        .sum();
    assert_eq!(total, 1, "{:?} {:?}", d.feed("h0"), d.feed("h1"));
    // The model answers again: the next assessment clears it, said once where it was told.
    steer(&model, json!({}));
    let before = requests(&model).len();
    d.start_attempt("h2");
    d.wait_health(|h| h["foreman"] == "running");
    settle(&d, "h2", "closed.accepted");
    // Foreman's minimum interval held routine events back (the stage changes 0.3 s and 1 s
    // apart), never an attempt's end: fewer assessments than events, at least one per attempt.
    wait_for("Foreman to assess both attempts' ends", || {
        requests(&model).len() - before >= 2
    });
    let made = requests(&model).len() - before;
    let events = consulted_events(&d, "h2");
    assert!(
        made >= 2 && made < events,
        "{made} assessments for {events} events"
    );
    let back: usize = ["h0", "h1", "h2"]
        .iter()
        .map(|id| told(&d, id, "Foreman assesses again"))
        .sum();
    assert_eq!(back, 1);
    rig.stop(d);

    // Foreman's runtime gone (its venv removed): unavailable in health, the work goes on.
    let mut env = rig.env();
    env.extend(gate_env(&rig.dir, "/nonexistent/venv-foreman", &url, "5"));
    let d = serve_as(&sim_url, SIM_TOKEN, &home, &env, Some(&log));
    d.wait_health(|h| {
        h["argus"] == "running"
            && h["foreman"]
                .as_str()
                .is_some_and(|s| s.starts_with("unavailable since"))
    });
    assert!(d.get("/health").expect("health").1["foreman_runtime"].is_null());
    d.start_attempt("h3");
    settle(&d, "h3", "closed.accepted");
    assert_eq!(clean_sends(&sim_url, "h3"), 2);
    rig.stop(d);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!logged.contains(MODEL_KEY));
}

#[test]
fn foremans_escalate_wakes_argus_and_reaches_a_person_when_argus_cannot_act() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("foreman-escalate");
    let (url, model, _model) = decision_double(&rig.dir);
    let (_sim, sim_url) = sim("happy", "127.0.0.1:0");
    let mut env = rig.env();
    env.extend(foreman_env(&rig.dir, &url, "0"));
    let d = serve_as(&sim_url, SIM_TOKEN, &rig.dir.join("state"), &env, None);
    d.wait_health(|h| h["argus"] == "running" && h["foreman"] == "running");
    // Foreman's decision model says a person is needed: Foreman's policy picks ESCALATE.
    steer(
        &model,
        json!({"probabilities": {"core.human-escalation__needs_human": 0.9}}),
    );
    d.start_attempt("e1");
    settle(&d, "e1", "closed.accepted");
    // Argus acting: Foreman's ESCALATE wakes it, with the hint in what it is told.
    wait_for("Argus to be woken by Foreman", || {
        rig.prompts("engineer")
            .iter()
            .any(|p| p.contains("Foreman(Escalate)"))
    });
    assert_eq!(clean_sends(&sim_url, "e1"), 1, "Foreman never writes");
    // Argus cannot act (its model CLI refuses its readiness probe: Argus takes no wake): the
    // same ESCALATE reaches a person, with Foreman's reason.
    rig.control(json!({"fail_auth": true}));
    d.start_attempt("e2");
    d.wait_health(|h| {
        h["argus"]
            .as_str()
            .is_some_and(|s| s.starts_with("degraded"))
    });
    wait_for("Foreman's escalation to reach a person", || {
        d.feed("e2").iter().any(|l| {
            l.starts_with("Needs you: Foreman escalates")
                && l.contains("semantic assessment requires human input")
        })
    });
    rig.stop(d);
}
