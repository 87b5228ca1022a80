//! The truth oracle (issue 70): what the supervisor says is held against what the remote saw.
//!
//! Generated campaigns run against the simulated remote and `serve`'s own assembly
//! (`daemon::serve_until`: the live remote, the runtime, the keepers, the API on a loopback port),
//! in process so that a heartbeat of 100 ms keeps ten thousand steps within reach. Each case is a
//! sequence of steps: an operator's verb on one of two campaigns, a change of the remote's
//! condition (down, back, answering task reads with a 500 — plain or carrying JSON that is not
//! JSON-RPC —, with a JSON-RPC code the spec does not name, refusing a rotated token, its card
//! changed and changed back, its tasks lost, the lease taken by another, another campaign's
//! artifact on this one's task), or a wait. After each step the rules are checked:
//!
//! - "done" only for what the remote applied (its audit holds the accepted call);
//! - a refusal changed nothing: no call of that verb left when it was refused here, no feed line
//!   of the verb's, no event; one the remote refused was received by it;
//! - never a second remote task nor a stale write (the remote's own counters);
//! - a condition is named for what it is once it has settled (the campaign's state, `health`);
//!   a campaign's feed never tells the same condition twice in a row;
//! - a campaign waiting on the remote reads again within a few heartbeats of it answering;
//! - every verb the answer's `allowed_actions` lists, followed, is not refused as forbidden, and
//!   a `next` that names `intervene` names a verb the campaign allows.
//!
//! `ARGUS_ORACLE_CASES` (default 30) and `ARGUS_ORACLE_STEPS` (default 40) size the run: `.ci/run`
//! runs the default (1,200 steps); `ARGUS_ORACLE_CASES=250` (10,000 steps) is the long run. A failure
//! is shrunk (proptest) and its seed kept in `main.proptest-regressions` beside this file.

use argus_sim::{CardChange, Fault, Scenario, SimHandle, SimOptions};
use argus_supervisor_lib::daemon::{serve_until, ServeArgs, ServeConfig};
use clap::Parser;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const SIM_TOKEN: &str = "oracle-sim-token-5513";
const API_TOKEN: &str = "oracle-api-token-0726";
const CAMPAIGNS: [&str; 2] = ["c0", "c1"];
const HEARTBEAT: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Observe,
    ObserveOthersTask,
    Claim,
    Submit,
    Intervene,
    Answer,
    Cancel,
    Release,
    Pause,
    Resume,
    Accept,
    Reject,
    NextAttempt,
    ResolveNotApplied,
    Abandon,
}

impl Verb {
    fn route(self) -> &'static str {
        match self {
            Verb::Observe | Verb::ObserveOthersTask => "observe",
            Verb::Claim => "claim",
            Verb::Submit => "submit",
            Verb::Intervene => "intervene",
            Verb::Answer => "answer",
            Verb::Cancel => "cancel",
            Verb::Release => "release",
            Verb::Pause => "pause",
            Verb::Resume => "resume",
            Verb::Accept => "accept",
            Verb::Reject => "reject",
            Verb::NextAttempt => "next-attempt",
            Verb::ResolveNotApplied => "resolve",
            Verb::Abandon => "abandon",
        }
    }

    /// The remote calls that must be in the audit, accepted, for a "done" of this verb.
    fn applied_by(self) -> &'static [&'static str] {
        match self {
            Verb::Claim => &["campaign/claim_control"],
            Verb::Submit => &["message/send"],
            Verb::Intervene => &["campaign/intervene"],
            Verb::Cancel => &["tasks/cancel"],
            Verb::Release => &["campaign/release_control"],
            Verb::NextAttempt => &["campaign/claim_control", "message/send"],
            _ => &[],
        }
    }

    fn of(route: &str) -> Option<Verb> {
        ALL_VERBS.iter().copied().find(|v| v.route() == route)
    }
}

