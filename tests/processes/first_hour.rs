//! Issue 57: a newcomer's first hour — what they trip over, each pinned through the binary.

use super::serve_loop::{audit, serve_as, sim, tmp, wait_for, SIM_TOKEN};
use serde_json::{json, Value};

/// Reads of tasks the remote has answered (its own count).
fn task_reads(sim_url: &str) -> u64 {
    audit(sim_url)["counters"]["requests_per_method"]["tasks/get"]
        .as_u64()
        .unwrap_or(0)
}

/// Abandoning a campaign whose task still runs: the task is the remote's now. Nothing reads it
/// again (the remote's own count), nothing about it is quarantined or warned of, nothing was sent to
/// it, and the feed says so once.
#[test]
fn an_abandoned_running_campaign_is_closed_nothing_reads_its_task_and_the_feed_says_it_runs_on() {
    let dir = tmp("abandon-running");
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let log = dir.join("serve.log");
    let d = serve_as(&url, SIM_TOKEN, &dir.join("state"), &[], Some(&log));
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.start_attempt("a1");
    wait_for("the attempt to run", || {
        d.get("/campaigns/a1")
            .is_some_and(|(_, v)| v["remote_state"] == "working")
    });
    let (s, b) = d.act("a1", "abandon", json!({"reason": "enough"}));
    assert_eq!(s, 200, "{b}");
    d.wait_state("a1", "closed.abandoned");
    let ticks = |d: &super::serve_loop::Daemon| {
        d.get("/health")
            .map_or(0, |(_, h)| h["heartbeat"]["ticks"].as_u64().unwrap_or(0))
    };
    // A read already on its way when the campaign closed may still land: count from the next tick.
    let from = ticks(&d);
    wait_for("a heartbeat after the close", || ticks(&d) > from);
    let reads = task_reads(&url);
    let from = ticks(&d);
    wait_for("five more heartbeats", || ticks(&d) >= from + 5);
    assert_eq!(task_reads(&url), reads, "the abandoned task was read again");
    let view: Value = d.get("/campaigns/a1").expect("view").1;
    assert_eq!(view["quarantined"], 0, "{view}");
    assert_eq!(
        super::contract::sent(&url, "tasks/cancel", 0),
        0,
        "abandon sent a cancel"
    );
    let told: Vec<String> = d
        .feed("a1")
        .into_iter()
        .filter(|l| l.contains("runs on at OpenTraining"))
        .collect();
    assert_eq!(told.len(), 1, "{:?}", d.feed("a1"));
    assert!(told[0].contains("nothing was sent to it"), "{told:?}");
    d.terminate();
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !logged.contains("WARN"),
        "{}",
        logged
            .lines()
            .filter(|l| l.contains("WARN"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The remote restarts and forgets its leases: our lease is lost, and the feed says the remote
/// forgot it — not that another controller took over (there is none).
#[test]
fn a_lease_the_remote_forgot_is_not_called_a_takeover() {
    let dir = tmp("forgotten-lease");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve_as(&url, SIM_TOKEN, &dir.join("state"), &[], None);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    d.observe_and_claim("f1", "train");
    d.wait_state("f1", "controlling.ready");
    super::contract::arm(&url, json!({"kind": "forget_leases"}));
    wait_for("the loss to be told", || {
        d.feed("f1").iter().any(|l| l.starts_with("Control lost"))
    });
    let lost: Vec<String> = d
        .feed("f1")
        .into_iter()
        .filter(|l| l.starts_with("Control lost"))
        .collect();
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert!(
        lost[0].contains("OpenTraining no longer knows our lease")
            && !lost[0].contains("another controller took over"),
        "{lost:?}"
    );
    d.terminate();
}

/// The daemon's root leads to the panel; a token the CLI lacks or the API refuses is said in
/// terms of ARGUS_SUPERVISOR_API_TOKEN (unset or refused), never as HTTP; a closed campaign's
/// refusal says nothing more can be done rather than "wait".
#[test]
fn the_root_leads_to_the_panel_token_errors_name_the_variable_and_a_closed_campaign_says_so() {
    let dir = tmp("front-door");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve_as(&url, SIM_TOKEN, &dir.join("state"), &[], None);
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    let base = format!("http://127.0.0.1:{}", d.port);
    let (s, page) =
        crate::support::procs::raw("GET", &format!("{base}/"), &[], None).expect("the root");
    assert_eq!(s, 200, "{page}");
    assert!(page.contains("panel.js"), "the panel: {page}");
    let cli = |token: Option<&str>| {
        let mut c = std::process::Command::new(crate::support::procs::BIN);
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .args(["campaigns", "--url", &base, "list"]);
        if let Some(t) = token {
            c.env("ARGUS_SUPERVISOR_API_TOKEN", t);
        }
        let out = c.output().expect("cli");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), said)
    };
    let (code, said) = cli(None);
    assert_eq!(code, Some(4), "{said}");
    assert!(
        said.contains("ARGUS_SUPERVISOR_API_TOKEN is not set"),
        "{said}"
    );
    let (code, said) = cli(Some("not-the-token"));
    assert_eq!(code, Some(4), "{said}");
    assert!(
        said.contains("refused the token in ARGUS_SUPERVISOR_API_TOKEN")
            && !said.contains("not-the-token"),
        "{said}"
    );
    // The API's own answer names the variable too.
    let (s, body) = crate::support::procs::raw("GET", &d.api("/status"), &[], None).expect("401");
    assert_eq!(s, 401);
    assert!(body.contains("ARGUS_SUPERVISOR_API_TOKEN"), "{body}");
    // A closed campaign: nothing more can be done, and its refusal says so.
    let (s, b) = d.act("c1", "observe", json!({"objective": "train"}));
    assert_eq!(s, 200, "{b}");
    let (s, b) = d.act("c1", "abandon", json!({"reason": "done with it"}));
    assert_eq!(s, 200, "{b}");
    let (s, b) = d.act("c1", "claim", json!({}));
    assert_eq!(s, 409, "{b}");
    assert!(
        b["next"]
            .as_str()
            .is_some_and(|n| n.starts_with("none: the campaign is closed")),
        "{b}"
    );
    // Pause says what it did to the lease; resume says how it comes back.
    d.observe_and_claim("c2", "train");
    d.wait_state("c2", "controlling.ready");
    let (s, b) = d.act("c2", "pause", json!({}));
    assert_eq!(s, 200, "{b}");
    assert!(
        b["message"]
            .as_str()
            .is_some_and(|m| m.contains("a held lease is released")),
        "{b}"
    );
    let (s, b) = d.act("c2", "resume", json!({}));
    assert_eq!(s, 200, "{b}");
    assert!(
        b["message"]
            .as_str()
            .is_some_and(|m| m.contains("observing; `claim` takes control again")),
        "{b}"
    );
    // The API's own refusals have the one shape: the verb, who refused, the code, the next step;
    // and each code is in the guide's tables (tests/units/refusals.rs).
    let (s, b) = d.act("c2", "answer", json!({"message": "yes"}));
    assert_eq!(s, 409, "{b}");
    assert!(
        b["message"].as_str().is_some_and(|m| m
            .starts_with("answer: refused here (nothing_pending): ")
            && m.contains(". Next: ")),
        "{b}"
    );
    let (s, b) = d.act("c2", "observe", json!({"objective": "another"}));
    assert_eq!(s, 409, "{b}");
    assert!(
        b["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("observe: refused here (exists): ")),
        "{b}"
    );
    // The help says the same: what pause does to the lease, and that intervene is a mid-run
    // message (answer is for a pending question).
    let help = |verb: &str| {
        let out = std::process::Command::new(crate::support::procs::BIN)
            .args(["campaigns", verb, "--help"])
            .output()
            .expect("help");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        help("pause").contains("a held lease is released"),
        "{}",
        help("pause")
    );
    assert!(
        help("resume").contains("as an observer"),
        "{}",
        help("resume")
    );
    assert!(
        help("intervene").contains("mid-run"),
        "{}",
        help("intervene")
    );
    let (ok, out) = d.cli(&["show", "nope"]);
    assert!(
        !ok && out.contains("refused here (no_such_campaign)") && out.contains("Next: "),
        "{out}"
    );
    d.terminate();
}
