//! Issue 42: `qualify` through the shipped binary — against the honest sim (every check passes, and
//! the only calls sent twice or under a stale epoch are the checks' own), against each lying sim
//! (exactly its check fails), with `--daemon` (the live acceptance through a child `serve`), and
//! the policy `serve` applies by default (writes refused here until a passing record exists for
//! the current card). Judged by the sim's audit, the report and the API.

use super::serve_loop::{audit, call, serve_as, sim, tmp, Daemon, SIM_TOKEN};
use crate::support::procs::{Deliberate, BIN};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// `qualify` against `url` with the sim's token, the record kept under `home`; its exit code, the
/// JSON report, and everything it printed.
pub(crate) fn qualify(url: &str, home: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(BIN)
        .args([
            "qualify",
            "--url",
            url,
            "--allow-insecure-loopback",
            "--json",
        ])
        .arg("--home")
        .arg(home)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("OPENTRAINING_A2A_TOKEN", SIM_TOKEN)
        .output()
        .expect("qualify");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let said = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!said.contains(SIM_TOKEN), "the token was printed: {said}");
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), report, said)
}

pub(crate) fn write_phase(campaign: &str) -> Vec<String> {
    [
        "--write-campaign",
        campaign,
        "--message",
        "harmless: say hello",
    ]
    .map(String::from)
    .to_vec()
}

fn verdicts(report: &Value, verdict: &str) -> Vec<String> {
    report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["grade"] == verdict)
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect()
}

fn arm(url: &str, fault: Value) {
    let (s, b) = call(true, &format!("{url}_sim/faults"), SIM_TOKEN, fault).expect("arm");
    assert_eq!(s, 200, "{b}");
}

fn clear(url: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    let status = rt.block_on(async {
        reqwest::Client::new()
            .delete(format!("{url}_sim/faults"))
            .bearer_auth(SIM_TOKEN)
            .send()
            .await
            .map(|r| r.status())
    });
    assert!(status.expect("clear").is_success());
}

/// One whole write phase's deliberate calls: the repeated submit, the renewals under a stale and
/// under the released epoch.
pub(crate) const ONE_RUN: Deliberate = Deliberate {
    repeated_submits: 1,
    known_stale_writes: 2,
};

const READ_AND_WRITE_CHECKS: [&str; 19] = [
    "discovery.card",
    "discovery.control",
    "auth.anonymous",
    "auth.scheme",
    "read.tasks_get",
    "read.read_control",
    "read.request_status",
    "lease.claim",
    "lease.readback",
    "lease.renew",
    "lease.stale_epoch",
    "lease.second_controller",
    "mutation.submit",
    "mutation.idempotent_repeat",
    "mutation.readback_applied",
    "mutation.readback_not_applied",
    "mutation.cancel",
    "lease.release",
    "lease.released_epoch_fenced",
];