const ALL_VERBS: [Verb; 15] = [
    Verb::Observe,
    Verb::ObserveOthersTask,
    Verb::Claim,
    Verb::Submit,
    Verb::Intervene,
    Verb::Answer,
    Verb::Cancel,
    Verb::Release,
    Verb::Pause,
    Verb::Resume,
    Verb::Accept,
    Verb::Reject,
    Verb::NextAttempt,
    Verb::ResolveNotApplied,
    Verb::Abandon,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Condition {
    /// Every fault cleared, the start's token and card again.
    Answering,
    /// No connection at all, for this many heartbeats.
    Down(u8),
    Fault500Plain,
    Fault500Json,
    RpcUnnamed,
    TokenRotated,
    CardChanged,
    TasksLost,
    TakenByOther(usize),
    ForeignArtifact,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Act(usize, Verb),
    /// The verb an operator would take next in the campaign's state (claim an observed one,
    /// submit under a lease, answer a question, settle an ended attempt), so cases go deep.
    Progress(usize),
    Remote(Condition),
    Wait(u8),
}

/// A verb, weighted toward an operator's usual path (claim, submit, answer the question, the next
/// attempt), so that generated cases reach every state; what ends a campaign is rare.
fn verb() -> impl Strategy<Value = Verb> {
    prop_oneof![
        3 => Just(Verb::Observe),
        4 => Just(Verb::ObserveOthersTask),
        12 => Just(Verb::Claim),
        10 => Just(Verb::Submit),
        5 => Just(Verb::Intervene),
        8 => Just(Verb::Answer),
        3 => Just(Verb::Cancel),
        5 => Just(Verb::Release),
        2 => Just(Verb::Pause),
        4 => Just(Verb::Resume),
        2 => Just(Verb::Accept),
        1 => Just(Verb::Reject),
        8 => Just(Verb::NextAttempt),
        2 => Just(Verb::ResolveNotApplied),
        1 => Just(Verb::Abandon),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let verb = verb();
    let condition = prop_oneof![
        4 => Just(Condition::Answering),
        2 => (3u8..15).prop_map(Condition::Down),
        1 => Just(Condition::Fault500Plain),
        1 => Just(Condition::Fault500Json),
        1 => Just(Condition::RpcUnnamed),
        1 => Just(Condition::TokenRotated),
        1 => Just(Condition::CardChanged),
        1 => Just(Condition::TasksLost),
        1 => (0usize..2).prop_map(Condition::TakenByOther),
        1 => Just(Condition::ForeignArtifact),
    ];
    prop_oneof![
        8 => ((0usize..2), verb).prop_map(|(c, v)| Step::Act(c, v)),
        8 => (0usize..2).prop_map(Step::Progress),
        3 => condition.prop_map(Step::Remote),
        3 => (1u8..12).prop_map(Step::Wait),
    ]
}

/// What the remote's task reads meet, from the conditions armed since it last answered plainly.
#[derive(Debug, Default, Clone, Copy)]
struct Reads {
    /// Refused (401): checked before anything else the remote does.
    token_rotated: bool,
    /// Answered with an error (a 500 with a body, an unnamed JSON-RPC code).
    errors: bool,
}

impl Reads {
    fn note(&mut self, c: Condition) {
        match c {
            Condition::Answering => *self = Reads::default(),
            Condition::TokenRotated => self.token_rotated = true,
            Condition::Fault500Plain | Condition::Fault500Json | Condition::RpcUnnamed => {
                self.errors = true
            }
            _ => {}
        }
    }

    /// The state a read-only campaign's failing reads are named by, and health's word for it.
    fn named(&self) -> Option<(&'static str, &'static str)> {
        if self.token_rotated {
            Some(("observing.auth_refused", "auth_refused"))
        } else if self.errors {
            Some(("observing.remote_error", "remote_error"))
        } else {
            None
        }
    }

    /// The remote's audit shows each task read (a refused credential or a transport fault is
    /// answered before the read is).
    fn audited(&self) -> bool {
        !self.token_rotated && !self.errors
    }
}

/// The world one case runs in: the sim, the daemon on a loopback port, and an HTTP client.
struct World {
    sim: SimHandle,
    base: String,
    http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    daemon: Option<tokio::task::JoinHandle<()>>,
    home: std::path::PathBuf,
    /// What the remote's task reads meet now, as the oracle armed it (faults add up until the
    /// remote answers again).
    reads: Reads,
    /// Down until then.
    down_until: Option<Instant>,
    /// When the condition last changed.
    condition_since: Instant,
    /// Submits (and next attempts) answered done, ambiguous or pending, per campaign: the most
    /// remote tasks the operator asked for.
    asked_tasks: BTreeMap<String, u64>,
    /// Every rule broken so far, with the step it was broken at.
    broken: Vec<String>,
    /// What the verbs were answered, counted (said at the end of a case, to see what was met).
    outcomes: BTreeMap<String, u32>,
    step: usize,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn scenario() -> Scenario {
    Scenario::parse(
        r#"
name = "oracle"
description = "Attempt 1 fails; later attempts ask a question, then complete once answered."

[[attempts]]
steps = [
  { at_ms = 0, state = "submitted", stage = "queued" },
  { at_ms = 300, state = "working", stage = "preprocessing", noise = 2 },
  { at_ms = 1500, state = "failed", stage = "preprocessing", message = "Preprocessing failed.", artifacts = [
    { name = "failure-evidence", text = "the dataset is text-only" },
  ] },
]

[[attempts]]
steps = [
  { at_ms = 0, state = "submitted", stage = "queued" },
  { at_ms = 300, state = "working", stage = "preprocessing", noise = 2 },
  { at_ms = 900, state = "input-required", stage = "preprocessing", message = "Which dataset should be used?" },
  { at_ms = 3600000, state = "working", stage = "training", noise = 2 },
  { at_ms = 3601200, state = "completed", stage = "evaluation", artifacts = [
    { name = "evaluation-report", text = "eval_loss=0.40: PASS" },
  ] },
]
"#,
    )
    .expect("the oracle's scenario")
}

impl World {
    async fn start() -> World {
        let sim = argus_sim::start(
            "127.0.0.1:0".parse().expect("addr"),
            SimOptions {
                scenario: scenario(),
                token: Some(SIM_TOKEN.into()),
                tls: None,
            },
        )
        .await
        .expect("sim");
        let home = std::env::temp_dir().join(format!("argus-oracle-{}", uuid::Uuid::new_v4()));
        let port = free_port();
        #[derive(Parser)]
        struct Serve {
            #[command(flatten)]
            args: ServeArgs,
        }
        let args = Serve::try_parse_from([
            "serve",
            "--remote-url",
            sim.url(),
            "--remote-token",
            SIM_TOKEN,
            "--api-token",
            API_TOKEN,
            "--home",
            home.to_str().expect("home"),
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--allow-insecure-loopback",
            "--heartbeat-seconds",
            "1",
            "--lease-ttl-seconds",
            "120",
            "--readback-grace-seconds",
            "1",
            "--card-refresh-seconds",
            "1",
            "--require-qualification",
            "0",
            "--hot-poll-seconds",
            "1",
        ])
        .expect("serve's arguments")
        .args;
        let mut cfg = ServeConfig::from_args(&args).expect("serve's configuration");
        cfg.heartbeat = HEARTBEAT;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let daemon = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(e) = serve_until(cfg, shutdown).await {
                panic!("serve stopped: {e}");
            }
        });
        let base = format!("http://127.0.0.1:{port}/api/plugins/argus-supervisor");
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("client");
        let w = World {
            sim,
            base,
            http,
            stop: Some(stop),
            daemon: Some(daemon),
            home,
            reads: Reads::default(),
            down_until: None,
            condition_since: Instant::now(),
            asked_tasks: BTreeMap::new(),
            broken: vec![],
            outcomes: BTreeMap::new(),
            step: 0,
        };
        w.until(
            "the remote is discovered",
            |h| h["remote"]["state"] == "discovered",
            "/health",
        )
        .await;
        for id in CAMPAIGNS {
            let (s, b) = w.post(id, "observe", json!({"objective": "train"})).await;
            assert_eq!(s, 200, "{b}");
        }
        w
    }

    async fn stop(mut self) -> Vec<String> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(d) = self.daemon.take() {
            let _ = tokio::time::timeout(Duration::from_secs(30), d).await;
        }
        let _ = std::fs::remove_dir_all(&self.home);
        eprintln!("case: {:?}", self.outcomes);
        std::mem::take(&mut self.broken)
    }

    async fn get(&self, path: &str) -> Value {
        match self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(API_TOKEN)
            .send()
            .await
        {
            Ok(r) => r.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        }
    }

    async fn post(&self, id: &str, route: &str, body: Value) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}/campaigns/{id}/{route}", self.base))
            .bearer_auth(API_TOKEN)
            .json(&body)
            .send()
            .await
            .expect("the API answers");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn until(&self, what: &str, ok: impl Fn(&Value) -> bool, path: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let v = self.get(path).await;
            if ok(&v) {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {v}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn broke(&mut self, rule: &str, detail: String) {
        self.broken
            .push(format!("step {}: {rule}: {detail}", self.step));
    }

    fn entries(&self) -> Vec<argus_sim::AuditEntry> {
        self.sim.audit().entries
    }

    async fn state(&self, id: &str) -> String {
        self.get(&format!("/campaigns/{id}")).await["state"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    async fn feed(&self, id: &str) -> Vec<(String, String)> {
        self.get(&format!("/campaigns/{id}/messages")).await["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                let s = |k: &str| m[k].as_str().unwrap_or("").to_string();
                (s("kind"), s("text"))
            })
            .collect()
    }

    async fn events(&self, id: &str) -> Vec<Value> {
        self.get(&format!("/campaigns/{id}/events")).await["events"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Wait out an outage that is still on (its faults cannot be changed while it is).
    async fn reachable(&mut self) {
        if let Some(until) = self.down_until.take() {
            let now = Instant::now();
            if until > now {
                tokio::time::sleep(until - now).await;
            }
            // The listener comes back: wait until it answers.
            let deadline = Instant::now() + Duration::from_secs(10);
            while self
                .http
                .get(format!("{}.well-known/agent-card.json", self.sim.url()))
                .send()
                .await
                .is_err()
            {
                assert!(Instant::now() < deadline, "the sim never came back");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    async fn set(&mut self, condition: Condition) {
        self.reachable().await;
        match condition {
            Condition::Answering => {
                self.sim.clear_faults();
                self.sim.arm(Fault::Token {
                    token: Some(SIM_TOKEN.into()),
                });
            }
            Condition::Down(beats) => {
                let ms = u64::from(beats) * HEARTBEAT.as_millis() as u64;
                self.sim.arm(Fault::Unreachable { ms });
                self.down_until = Some(Instant::now() + Duration::from_millis(ms));
            }
            Condition::Fault500Plain => self.sim.arm(Fault::Http500 {
                method: "tasks/get".into(),
                times: None,
            }),
            Condition::Fault500Json => self.sim.arm(Fault::Http500Json {
                method: "tasks/get".into(),
                times: None,
            }),
            Condition::RpcUnnamed => self.sim.arm(Fault::RpcError {
                method: "tasks/get".into(),
                code: -32000,
                times: None,
            }),
            Condition::TokenRotated => self.sim.arm(Fault::Token {
                token: Some("rotated-elsewhere".into()),
            }),
            Condition::CardChanged => self.sim.arm(Fault::Card {
                change: CardChange::BumpVersion,
            }),
            Condition::TasksLost => self.sim.arm(Fault::ForgetTasks { reuse_ids: false }),
            Condition::TakenByOther(c) => self.sim.arm(Fault::Takeover {
                campaign_id: CAMPAIGNS[c].into(),
                controller_id: "loopx-other".into(),
            }),
            Condition::ForeignArtifact => self.sim.arm(Fault::OtherCampaignArtifact),
        }
        self.reads.note(condition);
        self.condition_since = Instant::now();
    }

    /// One operator verb, its answer held against what the remote saw.
    async fn act(&mut self, c: usize, verb: Verb) -> (u16, Value) {
        let id = CAMPAIGNS[c];
        let body = match verb {
            Verb::Observe => json!({"objective": "train"}),
            Verb::ObserveOthersTask => {
                let other = self.get(&format!("/campaigns/{}", CAMPAIGNS[1 - c])).await;
                match other["remote_task_id"].as_str() {
                    Some(t) => json!({"objective": "train", "task_id": t}),
                    None => json!({"objective": "train"}),
                }
            }
            Verb::Submit | Verb::NextAttempt => json!({"message": "run the attempt"}),
            Verb::Intervene | Verb::Answer => json!({"message": "use the second dataset"}),
            Verb::Cancel | Verb::Reject | Verb::Abandon | Verb::Pause => {
                json!({"reason": "the oracle decided"})
            }
            Verb::ResolveNotApplied => json!({"not_applied": true}),
            _ => json!({}),
        };
        let state_before = self.state(id).await;
        let from = self.entries().len();
        let feed_before = self.feed(id).await.len();
        let events_before = self.events(id).await;
        let (status, answer) = self.post(id, verb.route(), body).await;
        let outcome = answer["outcome"].as_str().unwrap_or("").to_string();
        let code = answer["code"].as_str().unwrap_or("");
        *self
            .outcomes
            .entry(format!("{} {outcome} {code}", verb.route()))
            .or_default() += 1;
        let since: Vec<argus_sim::AuditEntry> = self.entries().split_off(from);
        let ours = |e: &&argus_sim::AuditEntry| e.campaign_id.as_deref() == Some(id);
        // Never "done" for what the remote did not apply.
        if outcome == "done" {
            for method in verb.applied_by() {
                let applied = since
                    .iter()
                    .filter(ours)
                    .any(|e| e.method == *method && e.accepted);
                if !applied {
                    self.broke(
                        "done only for what the remote applied",
                        format!(
                            "{id} {} answered done, the remote applied no {method}: {answer}",
                            verb.route()
                        ),
                    );
                }
            }
        }
        if outcome == "not_confirmed" {
            let applied = since
                .iter()
                .filter(ours)
                .any(|e| e.method == "campaign/release_control" && e.accepted);
            if applied {
                self.broke(
                    "not_confirmed only when the remote did not confirm",
                    answer.to_string(),
                );
            }
        }
        if matches!(outcome.as_str(), "done" | "ambiguous" | "pending")
            && matches!(verb, Verb::Submit | Verb::NextAttempt)
        {
            *self.asked_tasks.entry(id.to_string()).or_default() += 1;
        }
        // A refusal changes nothing.
        if matches!(outcome.as_str(), "refused" | "forbidden_in_state")
            || answer["refused_by"].is_string()
        {
            let by = answer["refused_by"].as_str().unwrap_or("");
            let sent: Vec<&argus_sim::AuditEntry> = since
                .iter()
                .filter(ours)
                .filter(|e| verb.applied_by().contains(&e.method.as_str()))
                .collect();
            // The campaign may have moved on by itself meanwhile (its attempt ended, and it gave
            // its lease back as it does): a call of its own, not the refused verb's.
            let moved = answer["state"].as_str() != Some(state_before.as_str());
            let sent: Vec<&argus_sim::AuditEntry> = sent
                .into_iter()
                .filter(|e| !(moved && e.method == "campaign/release_control"))
                .collect();
            if (by == "supervisor" || outcome == "forbidden_in_state") && !sent.is_empty() {
                self.broke(
                    "a refusal here sends nothing",
                    format!("{id} {}: {answer}; sent {sent:?}", verb.route()),
                );
            }
            if sent.iter().any(|e| e.accepted) {
                self.broke(
                    "a refusal is never applied",
                    format!("{id} {}: {answer}; applied {sent:?}", verb.route()),
                );
            }
            // The contract's own refusals are answers the remote gave to a call it received.
            let contract_refusal = matches!(
                answer["code"].as_str().unwrap_or(""),
                "held_by_other"
                    | "stale_epoch"
                    | "lease_expired"
                    | "unknown_campaign"
                    | "policy_refused"
                    | "not_cancelable"
                    | "task_not_found"
                    | "method_unavailable"
            );
            if by == "remote"
                && contract_refusal
                && !verb.applied_by().is_empty()
                && sent.is_empty()
            {
                self.broke(
                    "a remote's refusal was received by the remote",
                    format!(
                        "{id} {}: {answer}, but the remote received none",
                        verb.route()
                    ),
                );
            }
            let feed = self.feed(id).await;
            let operator_line = format!("Operator {}", verb.route());
            if feed
                .iter()
                .skip(feed_before)
                .any(|(_, t)| t.starts_with(&operator_line))
            {
                self.broke(
                    "a refusal stays out of the feed",
                    format!("{id} {}: {answer}", verb.route()),
                );
            }
            let events = self.events(id).await;
            let refused_claims = events
                .iter()
                .skip(events_before.len())
                .filter(|e| e["event"]["change"]["claim_refused"].is_string())
                .count();
            if refused_claims > 0 {
                self.broke(
                    "a refused claim records no event",
                    format!("{id}: {events:?}"),
                );
            }
            if outcome == "forbidden_in_state" {
                self.follow_allowed(id, &answer).await;
            }
            if answer["code"] == "nothing_pending" {
                let next = answer["next"].as_str().unwrap_or("");
                let allows = answer["allowed_actions"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|v| v == "intervene"));
                if next.contains("`intervene`") && !allows {
                    self.broke("a hint names only what can be done", answer.to_string());
                }
            }
        }
        (status, answer)
    }

    /// A verb the answer listed as allowed is not refused as forbidden when taken (one that
    /// closes the campaign or starts work is not taken: it would end the case's exploration).
    async fn follow_allowed(&mut self, id: &str, answer: &Value) {
        let allowed: Vec<Verb> = answer["allowed_actions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().and_then(Verb::of))
            .filter(|v| {
                matches!(
                    v,
                    Verb::Observe | Verb::Claim | Verb::Release | Verb::Pause | Verb::Resume
                )
            })
            .collect();
        let preference = [Verb::Claim, Verb::Resume, Verb::Observe, Verb::Release];
        let Some(v) = preference.into_iter().find(|v| allowed.contains(v)) else {
            return;
        };
        let c = CAMPAIGNS.iter().position(|c| *c == id).unwrap_or(0);
        let (_, a) = Box::pin(self.act(c, v)).await;
        // Judged only where the campaign stood still between the two answers.
        if a["outcome"] == "forbidden_in_state" && a["state"] == answer["state"] {
            self.broke(
                "a verb listed as allowed is allowed",
                format!("{id}: {} listed in {answer}, then {a}", v.route()),
            );
        }
    }

    /// What holds after every step.
    async fn always(&mut self) {
        let audit = self.sim.audit();
        let c = &audit.counters;
        if c.repeated_submits != 0 || c.known_stale_writes != 0 || c.stale_or_expired_accepted != 0
        {
            self.broke("never a resent submit nor a stale write", format!("{c:?}"));
        }
        for id in CAMPAIGNS {
            let tasks = c.tasks_per_campaign.get(id).copied().unwrap_or(0);
            let asked = self.asked_tasks.get(id).copied().unwrap_or(0);
            if tasks > asked {
                self.broke(
                    "never a second remote task",
                    format!("{id}: {tasks} tasks at the remote, {asked} asked for"),
                );
            }
            let feed = self.feed(id).await;
            for pair in feed.windows(2) {
                if pair[0].0 == "REMOTE_STATUS" && pair[0] == pair[1] {
                    self.broke("a condition is told once", format!("{id}: {:?}", pair[0].1));
                }
            }
        }
    }

    /// Once a condition has settled: each campaign watching a task read-only is named for what
    /// its reads meet, and `health` says how the remote answers.
    async fn settled(&mut self) {
        let want = self.reads.named();
        let Some((state, answering)) = want else {
            return;
        };
        // The card is read every second: a change of how the remote answers is known within it,
        // and a campaign's reads follow within a heartbeat.
        if self.condition_since.elapsed() < Duration::from_secs(2) || self.down_until.is_some() {
            return;
        }
        let mut watching = false;
        for id in CAMPAIGNS {
            let s = self.state(id).await;
            let reads = s.starts_with("observing.")
                && !matches!(
                    s.as_str(),
                    "observing.detached" | "observing.claiming" | "observing.confirming"
                );
            if reads && s != state && s != "observing.task_not_found" {
                self.broke(
                    "a condition is named for what it is",
                    format!("{id} is {s} while the remote's reads meet {:?}", self.reads),
                );
            }
            watching |= reads;
        }
        if watching && self.reads.token_rotated {
            let h = self.get("/health").await;
            if h["remote"]["answering"]["status"] != answering {
                self.broke(
                    "health names the condition",
                    format!("{:?}: {}", self.reads, h["remote"]["answering"]),
                );
            }
        }
    }

    /// After an outage ends, a campaign waiting on the remote reads again within a few
    /// heartbeats of it answering (each failed read's backoff was the outage's, not the remote's
    /// now).
    async fn back(&mut self) {
        let from = self.entries().len();
        let waiting: Vec<(String, String)> = {
            let mut v = vec![];
            for id in CAMPAIGNS {
                let view = self.get(&format!("/campaigns/{id}")).await;
                if view["state"] == "observing.remote_unavailable" {
                    if let Some(t) = view["remote_task_id"].as_str() {
                        v.push((id.to_string(), t.to_string()));
                    }
                }
            }
            v
        };
        if waiting.is_empty() || !self.reads.audited() {
            return;
        }
        // The card is read every second: the remote is known to answer within it; then one
        // heartbeat (and a slot) for the read.
        let deadline =
            Instant::now() + Duration::from_millis(1000 + 6 * HEARTBEAT.as_millis() as u64);
        loop {
            let read: Vec<String> = self
                .entries()
                .split_off(from)
                .into_iter()
                .filter_map(|e| e.read_task)
                .collect();
            if waiting.iter().all(|(_, t)| read.contains(t)) {
                return;
            }
            if Instant::now() > deadline {
                self.broke(
                    "a campaign waiting on the remote reads again when it answers",
                    format!("{waiting:?} not read; read {read:?}"),
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// What an operator takes next in `state` (`i` varies the choice at an attempt's end).
fn next_verb(state: &str, i: usize) -> Option<Verb> {
    Some(match state {
        "observing.detached" | "observing.watching" | "control_lost" => Verb::Claim,
        "controlling.ready" => Verb::Submit,
        "controlling.awaiting_input" => Verb::Answer,
        "remote_terminal_local_pending" if i.is_multiple_of(3) => Verb::Accept,
        "remote_terminal_local_pending" => Verb::NextAttempt,
        "ambiguous_write" => Verb::ResolveNotApplied,
        "paused" => Verb::Resume,
        _ => return None,
    })
}

async fn run_case(steps: Vec<Step>) -> Vec<String> {
    let mut w = World::start().await;
    for (i, s) in steps.iter().enumerate() {
        w.step = i;
        match *s {
            Step::Act(c, v) => {
                let _ = w.act(c, v).await;
            }
            Step::Progress(c) => {
                let state = w.state(CAMPAIGNS[c]).await;
                if let Some(v) = next_verb(&state, i) {
                    let _ = w.act(c, v).await;
                }
            }
            Step::Remote(cond) => {
                let was_down = w.down_until.is_some();
                w.set(cond).await;
                if was_down {
                    w.back().await;
                }
            }
            Step::Wait(beats) => {
                tokio::time::sleep(HEARTBEAT * u32::from(beats)).await;
                if beats >= 8 {
                    w.settled().await;
                }
            }
        }
        w.always().await;
    }
    w.reachable().await;
    w.stop().await
}

fn cases() -> u32 {
    std::env::var("ARGUS_ORACLE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
}

fn steps_per_case() -> usize {
    std::env::var("ARGUS_ORACLE_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 24,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::SourceParallel("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn what_the_supervisor_says_is_what_the_remote_saw(steps in prop::collection::vec(step(), steps_per_case())) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let broken = rt.block_on(run_case(steps.clone()));
        rt.shutdown_timeout(Duration::from_secs(5));
        prop_assert!(broken.is_empty(), "{} rule(s) broken:\n{}", broken.len(), broken.join("\n"));
    }
}
