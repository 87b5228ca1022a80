//! Issue 54: the real Argus decides. `serve` with the real `argus-plugin-server` (argus-skill
//! 0.1.2, in its own venv) and the daemon it starts; only the model behind Argus is a double: a
//! scripted stand-in for its agent CLI (`tests/interop/servers/claude_standin.py`, answering in
//! the shapes vendor/argus-skill/DISPATCH.md recorded), whose own log counts Argus's model turns.
//! Argus runs its Manager, Planner, Engineer and Reviewer for every wake. Judged from outside: the
//! sim's audit (what the supervisor sent), the API and the CLI, the stand-in's log and prompts,
//! and the processes left on the host. These tests run one at a time, and each ends with every
//! Argus daemon it caused gone, checked by process id.

use super::serve_loop::{clean_sends, serve, sim, tmp, wait_for, Daemon, API_TOKEN, SIM_TOKEN};
use crate::support::procs::{executable, real_argus_server};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// One Argus test at a time: each runs a real runtime and its daemons.
pub(crate) static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A test's rig: the stand-in's directory (its log, prompts and control file), Argus's home.
pub(crate) struct Rig {
    pub(crate) dir: PathBuf,
    standin: PathBuf,
    argus_home: PathBuf,
}

impl Rig {
    pub(crate) fn new(tag: &str) -> Rig {
        let dir = tmp(tag);
        let standin = dir.join("standin");
        std::fs::create_dir_all(standin.join("bin")).expect("dir");
        // The stand-in is named `claude` and found first on PATH, as Argus looks for it.
        executable(
            &standin.join("bin/claude"),
            &format!(
                "STANDIN_DIR={} exec python3 {}/tests/interop/servers/claude_standin.py \"$@\"",
                standin.display(),
                env!("CARGO_MANIFEST_DIR")
            ),
        );
        let argus_home = dir.join("argus-home");
        Rig {
            dir,
            standin,
            argus_home,
        }
    }

    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "ARGUS_SUPERVISOR_ARGUS_BIN",
                real_argus_server().display().to_string(),
            ),
            (
                "ARGUS_SUPERVISOR_ARGUS_HOME",
                self.argus_home.display().to_string(),
            ),
            ("ARGUS_SUPERVISOR_BACKEND", "claude".into()),
            (
                "PATH",
                format!(
                    "{}:{}",
                    self.standin.join("bin").display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            ),
        ]
    }

    /// Steer the stand-in's next answers (read on every call).
    pub(crate) fn control(&self, c: Value) {
        let path = self.standin.join("control.json");
        let tmp = self.standin.join("control.json.tmp");
        std::fs::write(&tmp, c.to_string()).expect("control");
        std::fs::rename(tmp, path).expect("control");
    }

    /// Every call the stand-in answered, in order.
    fn calls(&self) -> Vec<Value> {
        std::fs::read_to_string(self.standin.join("calls.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The model turns Argus took (its readiness probes at each daemon boot are not turns).
    pub(crate) fn turns(&self) -> Vec<String> {
        self.calls()
            .iter()
            .filter_map(|c| c["role"].as_str().map(str::to_string))
            .filter(|r| !matches!(r.as_str(), "version" | "auth" | "engineer-decision"))
            .collect()
    }

    /// The decisions Argus's Engineer wrote, as the stand-in logged them.
    fn decisions(&self) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter(|c| c["role"] == "engineer-decision")
            .map(|c| c["decision"].clone())
            .collect()
    }

    /// The prompts of one role, as Argus gave them to the model.
    pub(crate) fn prompts(&self, role: &str) -> Vec<String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.standin.join("prompts"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(&format!("-{role}.txt")))
            })
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap_or_default())
            .collect()
    }

    /// The Argus daemons alive on this host that work under this rig's Argus home.
    fn daemons(&self) -> Vec<u32> {
        argus_daemons(&self.argus_home)
    }

    /// Kill every Argus daemon of this rig (SIGKILL), as a crash would.
    fn kill_daemons(&self) -> Vec<u32> {
        let pids = self.daemons();
        for pid in &pids {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        pids
    }

    /// Stop `serve` with SIGTERM and check that no Argus daemon it caused outlives it.
    pub(crate) fn stop(&self, d: Daemon) {
        let status = d.terminate();
        assert!(status.success(), "serve exited {status}");
        let left = self.daemons();
        assert!(left.is_empty(), "Argus daemons outlived serve: {left:?}");
    }
}

