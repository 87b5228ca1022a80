//! Exhaustive exploration of the campaign machine: the single source of the diagrams and of the
//! forbidden-transition suite.
//!
//! Two sweeps feed one list of concrete [`Transition`]s:
//! 1. every state, restored with representative data, × every event of the alphabet;
//! 2. a breadth-first search from the initial state over the same alphabet (this is what proves that
//!    every state is reachable).
//!
//! The abstract [`Graph`] (state names, event labels, action labels) is derived from those transitions
//! and is what the renderers draw. Everything is sorted, so output is deterministic.

use crate::campaign::{Campaign, Memory, State};
use crate::invariants::{check_graph, check_restore, check_transition, Violation, Witnessed};
use crate::machine::CampaignMachine;
use crate::model::*;
use crate::names::StateName;
use crate::record::{CampaignRecord, StateRecord};
use crate::verbs::Verb;
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

pub use crate::graph::{Edge, Graph, Transition};

/// The result of exploring the machine.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// The policy the machine was explored with.
    pub policy: Policy,
    /// Sweep 1's transitions, plus the first witness of every abstract edge the search found.
    pub transitions: Vec<Transition>,
    /// How many concrete transitions were checked against the invariants (both sweeps).
    pub checked: usize,
    /// Per-transition invariant violations found during the walk (empty for a correct machine).
    pub violations: Vec<Violation>,
    /// Every restore of a representative record: (the record, the restored record, entry actions).
    pub restores: Vec<(CampaignRecord, CampaignRecord, Vec<Action>)>,
    /// Leaf states reached from the initial state by the breadth-first search.
    pub reachable: BTreeSet<StateName>,
    /// Distinct concrete configurations visited by the search.
    pub configurations: usize,
    /// The abstract graph drawn from the transitions.
    pub graph: Graph,
}

/// The campaign every explored machine supervises.
pub const CAMPAIGN: &str = "campaign-1";
/// Our controller id in exploration.
pub const US: &str = "argus-openoperator";
/// Another controller's id (takeovers).
pub const OTHER: &str = "loopx-local";
/// Representative clock: leases below expire at `EXPIRES`.
pub const NOW: u64 = 1_000;
/// When every representative lease expires (`NOW` is well before).
pub const EXPIRES: u64 = 2_000;
/// The epoch of every representative lease.
pub const EPOCH: u64 = 5;

/// Cap on the breadth-first search (it converges far below this; the cap only bounds a mutant).
const MAX_CONFIGURATIONS: usize = 200_000;

fn task(n: u32) -> TaskId {
    TaskId::new(format!("task-{n}"))
}
fn req(n: &str) -> RequestId {
    RequestId::new(format!("req-{n}"))
}
fn lease(controller: &str, epoch: u64, expires_at: u64) -> Lease {
    Lease {
        controller_id: ControllerId::new(controller),
        epoch,
        expires_at,
    }
}
fn ours() -> Lease {
    lease(US, EPOCH, EXPIRES)
}
fn intent(op: Operation) -> Intent {
    Intent {
        request_id: req("1"),
        operation: op,
        epoch: EPOCH,
    }
}
fn observation(
    task_n: u32,
    state: RemoteState,
    revision: u64,
    evidence: u64,
    blocked: bool,
) -> Observation {
    Observation {
        task: task(task_n),
        state,
        revision: Some(revision),
        heartbeat_seq: Some(revision * 10),
        stage: Some(
            if revision > 10 {
                "training"
            } else {
                "preprocessing"
            }
            .into(),
        ),
        evidence_revision: Some(evidence),
        blocked,
        campaign_id: None,
        run_id: None,
        attempt_id: None,
        source_sha: None,
        evidence_ref: None,
        status_message: None,
    }
}

/// The machine's policy during exploration.
pub fn policy() -> Policy {
    Policy {
        renew_ahead: 300,
        expiry_margin: 30,
        unavailable_threshold: 2,
        late_window: 600,
    }
}

/// Representative memory: epoch 5 seen, task-1 last seen working at revision 10.
fn memory() -> Memory {
    Memory {
        highest_epoch: EPOCH,
        last_seen: Some(crate::model::Seen::of(&observation(
            1,
            RemoteState::Working,
            10,
            1,
            false,
        ))),
        finished: vec![],
        attempts: 1,
        read_failures: 0,
        read_condition: None,
        late_until: None,
    }
}