#[test]
fn qualify_passes_the_honest_sim_and_sends_only_its_own_deliberate_repeats() {
    let (mut _sim, url) = sim("long-noisy", "127.0.0.1:0");
    _sim.expect_deliberate(ONE_RUN);
    let home = tmp("qualify-honest");
    // Without a test campaign only reads go out: exit 3, not qualified for writes.
    let (code, report, said) = qualify(&url, &home, &[]);
    assert_eq!(code, 3, "{said}");
    assert_eq!(report["standing"], "read_only", "{said}");
    let reads = audit(&url);
    let methods: Vec<&str> = reads["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["method"].as_str())
        .collect();
    assert!(
        methods.iter().all(|m| matches!(
            *m,
            "tasks/get" | "campaign/read_control" | "campaign/request_status" | "(unauthorized)"
        )),
        "{methods:?}"
    );
    let report_md = home.join("report.md");
    let mut args = write_phase("qual-a");
    args.extend(["--report".into(), report_md.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, report, said) = qualify(&url, &home, &args);
    assert_eq!(code, 0, "{said}");
    assert_eq!(report["standing"], "qualified", "{said}");
    assert_eq!(verdicts(&report, "PASS"), READ_AND_WRITE_CHECKS, "{said}");
    assert!(verdicts(&report, "FAIL").is_empty(), "{said}");
    assert_eq!(report["controller_id"], "argus-qualify");
    assert_eq!(
        report["auth_mode"],
        "credentials required; token accepted in Authorization: Bearer and X-API-KEY"
    );

    // What it sent: one task for the test campaign, cancelled; one request id sent twice (the
    // repeat check), two renewals it knew were stale (the stale epoch and the released epoch).
    let a = audit(&url);
    let c = &a["counters"];
    assert_eq!(c["tasks_per_campaign"]["qual-a"], 1, "{c}");
    assert_eq!(c["repeated_submits"], 1, "{c}");
    assert_eq!(c["known_stale_writes"], 2, "{c}");
    assert_eq!(c["stale_or_expired_accepted"], 0, "{c}");
    let entries: Vec<&Value> = a["entries"].as_array().into_iter().flatten().collect();
    let sent = |m: &str| entries.iter().filter(|e| e["method"] == m).count();
    assert_eq!(sent("message/send"), 2);
    assert_eq!(sent("tasks/cancel"), 1);
    assert_eq!(sent("campaign/release_control"), 1);
    let stale: Vec<_> = entries
        .iter()
        .filter(|e| e["method"] == "campaign/renew_control" && e["accepted"] == false)
        .map(|e| e["reason"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(stale.len(), 2, "{stale:?}");
    assert!(stale[0].contains("stale epoch"), "{stale:?}");
    assert_eq!(
        entries
            .iter()
            .filter(|e| e["method"] == "campaign/claim_control" && e["accepted"] == false)
            .count(),
        1,
        "the second controller's claim, refused"
    );

    // The Markdown report: §25's sections, the card's hash, no secret.
    let md = std::fs::read_to_string(&report_md).expect("the Markdown report");
    for heading in [
        "**Verdict: QUALIFIED**",
        "## OpenTraining: endpoint capability results",
        "## OpenTraining: auth mode",
        "## OpenTraining: read-only operations proven",
        "## Control: lease behaviour and stale epoch test",
        "## OpenTraining: mutating operations proven",
        "## Tests: live acceptance",
        "| Controller id | argus-qualify |",
    ] {
        assert!(md.contains(heading), "{heading} missing:\n{md}");
    }
    let card = report["card_sha256"].as_str().expect("card hash");
    assert!(md.contains(card));
    assert!(!md.contains(SIM_TOKEN));

    // The record, kept in the state root, and shown by `probe` for the current card.
    let record = report["record"].as_str().expect("record path");
    assert!(record.starts_with(&home.join("qualification").display().to_string()));
    let kept: Value =
        serde_json::from_slice(&std::fs::read(record).expect("record")).expect("record JSON");
    assert_eq!(kept["standing"], "qualified");
    assert_eq!(kept["card_sha256"], card);
    assert!(!kept.to_string().contains(SIM_TOKEN));
    let out = Command::new(BIN)
        .args([
            "probe",
            "--url",
            &url,
            "--allow-insecure-loopback",
            "--home",
        ])
        .arg(&home)
        .env("OPENTRAINING_A2A_TOKEN", SIM_TOKEN)
        .output()
        .expect("probe");
    let probe = String::from_utf8_lossy(&out.stdout);
    assert!(
        probe.contains("qualification  passed (") && probe.contains("campaign qual-a"),
        "{probe}"
    );
}

#[test]
fn each_lying_sim_fails_exactly_its_check_and_the_policy_then_refuses_writes_here() {
    let (mut _sim, url) = sim("long-noisy", "127.0.0.1:0");
    // Each lie stops the run at its check, so fewer deliberate calls go out than in a whole run;
    // `misreport_lease` makes the sim itself believe the next release is under a stale epoch.
    _sim.expect_deliberate(Deliberate {
        repeated_submits: 3,
        known_stale_writes: 6,
    });
    let home = tmp("qualify-lies");
    for (n, (lie, check)) in [
        ("accept_stale_epoch", "lease.stale_epoch"),
        ("reapply_repeated_request", "mutation.idempotent_repeat"),
        ("deny_applied", "mutation.readback_applied"),
        ("misreport_lease", "lease.readback"),
    ]
    .into_iter()
    .enumerate()
    {
        clear(&url);
        arm(&url, json!({ "kind": lie }));
        let campaign = format!("lie-{n}");
        let args = write_phase(&campaign);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, report, said) = qualify(&url, &home, &args);
        assert_eq!(code, 1, "{lie}: {said}");
        assert_eq!(report["standing"], "failed", "{lie}");
        assert_eq!(verdicts(&report, "FAIL"), [check], "{lie}: {said}");
        // Whatever it made is cancelled and the lease given back, the failure notwithstanding.
        let a = audit(&url);
        let made = a["counters"]["tasks_per_campaign"][&campaign]
            .as_u64()
            .unwrap_or(0);
        let cancels = a["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| {
                e["method"] == "tasks/cancel"
                    && e["campaign_id"] == campaign
                    && e["accepted"] == true
            })
            .count() as u64;
        assert_eq!(cancels, made, "{lie}: every task it made is cancelled");
        let released = a["entries"].as_array().into_iter().flatten().any(|e| {
            e["method"] == "campaign/release_control"
                && e["campaign_id"] == campaign
                && e["accepted"] == true
        });
        assert!(released, "{lie}: the lease is given back");
    }

    // The last record failed: `serve` (policy on by default) refuses the claim here, sends
    // nothing, and says why in health.
    clear(&url);
    let log = home.join("serve.log");
    let d = serve_as(
        &url,
        SIM_TOKEN,
        &home,
        &[("ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION", String::new())],
        Some(&log),
    );
    let h = d.wait_health(|h| h["remote"]["state"] == "discovered");
    super::serve_loop::wait_for("the policy's warning at discovery", || {
        std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains("writes to this remote are refused until it is qualified"))
    });
    assert_eq!(h["remote"]["qualification_required"], true, "{h}");
    assert_eq!(h["remote"]["qualification"]["status"], "failed", "{h}");
    assert!(
        h["remote"]["qualification"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("lease.readback")),
        "{h}"
    );
    refused_unqualified(&d, &url, "w1");

    // Qualified against the honest remote: the same claim is done.
    let args = write_phase("qual-b");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, said) = qualify(&url, &home, &args);
    assert_eq!(code, 0, "{said}");
    let h = d.wait_health(|h| h["remote"]["qualification"]["status"] == "passed");
    assert!(h["remote"]["qualification"]["detail"]
        .as_str()
        .is_some_and(|d| d.starts_with("passed (")));
    let (s, b) = d.act("w1", "claim", json!({}));
    assert_eq!((s, &b["outcome"]), (200, &json!("done")), "{b}");

    // A changed card makes the record stale: giving the lease back is never blocked, and new
    // writes are refused again until the new card is qualified.
    arm(
        &url,
        json!({"kind": "card", "change": {"change": "bump_version"}}),
    );
    let (s, b) = d.act("w1", "release", json!({}));
    assert_eq!((s, &b["outcome"]), (200, &json!("done")), "{b}");
    refused_unqualified(&d, &url, "w1");
    let h = d.wait_health(|h| h["remote"]["qualification"]["status"] == "none");
    assert!(
        h["remote"]["qualification"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("earlier agent card")),
        "{h}"
    );
}