/// A test that failed part-way leaves no Argus daemon behind either (a passing one has already
/// checked there is none).
impl Drop for Rig {
    fn drop(&mut self) {
        self.kill_daemons();
    }
}

/// The processes running `argus_skill.daemon.spawn_helper` with `ARGUS_SKILL_HOME=home`.
fn argus_daemons(home: &Path) -> Vec<u32> {
    let want = format!("ARGUS_SKILL_HOME={}", home.display());
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains("argus_skill.daemon.spawn_helper")
                && env.split(|b| *b == 0).any(|kv| kv == want.as_bytes())
        })
        .collect()
}

fn count(feed: &[String], prefix: &str) -> usize {
    feed.iter().filter(|l| l.starts_with(prefix)).count()
}

/// Wait for a campaign's state, allowing for Argus's rounds on a loaded two-core machine.
pub(crate) fn settle(d: &Daemon, id: &str, want: &str) {
    crate::support::procs::wait_for(&format!("{id} to be {want}"), 240, || {
        d.state(id).as_deref() == Some(want)
    });
}

fn view(d: &Daemon, id: &str) -> Value {
    d.get(&format!("/campaigns/{id}")).expect("view").1
}

#[test]
fn the_real_argus_decides_a_repair_and_its_reviewers_verdict_is_what_the_operator_sees() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("argus-decides");
    let (_sim, url) = sim("repair", "127.0.0.1:0");
    let started = std::time::Instant::now();
    let d = serve(&url, &rig.dir.join("state"), &rig.env());
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    d.start_attempt("c1");
    settle(&d, "c1", "closed.accepted");
    println!(
        "one full round (attempt 1 fails, Argus decides the repair, attempt 2 completes, the \
         Reviewer confirms): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // One task per attempt: the Engineer's retry was relayed as exactly one write.
    assert_eq!(clean_sends(&url, "c1"), 2, "one task per attempt");
    let decisions = rig.decisions();
    let kinds: Vec<&str> = decisions
        .iter()
        .filter_map(|d| d["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["retry", "finish"], "{decisions:?}");
    // Argus was woken once per decision boundary (attempt 1's failure, attempt 2's completion),
    // each a full mission of five model turns: no turn for the mission text alone, for the
    // routine heartbeats and stages in between, for self-maintenance or a learning review. (The
    // attempt is accepted by the second mission — its Engineer's finish or its Reviewer's done —
    // never by Argus's daemon being drained.)
    wait_for("Argus's second mission to settle", || {
        rig.turns().len() >= 10
    });
    let turns = rig.turns();
    assert_eq!(
        turns,
        [
            "manager-route",
            "manager-vertical",
            "planner",
            "engineer",
            "reviewer"
        ]
        .repeat(2),
        "Argus's model turns"
    );
    // The Reviewer's verdicts, read where real Argus writes them, each told once; the mission
    // complete once. The second is read from Argus's journal at the link's next poll after its
    // mission settled: waited for, then counted.
    wait_for("the second Reviewer verdict to be told", || {
        count(&d.feed("c1"), "Reviewer verdict: done.") >= 2
    });
    let feed = d.feed("c1");
    println!("feed:\n{}", feed.join("\n"));
    assert_eq!(count(&feed, "Reviewer verdict: done."), 2, "{feed:?}");
    // The real Argus's routine trace — its roles' decision lines, its plan, its Engineer's and
    // Reviewer's words, its daemon's chatter — reaches no feed line (the feed is what the
    // plugin's notifications and the profile's answers in the chat are made from).
    for trace in [
        "ARGUS_ROLE_DECISION",
        "Relay the decision",
        "scripted plan",
        "checked the decision file",
        "no decision needed",
        "executor started",
        "queued; the active executor",
        "manager-",
        "decisions/",
    ] {
        assert!(
            !feed.iter().any(|l| l.contains(trace)),
            "Argus's routine trace ({trace}) reached the feed: {feed:?}"
        );
    }
    assert_eq!(count(&feed, "Mission complete"), 1, "{feed:?}");
    assert_eq!(
        count(
            &feed,
            "Argus approved one bounded repair and started the next attempt."
        ),
        1,
        "{feed:?}"
    );
    assert!(
        !feed.iter().any(|l| l.contains("was not done")),
        "nothing Argus decided was refused: {feed:?}"
    );
    let failed = feed
        .iter()
        .position(|l| l.starts_with("Attempt 1 failed"))
        .expect("the failure");
    let approved = feed
        .iter()
        .position(|l| l.starts_with("Argus approved"))
        .expect("the decision");
    assert!(failed < approved, "{feed:?}");
    let v = view(&d, "c1");
    assert_eq!(v["reviewer_verdict"], "done", "{v}");
    let (ok, shown) = d.cli(&["show", "c1"]);
    assert!(ok, "{shown}");
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("verdict") && l.ends_with("done")),
        "{shown}"
    );
    // What Argus received per wake: the mission contract and the event with its bounded,
    // fenced evidence — never a token, never the remote's routine output.
    let engineer = rig.prompts("engineer");
    assert_eq!(engineer.len(), 2);
    for p in &engineer {
        for part in [
            "OBJECTIVE:",
            "AUTHORITY:",
            "EXECUTION:",
            "ESCALATE:",
            "OUTPUT POLICY:",
            "Decision-worthy event for campaign c1",
            "<untrusted-remote-data>",
        ] {
            assert!(
                p.contains(part),
                "{part} missing from what the Engineer saw"
            );
        }
        assert!(!p.contains(SIM_TOKEN) && !p.contains(API_TOKEN));
        assert!(!p.contains("noise"), "routine output reached Argus");
    }
    let sizes: Vec<u64> = rig
        .calls()
        .iter()
        .filter_map(|c| c["prompt_bytes"].as_u64())
        .collect();
    println!("prompt sizes Argus sent its model: {sizes:?}");
    assert!(sizes.iter().all(|n| *n < 32 * 1024), "{sizes:?}");
    let handoffs = rig.prompts("planner");
    for h in &handoffs {
        let handoff = h
            .split("Manager execution handoff:")
            .nth(1)
            .unwrap_or_default();
        assert!(
            handoff.len() < 16 * 1024,
            "the supervisor's message is bounded: {} bytes",
            handoff.len()
        );
    }
    // Nothing waits: the idle daemon was stopped once its work settled.
    wait_for("the idle Argus daemon to be stopped", || {
        rig.daemons().is_empty()
    });
    rig.stop(d);
}

