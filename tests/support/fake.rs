//! Test helpers: an in-memory remote that enforces leases like a correct OpenTraining. In-process
//! fakes are for these unit-level tests only; the simulated remote over real HTTP serves the
//! integration tests.
#![allow(dead_code)]

use super::clock::TestClock;
use argus_machines::{ControllerId, Observation, RemoteState, TaskId};
use argus_supervisor_lib::control::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How the fake answers writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fault {
    #[default]
    None,
    /// Apply the write, then lose the answer (the client sees a timeout after sending).
    ApplyThenDrop,
    /// Fail before anything is sent.
    Unreachable,
}

#[derive(Default)]
pub struct State {
    pub lease: Option<Lease>,
    pub epoch: u64,
    /// request id → task created (idempotency).
    pub requests: HashMap<String, Option<TaskId>>,
    pub tasks: Vec<TaskId>,
    /// Write calls that arrived at all (whatever their fate).
    pub writes_received: usize,
    /// Writes refused for a stale or foreign epoch.
    pub stale_rejected: usize,
    pub fault: Fault,
    pub readback_available: bool,
}

/// An in-memory remote with fencing-token leases.
#[derive(Clone)]
pub struct FakeRemote {
    pub state: Arc<Mutex<State>>,
    pub clock: TestClock,
}

impl FakeRemote {
    pub fn new(clock: TestClock) -> Self {
        let state = State {
            readback_available: true,
            ..State::default()
        };
        FakeRemote {
            state: Arc::new(Mutex::new(state)),
            clock,
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut s = self.state.lock().expect("fake remote lock");
        f(&mut s)
    }

    /// Another controller takes the campaign over (epoch rises).
    pub fn take_over(&self, who: &str) {
        let now = self.clock.now();
        self.with(|s| {
            s.epoch += 1;
            s.lease = Some(Lease {
                controller_id: ControllerId::new(who),
                epoch: s.epoch,
                expires_at: now + 600,
            });
        });
    }

    fn check(&self, s: &mut State, call: &WriteId<'_>) -> Result<(), RemoteError> {
        s.writes_received += 1;
        let now = self.clock.now();
        match &s.lease {
            Some(l)
                if l.controller_id == *call.controller_id()
                    && l.epoch == call.controller_epoch() =>
            {
                if l.expires_at <= now {
                    s.stale_rejected += 1;
                    Err(RemoteError::LeaseExpired)
                } else {
                    Ok(())
                }
            }
            Some(l) if l.controller_id != *call.controller_id() => {
                s.stale_rejected += 1;
                Err(RemoteError::LeaseHeldByOther)
            }
            _ => {
                s.stale_rejected += 1;
                Err(RemoteError::StaleEpoch)
            }
        }
    }

    fn answer<T>(&self, s: &State, value: T) -> Result<T, RemoteError> {
        match s.fault {
            Fault::ApplyThenDrop => Err(RemoteError::TimeoutAfterSend),
            _ => Ok(value),
        }
    }
}

impl Transport for FakeRemote {
    async fn claim_control(&self, call: ClaimCall<'_>) -> Result<Lease, RemoteError> {
        let now = self.clock.now();
        self.with(|s| {
            if s.fault == Fault::Unreachable {
                return Err(RemoteError::Unavailable);
            }
            match &s.lease {
                Some(l) if l.expires_at > now && l.controller_id != *call.controller_id => {
                    Err(RemoteError::LeaseHeldByOther)
                }
                Some(l) if l.expires_at > now => Ok(l.clone()),
                _ => {
                    s.epoch += 1;
                    let l = Lease {
                        controller_id: call.controller_id.clone(),
                        epoch: s.epoch,
                        expires_at: now + call.ttl_seconds,
                    };
                    s.lease = Some(l.clone());
                    Ok(l)
                }
            }
        })
    }

    async fn read_control(&self, _: &str) -> Result<Option<Lease>, RemoteError> {
        let now = self.clock.now();
        Ok(self.with(|s| s.lease.clone().filter(|l| l.expires_at > now)))
    }

