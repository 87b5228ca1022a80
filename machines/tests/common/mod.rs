//! Helpers to drive the campaign machine from the outside, the way the shell does.
#![allow(dead_code)]

use argus_machines::*;

pub const US: &str = "argus-openoperator";
pub const NOW: u64 = 1_000;

pub fn policy() -> Policy {
    Policy {
        renew_ahead: 300,
        expiry_margin: 30,
        unavailable_threshold: 2,
        late_window: 600,
    }
}

pub fn task(n: u32) -> TaskId {
    TaskId::new(format!("task-{n}"))
}

pub fn req(s: &str) -> RequestId {
    RequestId::new(s)
}

pub fn lease(controller: &str, epoch: u64, expires_at: u64) -> Lease {
    Lease {
        controller_id: ControllerId::new(controller),
        epoch,
        expires_at,
    }
}

pub fn obs(t: u32, state: RemoteState, revision: u64) -> Observation {
    Observation {
        revision: Some(revision),
        heartbeat_seq: Some(revision * 10),
        stage: Some("training".into()),
        ..Observation::new(task(t), state)
    }
}

pub fn op(c: Command) -> Event {
    Event::Operator(c)
}

pub fn new_machine() -> CampaignMachine {
    CampaignMachine::new("campaign-1", ControllerId::new(US), policy())
}

pub fn grant(epoch: u64) -> Event {
    Event::LeaseGranted {
        lease: lease(US, epoch, NOW + 600),
        now: NOW,
    }
}

/// Named starting points, reached only through events (never by forging a state).
pub fn at(place: &str) -> CampaignMachine {
    let mut m = new_machine();
    let mut feed = |e: Event| {
        m.step(&e);
    };
    let watch = || {
        op(Command::Observe {
            task: Some(task(1)),
        })
    };
    let claim = || {
        op(Command::Claim {
            request_id: req("claim-1"),
        })
    };
    match place {
        "detached" => {}
        "watching" => feed(watch()),
        "claiming" => {
            feed(watch());
            feed(claim());
        }
        "running" | "awaiting_input" | "cancelling" | "intervening" | "rtlp" | "control_lost" => {
            feed(watch());
            feed(Event::Observed(obs(1, RemoteState::Working, 1)));
            feed(claim());
            feed(grant(5));
            match place {
                "awaiting_input" => feed(Event::Observed(obs(1, RemoteState::InputRequired, 2))),
                "cancelling" => feed(op(Command::Cancel {
                    request_id: req("cancel-1"),
                })),
                "intervening" => feed(op(Command::Intervene {
                    request_id: req("int-1"),
                })),
                "rtlp" => feed(Event::Observed(obs(1, RemoteState::Failed, 2))),
                "control_lost" => feed(Event::LeaseRefused {
                    reason: LeaseRefusal::HeldByOther,
                }),
                _ => {}
            }
        }
        "ready" | "submitting" | "ambiguous" => {
            feed(claim());
            feed(grant(5));
            if place != "ready" {
                feed(op(Command::Submit {
                    request_id: req("submit-1"),
                }));
            }
            if place == "ambiguous" {
                feed(Event::Written {
                    request_id: req("submit-1"),
                    outcome: WriteOutcome::TimedOut,
                });
            }
        }
        other => panic!("unknown place {other}"),
    }
    m
}

pub fn labels(actions: &[Action]) -> Vec<String> {
    actions.iter().map(Action::label).collect()
}

/// A planted corruption: the record's state re-tagged as `name`, keeping what it holds (task,
/// lease, intent) and filling what it lacks with plausible values (our lease, task 1, a submit).
#[allow(dead_code)] // not every test binary plants corruptions
pub fn retag(state: &StateRecord, name: StateName) -> StateRecord {
    let lease = state
        .lease()
        .cloned()
        .unwrap_or_else(|| lease(US, 5, NOW + 600));
    let task_opt = state.task().cloned();
    let task = task_opt.clone().unwrap_or_else(|| task(1));
    let intent = state.intent().cloned().unwrap_or(Intent {
        request_id: req("planted"),
        operation: Operation::Submit,
        epoch: lease.epoch,
    });
    match name {
        StateName::Detached => StateRecord::Detached {},
        StateName::Watching => StateRecord::Watching { task },
        StateName::RemoteUnavailable => StateRecord::RemoteUnavailable { task, failures: 1 },
        StateName::AuthRefused => StateRecord::AuthRefused { task, failures: 1 },
        StateName::RemoteError => StateRecord::RemoteError { task, failures: 1 },
        StateName::TaskNotFound => StateRecord::TaskNotFound { task, failures: 1 },
        StateName::Claiming => StateRecord::Claiming {
            task: task_opt,
            request_id: req("planted-claim"),
            resolving: false,
            then_submit: None,
        },
        StateName::Confirming => StateRecord::Confirming {
            task: task_opt,
            last_lease: lease,
        },
        StateName::Ready => StateRecord::Ready { lease },
        StateName::Submitting => StateRecord::Submitting { lease, intent },
        StateName::Running => StateRecord::Running { lease, task },
        StateName::AwaitingInput => StateRecord::AwaitingInput { lease, task },
        StateName::Cancelling => StateRecord::Cancelling {
            lease,
            task,
            intent,
        },
        StateName::Intervening => StateRecord::Intervening {
            lease,
            task,
            intent,
        },
        StateName::AmbiguousWrite => StateRecord::AmbiguousWrite {
            task: task_opt,
            intent,
            last_lease: lease,
            escalated: false,
        },
        StateName::ControlLost => StateRecord::ControlLost {
            task: task_opt,
            last_lease: lease,
            unresolved: None,
        },
        StateName::RemoteTerminalLocalPending => StateRecord::RemoteTerminalLocalPending {
            task,
            outcome: RemoteOutcome::Failed,
        },
        StateName::Incompatible => StateRecord::Incompatible { task: task_opt },
        StateName::Paused => StateRecord::Paused { task: task_opt },
        StateName::ClosedAccepted => StateRecord::ClosedAccepted {},
        StateName::ClosedRejected => StateRecord::ClosedRejected {},
        StateName::ClosedAbandoned => StateRecord::ClosedAbandoned {},
    }
}

/// A planted corruption: the state's (last) lease replaced.
#[allow(dead_code)]
pub fn set_lease(state: &mut StateRecord, to: Lease) {
    match state {
        StateRecord::Ready { lease }
        | StateRecord::Submitting { lease, .. }
        | StateRecord::Running { lease, .. }
        | StateRecord::AwaitingInput { lease, .. }
        | StateRecord::Cancelling { lease, .. }
        | StateRecord::Intervening { lease, .. }
        | StateRecord::Confirming {
            last_lease: lease, ..
        }
        | StateRecord::AmbiguousWrite {
            last_lease: lease, ..
        }
        | StateRecord::ControlLost {
            last_lease: lease, ..
        } => *lease = to,
        other => panic!("{} holds no lease", other.persisted()),
    }
}