#[test]
fn argus_blocked_on_a_question_reaches_the_operator_and_no_daemon_outlives_serve() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("argus-blocked");
    let (_sim, url) = sim("repair", "127.0.0.1:0");
    let home = rig.dir.join("state");
    rig.control(json!({
        "decision": "none",
        "reviewer": {"status": "blocked", "reason": "a person must decide the spend",
                     "operator_question": "May I spend more GPU budget on attempt 2?",
                     "operator_options": ["yes, up to 2x", "no"]}
    }));
    let d = super::serve_loop::serve_as(
        &url,
        SIM_TOKEN,
        &home,
        &rig.env(),
        Some(&rig.dir.join("serve-1.log")),
    );
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    d.start_attempt("q1");
    let question = "Needs you (from Argus): May I spend more GPU budget on attempt 2? Options: yes, up to 2x; no.";
    wait_for("Argus's question to reach the operator", || {
        view(&d, "q1")["pending_question"]["text"] == question
    });
    let v = view(&d, "q1");
    assert_eq!(v["reviewer_verdict"], "blocked", "{v}");
    let feed = d.feed("q1");
    assert_eq!(count(&feed, question), 1, "{feed:?}");
    assert_eq!(count(&feed, "Reviewer verdict: blocked."), 1, "{feed:?}");
    // Argus waits on a person with its daemon alive; `serve` stops (SIGTERM) and takes it along.
    // Waited for, not read once: the daemon's process can be seen a moment after the question
    // reaches the view. (It once never was: `serve` drained the daemon between its taking the
    // wake and starting a role, which read as idle; `plan::settled_since_taken` now waits for a
    // mission settled after the wake. `serve-1.log` keeps what `serve` did.)
    wait_for("Argus's daemon to wait on the answer", || {
        !rig.daemons().is_empty()
    });
    rig.stop(d);

    // Back again: the operator answers from the CLI; Argus takes the answer, resolves its
    // question and decides the repair; the campaign completes.
    rig.control(json!({}));
    let d = serve(&url, &home, &rig.env());
    d.wait_health(|h| h["argus"] == "running");
    let (ok, said) = d.cli(&["answer", "q1", "--message", "yes, up to 2x"]);
    assert!(ok, "{said}");
    settle(&d, "q1", "closed.accepted");
    let answered = rig.prompts("manager-answer");
    assert_eq!(answered.len(), 1, "Argus was given the answer once");
    assert!(answered[0].contains("yes, up to 2x"));
    assert_eq!(clean_sends(&url, "q1"), 2);
    let feed = d.feed("q1");
    assert_eq!(
        count(&feed, question),
        1,
        "asked once, across the restart: {feed:?}"
    );
    assert_eq!(count(&feed, "Mission complete"), 1, "{feed:?}");
    assert!(view(&d, "q1")["pending_question"].is_null());
    rig.stop(d);
}