/// Every leaf state with representative data (several variants where the data changes behaviour).
pub fn representative_states() -> Vec<(State, Memory)> {
    let m = memory();
    let done = Memory {
        finished: vec![task(1)],
        ..memory()
    };
    [
        observing(&m, &done),
        claiming(&m),
        controlling(&m),
        stopped(&m, &done),
        ambiguous(&m),
        ended(&done),
    ]
    .concat()
}

/// Observing: detached (before and after a finished task), watching, the task unreadable.
fn observing(m: &Memory, done: &Memory) -> Vec<(State, Memory)> {
    vec![
        (State::Detached {}, Memory::default()),
        (State::Detached {}, done.clone()),
        (State::Watching { task: task(1) }, m.clone()),
        (
            State::RemoteUnavailable {
                task: task(1),
                failures: 1,
            },
            m.clone(),
        ),
        (
            State::AuthRefused {
                task: task(1),
                failures: 1,
            },
            m.clone(),
        ),
        (
            State::RemoteError {
                task: task(1),
                failures: 1,
            },
            m.clone(),
        ),
        (
            State::TaskNotFound {
                task: task(1),
                failures: 1,
            },
            m.clone(),
        ),
    ]
}

/// Claiming (for a task, resolving, before a submit, alone) and confirming.
fn claiming(m: &Memory) -> Vec<(State, Memory)> {
    vec![
        (
            State::Claiming {
                task: Some(task(1)),
                request_id: req("1"),
                resolving: false,
                then_submit: None,
            },
            m.clone(),
        ),
        (
            State::Claiming {
                task: Some(task(1)),
                request_id: req("1"),
                resolving: true,
                then_submit: None,
            },
            m.clone(),
        ),
        (
            State::Claiming {
                task: None,
                request_id: req("1"),
                resolving: false,
                then_submit: Some(req("2")),
            },
            m.clone(),
        ),
        (
            State::Claiming {
                task: None,
                request_id: req("1"),
                resolving: false,
                then_submit: None,
            },
            m.clone(),
        ),
        (
            State::Confirming {
                task: Some(task(1)),
                last_lease: ours(),
            },
            m.clone(),
        ),
        (
            State::Confirming {
                task: None,
                last_lease: ours(),
            },
            m.clone(),
        ),
    ]
}

/// Holding the lease: ready, writing, running, awaiting input; and control lost.
fn controlling(m: &Memory) -> Vec<(State, Memory)> {
    vec![
        (State::Ready { lease: ours() }, m.clone()),
        (
            State::Submitting {
                lease: ours(),
                intent: intent(Operation::Submit),
            },
            m.clone(),
        ),
        (
            State::Running {
                lease: ours(),
                task: task(1),
            },
            m.clone(),
        ),
        (
            State::AwaitingInput {
                lease: ours(),
                task: task(1),
            },
            m.clone(),
        ),
        (
            State::Cancelling {
                lease: ours(),
                task: task(1),
                intent: intent(Operation::Cancel),
            },
            m.clone(),
        ),
        (
            State::Intervening {
                lease: ours(),
                task: task(1),
                intent: intent(Operation::Intervene),
            },
            m.clone(),
        ),
        (
            State::ControlLost {
                task: Some(task(1)),
                last_lease: ours(),
                unresolved: None,
            },
            m.clone(),
        ),
        (
            State::ControlLost {
                task: None,
                last_lease: ours(),
                unresolved: Some(intent(Operation::Submit)),
            },
            m.clone(),
        ),
    ]
}

/// Incompatible, paused, and every closed state.
fn stopped(m: &Memory, done: &Memory) -> Vec<(State, Memory)> {
    vec![
        (
            State::Incompatible {
                task: Some(task(1)),
            },
            m.clone(),
        ),
        (
            State::Paused {
                task: Some(task(1)),
            },
            m.clone(),
        ),
        (State::Paused { task: None }, m.clone()),
        (State::ClosedAccepted {}, done.clone()),
        (State::ClosedRejected {}, done.clone()),
        (State::ClosedAbandoned {}, done.clone()),
    ]
}

