//! What the exploration feeds the machine: every state restored with representative data (a
//! lease ours or another's, an attempt running or ended, a write in flight), and the alphabet of
//! events (observations, lease and write answers, time and verdicts, operator commands).

use crate::campaign::{Memory, State};
use crate::model::*;

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