#[test]
fn a_verdict_that_is_not_done_claims_no_completion() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("argus-verdicts");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve(&url, &rig.dir.join("state"), &rig.env());
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    // What the Reviewer answers, the verdict real Argus writes of it, whether a person is asked.
    // (Argus writes research_incomplete, paused_no_breakthrough and exhausted_current_methods
    // only from its research verticals, which the stand-in does not drive: the link's unit tests
    // hold their meaning.)
    let cases = [
        ("continue", "continue", false),
        ("replan_requested", "not_assessed", false),
    ];
    for (i, (answered, verdict, asks)) in cases.iter().enumerate() {
        let id = format!("v{i}");
        rig.control(json!({"decision": "none", "reviewer": {"status": answered, "reason": "scripted verdict"}}));
        d.start_attempt(&id);
        wait_for(&format!("the Reviewer's {verdict}"), || {
            view(&d, &id)["reviewer_verdict"] == *verdict
        });
        // Let the boundary that read it finish telling (the same read tells both).
        wait_for("the verdict's line", || {
            count(&d.feed(&id), &format!("Reviewer verdict: {verdict}.")) == 1
        });
        let feed = d.feed(&id);
        let v = view(&d, &id);
        // No verdict but `done` claims a completion: the attempt stays waiting for its verdict.
        assert_eq!(
            v["state"], "remote_terminal_local_pending",
            "{verdict}: {v}"
        );
        assert_eq!(count(&feed, "Mission complete"), 0, "{verdict}: {feed:?}");
        let needs_you = feed
            .iter()
            .filter(|l| l.starts_with("Needs you (from Argus): its Reviewer says"))
            .count();
        assert_eq!(needs_you, usize::from(*asks), "{verdict}: {feed:?}");
        println!("{verdict}: {}", feed.last().cloned().unwrap_or_default());
    }
    rig.stop(d);
}