/// An ambiguous write of each kind, escalated or not.
fn ambiguous(m: &Memory) -> Vec<(State, Memory)> {
    let mut v = vec![];
    for op in [Operation::Submit, Operation::Cancel, Operation::Intervene] {
        let t = (op != Operation::Submit).then(|| task(1));
        v.push((
            State::AmbiguousWrite {
                task: t.clone(),
                intent: intent(op),
                last_lease: ours(),
                escalated: false,
            },
            m.clone(),
        ));
        v.push((
            State::AmbiguousWrite {
                task: t,
                intent: intent(op),
                last_lease: ours(),
                escalated: true,
            },
            m.clone(),
        ));
    }
    v
}

/// The remote's attempt ended, each outcome, awaiting the local verdict.
fn ended(done: &Memory) -> Vec<(State, Memory)> {
    let mut v = vec![];
    for outcome in [
        RemoteOutcome::Completed,
        RemoteOutcome::Failed,
        RemoteOutcome::Canceled,
        RemoteOutcome::Rejected,
    ] {
        v.push((
            State::RemoteTerminalLocalPending {
                task: task(1),
                outcome,
            },
            done.clone(),
        ));
    }
    v
}

/// The event alphabet with representative payloads: every event the exploration tries in each
/// state, in a fixed order.
pub fn alphabet() -> Vec<Event> {
    [
        observations(),
        lease_answers(),
        write_answers(),
        time_and_verdicts(),
        commands(),
    ]
    .concat()
}

/// Readings of the bound task (stale, unchanged, every state as new), of other tasks, and failed polls.
fn observations() -> Vec<Event> {
    let mut v = vec![];
    // Observations of the bound task: stale, unchanged (heartbeat only), and every state as new.
    v.push(Event::Observed(observation(
        1,
        RemoteState::Failed,
        9,
        1,
        false,
    )));
    let mut heartbeat_only = observation(1, RemoteState::Working, 10, 1, false);
    heartbeat_only.heartbeat_seq = Some(101);
    v.push(Event::Observed(heartbeat_only));
    for s in RemoteState::ALL {
        v.push(Event::Observed(observation(1, s, 11, 1, false)));
    }
    v.push(Event::Observed(observation(
        1,
        RemoteState::Working,
        11,
        2,
        false,
    )));
    v.push(Event::Observed(observation(
        1,
        RemoteState::Working,
        11,
        1,
        true,
    )));
    v.push(Event::Observed(observation(
        1,
        RemoteState::Completed,
        12,
        3,
        false,
    )));
    // Readings of tasks created during the search, and of a foreign task.
    v.push(Event::Observed(observation(
        2,
        RemoteState::Working,
        1,
        0,
        false,
    )));
    v.push(Event::Observed(observation(
        2,
        RemoteState::Completed,
        2,
        1,
        false,
    )));
    v.push(Event::Observed(observation(
        9,
        RemoteState::Working,
        50,
        0,
        false,
    )));
    for condition in [
        RemoteCondition::Unreachable,
        RemoteCondition::AuthRequired,
        RemoteCondition::TaskNotFound,
        RemoteCondition::Unusable,
    ] {
        v.push(Event::PollFailed(condition));
    }
    // A reading whose metadata names another campaign.
    v.push(Event::Observed(Observation {
        campaign_id: Some("another-campaign".into()),
        ..observation(1, RemoteState::Completed, 12, 3, false)
    }));
    v
}