/// A claim on `id` refused here as `unqualified_remote`, with the next step, nothing sent.
fn refused_unqualified(d: &Daemon, url: &str, id: &str) {
    let _ = d.act(id, "observe", json!({"objective": "train"}));
    let claims = |a: &Value| {
        a["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["method"] == "campaign/claim_control" && e["campaign_id"] == id)
            .count()
    };
    let before = claims(&audit(url));
    let (s, b) = d.act(id, "claim", json!({}));
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["refused_by"], "supervisor", "{b}");
    assert_eq!(b["code"], "unqualified_remote", "{b}");
    let message = b["message"].as_str().unwrap_or("");
    assert!(
        message.contains("refused here (unqualified_remote)")
            && message.contains("nothing was sent"),
        "{message}"
    );
    assert!(
        b["next"]
            .as_str()
            .is_some_and(|n| n.contains("argus-supervisor qualify")),
        "{b}"
    );
    assert_eq!(claims(&audit(url)), before, "nothing was sent");
}

#[test]
fn qualify_with_daemon_runs_the_live_acceptance_through_a_child_serve() {
    let (mut _sim, url) = sim("long-noisy", "127.0.0.1:0");
    _sim.expect_deliberate(ONE_RUN);
    let home = tmp("qualify-daemon");
    let mut args = write_phase("qual-live");
    args.push("--daemon".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, report, said) = qualify(&url, &home, &args);
    assert_eq!(code, 0, "{said}");
    let live: Vec<String> = verdicts(&report, "PASS")
        .into_iter()
        .filter(|c| c.starts_with("live."))
        .collect();
    assert_eq!(
        live,
        [
            "live.claim_submit",
            "live.no_status_spam",
            "live.restart_recovery",
            "live.one_remote_task",
            "live.release"
        ],
        "{said}"
    );
    // By the remote's audit: the child made exactly one task, sent each of its submits once,
    // never wrote under a stale epoch, and gave the lease back.
    let a = audit(&url);
    let c = &a["counters"];
    assert_eq!(
        c["tasks_per_campaign"]["qual-live"], 2,
        "one of the write phase, one of the child: {c}"
    );
    let child: Vec<&Value> = a["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["controller_id"] == "argus-qualify-daemon")
        .collect();
    let submits: Vec<_> = child
        .iter()
        .filter(|e| e["method"] == "message/send")
        .collect();
    assert_eq!(submits.len(), 1, "{submits:?}");
    assert!(child
        .iter()
        .all(|e| e["accepted"] == true || e["method"] == "campaign/claim_control"));
    assert_eq!(
        child.last().map(|e| e["method"].clone()),
        Some(json!("campaign/release_control"))
    );
    // The child's throwaway state root is gone once it passed.
    assert!(!report.to_string().contains(SIM_TOKEN));
}

/// A token the remote never checks (it answers without one, and its URL has no path that could
/// carry one) protects nothing: the auth check fails, and which header it checks is not guessed.
#[test]
fn a_token_the_remote_never_checks_fails_the_auth_check() {
    use std::io::BufRead;
    let mut child = Command::new(BIN)
        .args(["sim", "--listen", "127.0.0.1:0", "--scenario", "happy"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sim");
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("url");
    let _sim = crate::support::procs::Kill(child);
    let (code, report, said) = qualify(url.trim(), &tmp("qualify-open"), &[]);
    assert_eq!(code, 1, "{said}");
    assert_eq!(verdicts(&report, "FAIL"), ["auth.anonymous"], "{said}");
    assert!(verdicts(&report, "SKIPPED").contains(&"auth.scheme".to_string()));
}

#[test]
fn a_passing_record_ages_out_health_says_stale_and_writes_wait_for_qualify_again() {
    let (mut _sim, url) = sim("long-noisy", "127.0.0.1:0");
    _sim.expect_deliberate(ONE_RUN);
    let home = tmp("qualify-aged");
    let args = write_phase("qual-age");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, report, said) = qualify(&url, &home, &args);
    assert_eq!(code, 0, "{said}");
    // The record says when it was made (and for which card: its digest keys it).
    let path = report["record"].as_str().expect("record path").to_string();
    let mut kept: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("record")).expect("json");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let made = kept["made_at"].as_u64().expect("made_at");
    assert!(now.abs_diff(made) < 600, "{kept}");
    // The deployment it is of: the card's digest keys it, and the agent's version the card states.
    assert!(
        kept["agent_version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{kept}"
    );
    // A hundred days pass.
    kept["made_at"] = json!(made - 100 * 86_400);
    std::fs::write(&path, kept.to_string()).expect("age the record");
    let serve_trusting = |days: &str| {
        serve_as(
            &url,
            SIM_TOKEN,
            &home,
            &[
                ("ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION", String::new()),
                ("ARGUS_SUPERVISOR_QUALIFICATION_MAX_AGE_DAYS", days.into()),
            ],
            None,
        )
    };
    // Trusted for 30 days: stale, said in health with what to do; writes wait, nothing sent.
    let d = serve_trusting("30");
    let h = d.wait_health(|h| h["remote"]["qualification"]["status"] == "stale");
    let detail = h["remote"]["qualification"]["detail"]
        .as_str()
        .unwrap_or("");
    assert!(
        detail.contains("100 days ago")
            && detail.contains("trusted for 30 days")
            && detail.contains("qualify"),
        "{detail}"
    );
    refused_unqualified(&d, &url, "aged1");
    assert!(d.terminate().success());
    // Trusted for a year: the same record lets the claim through.
    let d = serve_trusting("365");
    d.wait_health(|h| h["remote"]["qualification"]["status"] == "passed");
    let (s, b) = d.act("aged1", "claim", json!({}));
    assert_eq!((s, &b["outcome"]), (200, &json!("done")), "{b}");
    assert!(d.terminate().success());
}