#[test]
fn argus_killed_mid_decision_is_said_once_and_nothing_is_relayed_twice() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("argus-killed");
    let (_sim, url) = sim("repair", "127.0.0.1:0");
    // The Engineer takes a while: the daemon is killed while it decides.
    rig.control(json!({"engineer_sleep": 8}));
    let d = serve(&url, &rig.dir.join("state"), &rig.env());
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    d.start_attempt("k1");
    wait_for("Argus's Engineer to be deciding", || {
        rig.turns().iter().any(|t| t == "engineer")
    });
    wait_for("the wake to be taken", || {
        view(&d, "k1")["argus_status"] == "deciding"
    });
    let killed = rig.kill_daemons();
    assert!(!killed.is_empty(), "a daemon to kill");
    rig.control(json!({}));
    settle(&d, "k1", "closed.accepted");
    let feed = d.feed("k1");
    println!("feed:\n{}", feed.join("\n"));
    assert_eq!(
        count(
            &feed,
            "Argus's daemon for this campaign stopped with a decision unfinished"
        ),
        1,
        "{feed:?}"
    );
    assert_eq!(
        count(&feed, "Argus's daemon for this campaign runs again."),
        1,
        "{feed:?}"
    );
    assert_eq!(
        count(&feed, "Argus approved one bounded repair"),
        1,
        "{feed:?}"
    );
    assert_eq!(clean_sends(&url, "k1"), 2, "one task per attempt");
    rig.stop(d);
}

#[test]
fn serve_killed_mid_decision_neither_loses_the_decision_nor_applies_it_twice() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("argus-serve-killed");
    let (_sim, url) = sim("repair", "127.0.0.1:0");
    let home = rig.dir.join("state");
    rig.control(json!({"engineer_sleep": 4}));
    let d = serve(&url, &home, &rig.env());
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    d.start_attempt("s1");
    wait_for("Argus's Engineer to be deciding", || {
        rig.turns().iter().any(|t| t == "engineer")
    });
    // SIGKILL: nothing of the supervisor's stops Argus, whose Engineer writes its decision.
    drop(d);
    wait_for("the decision file", || !rig.decisions().is_empty());
    rig.control(json!({}));
    let d = serve(&url, &home, &rig.env());
    settle(&d, "s1", "closed.accepted");
    let feed = d.feed("s1");
    assert_eq!(
        count(&feed, "Argus approved one bounded repair"),
        1,
        "{feed:?}"
    );
    assert_eq!(clean_sends(&url, "s1"), 2, "one task per attempt");
    rig.stop(d);
}

#[test]
fn a_wake_argus_did_not_take_is_kept_across_a_restart_and_decided_once() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let rig = Rig::new("argus-wake-kept");
    let (_sim, url) = sim("repair", "127.0.0.1:0");
    let home = rig.dir.join("state");
    // Argus's model CLI fails its readiness probe: Argus's daemon cannot start, the wake is not
    // taken and stays in the campaign's Argus record.
    rig.control(json!({"fail_auth": true}));
    let d = serve(&url, &home, &rig.env());
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    d.start_attempt("w1");
    d.wait_health(|h| {
        h["argus"]
            .as_str()
            .is_some_and(|s| s.starts_with("degraded"))
    });
    let record = || {
        std::fs::read_to_string(home.join("argus/w1.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .unwrap_or(Value::Null)
    };
    assert_eq!(record()["undelivered"].as_array().map(Vec::len), Some(1));
    // SIGKILL, then Argus can start again: the restarted supervisor delivers the kept wake.
    drop(d);
    rig.control(json!({}));
    let d = serve(&url, &home, &rig.env());
    settle(&d, "w1", "closed.accepted");
    let kinds: Vec<String> = rig
        .decisions()
        .iter()
        .filter_map(|d| d["kind"].as_str().map(str::to_string))
        .collect();
    assert_eq!(kinds, ["retry", "finish"], "the kept wake decided once");
    assert_eq!(clean_sends(&url, "w1"), 2);
    assert_eq!(record()["undelivered"].as_array().map(Vec::len), Some(0));
    // One condition, told once: Argus not taking the wake (its daemon never started is not also
    // a daemon lost), and its end once.
    let feed = d.feed("w1");
    assert_eq!(
        count(&feed, "Argus is not taking this campaign's wakes"),
        1,
        "{feed:?}"
    );
    assert_eq!(
        count(&feed, "Argus takes this campaign's wakes again"),
        1,
        "{feed:?}"
    );
    assert_eq!(
        count(&feed, "Argus's daemon for this campaign stopped"),
        0,
        "{feed:?}"
    );
    rig.stop(d);
}