/// Lease answers: grants (ours, renewed, lower or higher epoch, expiring, another's), refusals, reads.
fn lease_answers() -> Vec<Event> {
    let mut v = vec![];
    // Lease answers: ours, ours renewed, ours but lower epoch, ours already expired, another holder.
    for (l, now) in [
        (ours(), NOW),
        (lease(US, EPOCH, EXPIRES + 600), NOW),
        (lease(US, EPOCH + 1, EXPIRES), NOW),
        (lease(US, EPOCH - 1, EXPIRES), NOW),
        (lease(US, EPOCH, NOW + 10), NOW),
        (lease(OTHER, EPOCH + 1, EXPIRES), NOW),
    ] {
        v.push(Event::LeaseGranted {
            lease: l.clone(),
            now,
        });
    }
    for reason in [
        LeaseRefusal::HeldByOther,
        LeaseRefusal::StaleEpoch,
        LeaseRefusal::Expired,
        LeaseRefusal::NoAnswer,
        LeaseRefusal::NotApplied,
        LeaseRefusal::PolicyRefused,
        LeaseRefusal::CapabilityUnavailable,
    ] {
        v.push(Event::LeaseRefused { reason });
    }
    for l in [
        Some(ours()),
        Some(lease(OTHER, EPOCH + 1, EXPIRES)),
        Some(lease(US, EPOCH + 1, EXPIRES)),
        None,
    ] {
        v.push(Event::ControlRead { lease: l, now: NOW });
    }
    v
}

/// Write answers and read-backs, for the request in flight and for one the machine never sent.
fn write_answers() -> Vec<Event> {
    let mut v = vec![];
    // Write answers, for the request in flight and for a request the machine never sent.
    for id in ["1", "x"] {
        for outcome in [
            WriteOutcome::Acked {
                task: Some(task(2)),
            },
            WriteOutcome::Acked { task: None },
            WriteOutcome::Refused,
            WriteOutcome::Fenced,
            WriteOutcome::TimedOut,
        ] {
            v.push(Event::Written {
                request_id: req(id),
                outcome,
            });
        }
        for answer in [
            ReadbackAnswer::Applied {
                task: Some(task(2)),
            },
            ReadbackAnswer::Applied { task: None },
            ReadbackAnswer::NotApplied,
            ReadbackAnswer::Unavailable,
        ] {
            v.push(Event::ReadBack {
                request_id: req(id),
                answer,
            });
        }
    }
    v
}

/// Local verdicts, and the clock: well before expiry, in the renewal window, in the margin, far past.
fn time_and_verdicts() -> Vec<Event> {
    let mut v = vec![];
    for verdict in [Verdict::Accepted, Verdict::Rejected, Verdict::NextAttempt] {
        v.push(Event::Validated { verdict });
    }
    // Clock: well before expiry, inside the renewal window, inside the safety margin, far past.
    for now in [NOW, EXPIRES - 200, EXPIRES - 10, EXPIRES + 5_000] {
        v.push(Event::Tick { now });
    }
    v
}

/// Every operator command.
fn commands() -> Vec<Event> {
    let mut v = vec![];
    for c in [
        Command::Observe {
            task: Some(task(1)),
        },
        Command::Observe { task: None },
        Command::Claim {
            request_id: req("1"),
        },
        Command::Submit {
            request_id: req("1"),
        },
        Command::Intervene {
            request_id: req("1"),
        },
        Command::Cancel {
            request_id: req("1"),
        },
        Command::Release,
        Command::Pause,
        Command::Resume,
        Command::Abandon,
        Command::Resolve {
            applied: Some(task(2)),
            not_applied: false,
        },
        Command::Resolve {
            applied: None,
            not_applied: true,
        },
        Command::NextAttempt {
            claim_request: req("1"),
            submit_request: req("2"),
        },
    ] {
        v.push(Event::Operator(c));
    }
    v
}

fn machine_at(state: State, memory: Memory) -> CampaignMachine {
    let mut campaign = Campaign::new(ControllerId::new(US), policy());
    campaign.memory = memory;
    CampaignMachine::at(CAMPAIGN.to_string(), campaign, state).0
}

/// A deliberate defect planted in the machine, to prove the checker catches it without trusting the
/// machine's own memory. Each deletes one line of `campaign.rs` in effect: after every step the
/// named part of the campaign memory is put back to what it was before the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regression {
    /// `self.memory.highest_epoch = lease.epoch;` deleted: the fencing floor never rises.
    ForgetFloor,
    /// The line that records a finished task deleted: finished attempts are forgotten.
    ForgetFinished,
}