    async fn renew_control(&self, call: WriteId<'_>, ttl: u64) -> Result<Lease, RemoteError> {
        let now = self.clock.now();
        self.with(|s| {
            self.check(s, &call)?;
            let l = s.lease.as_mut().ok_or(RemoteError::StaleEpoch)?;
            l.expires_at = now + ttl;
            Ok(l.clone())
        })
    }

    async fn release_control(&self, call: WriteId<'_>) -> Result<(), RemoteError> {
        self.with(|s| {
            self.check(s, &call)?;
            s.lease = None;
            Ok(())
        })
    }

    async fn submit(&self, call: WriteId<'_>, _: &SubmitRequest) -> Result<TaskId, RemoteError> {
        self.with(|s| {
            if s.fault == Fault::Unreachable {
                return Err(RemoteError::Unavailable);
            }
            if let Some(Some(t)) = s.requests.get(call.request_id().as_str()) {
                let t = t.clone();
                return self.answer(s, t);
            }
            self.check(s, &call)?;
            let t = TaskId::new(format!("task-{}", s.tasks.len() + 1));
            s.tasks.push(t.clone());
            s.requests
                .insert(call.request_id().to_string(), Some(t.clone()));
            self.answer(s, t)
        })
    }

    async fn intervene(&self, call: WriteId<'_>, _: &TaskId, _: &str) -> Result<(), RemoteError> {
        self.with(|s| {
            self.check(s, &call)?;
            s.requests.insert(call.request_id().to_string(), None);
            self.answer(s, ())
        })
    }

    async fn cancel(&self, call: WriteId<'_>, _: &TaskId, _: &str) -> Result<(), RemoteError> {
        self.with(|s| {
            self.check(s, &call)?;
            s.requests.insert(call.request_id().to_string(), None);
            self.answer(s, ())
        })
    }

    async fn request_status(
        &self,
        _: &str,
        request_id: &RequestId,
    ) -> Result<ReadbackAnswer, RemoteError> {
        self.with(|s| {
            if !s.readback_available {
                return Err(RemoteError::MethodUnavailable);
            }
            Ok(match s.requests.get(request_id.as_str()) {
                Some(task) => ReadbackAnswer::Applied { task: task.clone() },
                None => ReadbackAnswer::NotApplied,
            })
        })
    }

    async fn status(&self, task: &TaskId) -> Result<Reading, RemoteError> {
        Ok(Reading {
            observation: Observation {
                revision: Some(1),
                heartbeat_seq: Some(1),
                ..Observation::new(task.clone(), RemoteState::Working)
            },
            changed_at: None,
        })
    }

    async fn evidence(&self, task: &TaskId) -> Result<Evidence, RemoteError> {
        Ok(Evidence {
            task: task.clone(),
            evidence_revision: None,
            run_id: None,
            attempt_id: None,
            artifacts: vec![],
            answer: None,
        })
    }
}

/// Renew the lease `ctl` holds, then cancel `task` under it, both applied: the controller after.
pub async fn renew_then_cancel<T: Transport>(
    remote: &T,
    ctl: Controller,
    task: &TaskId,
) -> Controller {
    let ctl = match ctl
        .renew(remote, &SystemClock, WriteIntent::fresh(), 120)
        .await
    {
        RenewOutcome::Renewed(c) => c,
        other => panic!("renew: {other:?}"),
    };
    match ctl
        .cancel(remote, &SystemClock, WriteIntent::fresh(), task, "test")
        .await
    {
        WriteResult::Applied(c, ()) => c,
        other => panic!("cancel: {other:?}"),
    }
}

/// A claim on `remote` for `campaign` must be refused here, as `claim_control` unavailable, before
/// anything is sent.
pub async fn claim_refused_locally<T: Transport>(remote: &T, campaign: &str) {
    let us = ControllerId::new("argus-openoperator");
    match Observer::new(campaign, us)
        .claim(remote, &SystemClock, WriteIntent::fresh(), 120)
        .await
    {
        ClaimOutcome::Refused(
            _,
            ClaimRefusal::Remote(RemoteError::CapabilityUnavailable("claim_control")),
        ) => {}
        other => panic!("the claim must be refused locally: {other:?}"),
    }
}