fn step(
    machine: &CampaignMachine,
    event: &Event,
    regression: Option<Regression>,
) -> (CampaignMachine, Transition) {
    let mut next = machine.clone();
    let from = machine.record();
    let s = next.step(event);
    if let Some(r) = regression {
        let mut memory = next.memory().clone();
        match r {
            Regression::ForgetFloor => memory.highest_epoch = from.memory.highest_epoch,
            Regression::ForgetFinished => memory.finished.clone_from(&from.memory.finished),
        }
        next = next.with_memory(memory);
    }
    let t = Transition {
        from,
        event: event.clone(),
        to: next.record(),
        actions: s.actions,
    };
    (next, t)
}

/// The visited-set key of the search. The cursor of the last reading and the attempt counter are
/// left out: they multiply configurations without adding states, and sweep 1 already pairs every
/// state with readings that are stale, unchanged and new. Every transition taken is still checked.
/// The checker's own witness is part of the key: the same machine configuration reached with a
/// different history is checked again.
fn key(m: &CampaignMachine, seen: &Witnessed) -> (CampaignRecord, Witnessed) {
    let mut r = m.record();
    r.memory.attempts = r.memory.attempts.min(1);
    r.memory.last_seen = None;
    r.memory.finished.sort();
    // Past the threshold another failed read changes nothing but the count (capped, so the
    // record stays small); only how they fail still matters.
    r.memory.read_failures = r
        .memory
        .read_failures
        .min(policy().unavailable_threshold + 1);
    if let StateRecord::RemoteUnavailable { failures, .. }
    | StateRecord::AuthRefused { failures, .. }
    | StateRecord::RemoteError { failures, .. }
    | StateRecord::TaskNotFound { failures, .. } = &mut r.state
    {
        *failures = (*failures).min(policy().unavailable_threshold + 1);
    }
    (r, seen.clone())
}

/// Explore the campaign machine.
pub fn explore() -> Exploration {
    explore_with(None)
}

/// Explore the machine, optionally with a planted [`Regression`] (tests prove the checker finds it).
pub fn explore_with(regression: Option<Regression>) -> Exploration {
    let events = alphabet();
    let policy = self::policy();
    let mut transitions = vec![];
    let mut violations = vec![];
    let mut checked = 0usize;
    let mut witnessed: BTreeSet<(StateName, StateName, String, Vec<String>)> = BTreeSet::new();

    // Sweep 1: every representative state × every event. The checker's witness is the
    // representative data this module built by hand, not anything the machine computed.
    let mut restores = vec![];
    for (state, memory) in representative_states() {
        let seen = Witnessed::assumed(memory.highest_epoch, memory.finished.iter().cloned());
        let m = machine_at(state, memory);
        for e in &events {
            let t = step(&m, e, regression).1;
            checked += 1;
            violations.extend(check_transition(&t, &policy, &seen));
            witnessed.insert(abstract_key(&t));
            transitions.push(t);
        }
        let rec = m.record();
        if let Ok((restored, entry)) = CampaignMachine::restore(&rec, policy) {
            restores.push((rec, restored.record(), entry));
        }
    }

    // Sweep 2: breadth-first search from the initial state, the checker learning along each path.
    let initial = CampaignMachine::new(CAMPAIGN, ControllerId::new(US), policy);
    let mut seen_configurations = HashSet::new();
    let mut reachable = BTreeSet::new();
    let mut queue = VecDeque::new();
    seen_configurations.insert(key(&initial, &Witnessed::default()));
    queue.push_back((initial, Witnessed::default()));
    while let Some((m, seen)) = queue.pop_front() {
        reachable.insert(m.state_name());
        for e in &events {
            let (next, t) = step(&m, e, regression);
            checked += 1;
            violations.extend(check_transition(&t, &policy, &seen));
            let mut learned = seen.clone();
            learned.learn(&t);
            if witnessed.insert(abstract_key(&t)) {
                transitions.push(t);
            }
            if seen_configurations.len() < MAX_CONFIGURATIONS
                && seen_configurations.insert(key(&next, &learned))
            {
                queue.push_back((next, learned));
            }
        }
    }

    let graph = graph_of(&transitions);
    Exploration {
        policy,
        transitions,
        checked,
        violations,
        restores,
        reachable,
        configurations: seen_configurations.len(),
        graph,
    }
}

/// What a campaign reaches against a remote that offers only `can`: a breadth-first search from
/// the initial state where the remote answers only what can be asked of it (readings and failed
/// reads always; lease and write answers only if it offers the lease), and an operator's verb is
/// stepped only when [`admission`](crate::admission) admits it — a verb refused before the
/// machine is asked is counted, and changes nothing. `check` is given every configuration
/// reached, with the verbs refused there as incapable.
pub fn explore_gated(
    can: crate::RemoteCan,
    mut check: impl FnMut(&CampaignMachine, &[Verb]),
) -> Gated {
    let policy = self::policy();
    let events: Vec<Event> = alphabet()
        .into_iter()
        .filter(|e| match e {
            Event::Observed(_) | Event::PollFailed(_) | Event::Tick { .. } => true,
            Event::Operator(_) | Event::Validated { .. } => true,
            // Answers to lease calls and writes: only from a remote that can be asked them.
            _ => can.claim,
        })
        .collect();
    let verb_of = |e: &Event| match e {
        Event::Operator(c) => Some(c.verb()),
        Event::Validated { verdict } => Some(verdict.verb()),
        _ => None,
    };
    let initial = CampaignMachine::new(CAMPAIGN, ControllerId::new(US), policy);
    let mut gated = Gated::default();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::new();
    seen.insert(key(&initial, &Witnessed::default()));
    queue.push_back(initial);
    while let Some(m) = queue.pop_front() {
        gated.reachable.insert(m.state_name());
        let record = m.record();
        let incapable: Vec<Verb> = Verb::ALL
            .into_iter()
            .filter(|v| crate::admission(&record, policy, *v, can) == crate::Admission::Incapable)
            .collect();
        check(&m, &incapable);
        for e in &events {
            if let Some(v) = verb_of(e) {
                if crate::admission(&record, policy, v, can) != crate::Admission::Admitted {
                    gated.refused += 1;
                    continue;
                }
            }
            let (next, t) = step(&m, e, None);
            if seen.len() < MAX_CONFIGURATIONS && seen.insert(key(&next, &Witnessed::default())) {
                queue.push_back(next);
            }
            gated.transitions.push(t);
        }
    }
    gated
}

/// What [`explore_gated`] found.
#[derive(Debug, Default)]
pub struct Gated {
    /// Leaf states reached.
    pub reachable: BTreeSet<StateName>,
    /// Every transition taken.
    pub transitions: Vec<Transition>,
    /// Verbs refused before the machine was asked (forbidden in the state, or incapable).
    pub refused: usize,
}

fn abstract_key(t: &Transition) -> (StateName, StateName, String, Vec<String>) {
    let actions = t.actions.iter().map(Action::label).collect();
    (
        t.from.state.state_name(),
        t.to.state.state_name(),
        t.event.label(),
        actions,
    )
}

/// Abstract the concrete transitions into the drawn graph.
pub fn graph_of(transitions: &[Transition]) -> Graph {
    let mut merged: BTreeMap<(StateName, StateName, String), (BTreeSet<String>, bool)> =
        BTreeMap::new();
    for t in transitions {
        if t.from.state.state_name() == t.to.state.state_name() {
            continue;
        }
        let entry = merged
            .entry((
                t.from.state.state_name(),
                t.to.state.state_name(),
                t.event.label(),
            ))
            .or_default();
        for a in &t.actions {
            entry.0.insert(a.label());
            entry.1 |= a.needs_lease().is_some();
        }
    }
    let edges = merged
        .into_iter()
        .map(|((from, to, event), (actions, writes))| Edge {
            from,
            to,
            event,
            actions,
            writes,
        })
        .collect();
    Graph {
        initial: StateName::Detached,
        states: StateName::ALL.into_iter().collect(),
        edges,
    }
}

/// Everything: every transition, every restore, and the graph. Empty means all rules hold.
pub fn check_all(x: &Exploration) -> Vec<Violation> {
    let mut out = x.violations.clone();
    for (before, after, entry) in &x.restores {
        out.extend(check_restore(before, after, entry));
    }
    out.extend(check_graph(
        &x.graph,
        &x.reachable,
        &x.transitions,
        &x.policy,
    ));
    out
}
