//! A remote in memory that keeps leases as the campaign-control contract says: fencing epochs,
//! expiry, one answer per request id, a read-back of what a request did. The one in-memory
//! remote of the unit tests (the core's, `runtime/core/pair.rs`, and control's,
//! `tests/units/control.rs`); compiled only for tests (`test-hooks`). It is no double of a real
//! server (the extension has none to run); the simulated remote over HTTP serves the process tests.

use super::{
    ClaimStamp, Clock, Evidence, Mutation, Reading, RemoteError, Request, Response, Stamp,
    Transport,
};
use argus_machines::{ControllerId, Lease, Observation, ReadbackAnswer, RemoteState, TaskId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How the remote in memory answers calls that would change it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemoryFault {
    #[default]
    None,
    /// Apply every write, then lose its answer (the client sees a timeout after sending).
    ApplyThenDrop,
    /// Fail claims and submits before anything is applied.
    Unreachable,
}

/// What the remote in memory holds (a test reads and sets it through [`MemoryRemote::with`]).
#[derive(Debug, Default)]
pub struct Held {
    pub lease: Option<Lease>,
    pub epoch: u64,
    /// Request id → the task it created, if any: a repeat gets the first answer.
    pub requests: HashMap<String, Option<TaskId>>,
    /// Each task with its state and revision.
    pub tasks: Vec<(TaskId, RemoteState, u64)>,
    /// Writes that arrived at all, whatever became of them.
    pub writes_received: usize,
    /// Writes refused for a stale, foreign or expired lease.
    pub stale_rejected: usize,
    pub fault: MemoryFault,
    /// The next claim or write is applied and only its answer is lost.
    pub lose_next_answer: bool,
    /// `request_status` answers (else: the method is unavailable).
    pub readback_available: bool,
    /// What arrived, in order (`claim`, `submit epoch 1`, `read_control`, …).
    pub arrived: Vec<String>,
}

/// The one test clock: Unix seconds from a fixed start ([`ManualClock::at`]) or from the system
/// clock (the default), plus an offset the test moves. Clones share the offset.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    start: Option<u64>,
    offset: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock that reads `now` until it is moved.
    pub fn at(now: u64) -> ManualClock {
        ManualClock {
            start: Some(now),
            offset: Arc::default(),
        }
    }

    /// Move now `secs` further on.
    pub fn advance(&self, secs: u64) {
        self.offset.fetch_add(secs, Ordering::SeqCst);
    }

    /// Now is `secs` past the start.
    pub fn set_offset(&self, secs: u64) {
        self.offset.store(secs, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> u64 {
        let start = self.start.unwrap_or_else(crate::time::now_secs);
        start + self.offset.load(Ordering::SeqCst)
    }
}

/// The remote in memory, on the clock `C` (clones share the remote).
#[derive(Clone)]
pub struct MemoryRemote<C> {
    held: Arc<Mutex<Held>>,
    clock: C,
}

impl<C: Clock> MemoryRemote<C> {
    pub fn new(clock: C) -> Self {
        let held = Held {
            readback_available: true,
            ..Held::default()
        };
        MemoryRemote {
            held: Arc::new(Mutex::new(held)),
            clock,
        }
    }

    /// Read or change what it holds.
    pub fn with<R>(&self, f: impl FnOnce(&mut Held) -> R) -> R {
        f(&mut self.held.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Another controller takes the campaign over (the epoch rises).
    pub fn take_over(&self, who: &str) {
        let now = self.clock.now();
        self.with(|h| {
            h.epoch += 1;
            h.lease = Some(Lease {
                controller_id: ControllerId::new(who),
                epoch: h.epoch,
                expires_at: now + 600,
            });
        });
    }

    /// Task `task` is in `state` now (a new revision).
    pub fn set(&self, task: &str, state: RemoteState) {
        self.with(
            |h| match h.tasks.iter_mut().find(|t| t.0.as_str() == task) {
                Some(t) => {
                    t.1 = state;
                    t.2 += 1;
                }
                None => h.tasks.push((TaskId::new(task), state, 1)),
            },
        );
    }

    /// What arrived, in order.
    pub fn arrived(&self) -> Vec<String> {
        self.with(|h| h.arrived.clone())
    }

    /// A write under `call`, fenced by the lease's holder, epoch and expiry.
    fn fenced(&self, h: &mut Held, what: &str, call: &Stamp) -> Result<(), RemoteError> {
        h.writes_received += 1;
        h.arrived
            .push(format!("{what} epoch {}", call.controller_epoch()));
        let refused = match &h.lease {
            Some(l)
                if l.controller_id == *call.controller_id()
                    && l.epoch == call.controller_epoch() =>
            {
                (l.expires_at <= self.clock.now()).then_some(RemoteError::LeaseExpired)
            }
            Some(l) if l.controller_id != *call.controller_id() => {
                Some(RemoteError::LeaseHeldByOther)
            }
            _ => Some(RemoteError::StaleEpoch),
        };
        match refused {
            Some(e) => {
                h.stale_rejected += 1;
                Err(e)
            }
            None => Ok(()),
        }
    }
}

/// The answer, or none when it is lost after the call was applied.
fn answer<T>(h: &mut Held, value: T) -> Result<T, RemoteError> {
    if std::mem::take(&mut h.lose_next_answer) || h.fault == MemoryFault::ApplyThenDrop {
        return Err(RemoteError::TimeoutAfterSend);
    }
    Ok(value)
}

fn reachable(h: &Held) -> Result<(), RemoteError> {
    match h.fault {
        MemoryFault::Unreachable => Err(RemoteError::Unavailable),
        _ => Ok(()),
    }
}

impl<C: Clock> Clock for MemoryRemote<C> {
    fn now(&self) -> u64 {
        self.clock.now()
    }
}

impl<C: Clock> Transport for MemoryRemote<C> {
    /// Each request answered at once, inside the lock: as the contract says, or as the fault set
    /// makes it.
    async fn call(&self, request: Request) -> Response {
        let now = self.clock.now();
        self.with(|h| match request {
            Request::Status(task) => Response::Reading(Ok(reading(h, task))),
            Request::Evidence(task) => Response::Evidence(Ok(no_evidence(task))),
            Request::ReadControl(_) => {
                h.arrived.push("read_control".into());
                Response::Control(Ok(h.lease.clone().filter(|l| l.expires_at > now)))
            }
            Request::Claim(claim) => Response::Lease(claimed(h, &claim, now)),
            Request::Renew { stamp, ttl_seconds } => {
                Response::Lease(self.fenced(h, "renew", &stamp).and_then(|()| {
                    let lease = h.lease.as_mut().ok_or(RemoteError::StaleEpoch)?;
                    lease.expires_at = now + ttl_seconds;
                    Ok(lease.clone())
                }))
            }
            Request::Release(stamp) => {
                Response::Released(self.fenced(h, "release", &stamp).map(|()| h.lease = None))
            }
            Request::Write { stamp, mutation } => {
                Response::Written(self.written(h, &stamp, &mutation))
            }
            Request::RequestStatus { request_id, .. } => {
                h.arrived.push("request_status".into());
                Response::Readback(match h.readback_available {
                    false => Err(RemoteError::MethodUnavailable),
                    true => Ok(match h.requests.get(request_id.as_str()) {
                        Some(task) => ReadbackAnswer::Applied { task: task.clone() },
                        None => ReadbackAnswer::NotApplied,
                    }),
                })
            }
        })
    }
}

impl<C: Clock> MemoryRemote<C> {
    /// A mutation under `call`: a repeated submit gets its first answer; anything else is fenced
    /// by the lease, applied, and answered (or its answer lost).
    fn written(
        &self,
        h: &mut Held,
        call: &Stamp,
        mutation: &Mutation,
    ) -> Result<Option<TaskId>, RemoteError> {
        let request_id = call.request_id().to_string();
        match mutation {
            Mutation::Submit(_) => {
                reachable(h)?;
                if let Some(Some(task)) = h.requests.get(&request_id) {
                    let task = task.clone();
                    return answer(h, Some(task));
                }
                self.fenced(h, "submit", call)?;
                let task = TaskId::new(format!("task-{}", h.tasks.len() + 1));
                h.tasks.push((task.clone(), RemoteState::Working, 1));
                h.requests.insert(request_id, Some(task.clone()));
                answer(h, Some(task))
            }
            Mutation::Intervene { .. } => {
                self.fenced(h, "intervene", call)?;
                h.requests.insert(request_id, None);
                answer(h, None)
            }
            Mutation::Cancel { task, .. } => {
                self.fenced(h, "cancel", call)?;
                h.requests.insert(request_id, None);
                if let Some(t) = h.tasks.iter_mut().find(|t| t.0 == *task) {
                    t.1 = RemoteState::Canceled;
                    t.2 += 1;
                }
                answer(h, None)
            }
        }
    }
}

/// A claim: a repeat of one already applied gets the lease it granted; a live lease is kept by
/// its holder (no new epoch) and refused to anyone else.
fn claimed(h: &mut Held, call: &ClaimStamp, now: u64) -> Result<Lease, RemoteError> {
    reachable(h)?;
    h.arrived.push("claim".into());
    if !h.requests.contains_key(call.request_id().as_str()) {
        match &h.lease {
            Some(l) if l.expires_at > now && l.controller_id != *call.controller_id() => {
                return Err(RemoteError::LeaseHeldByOther);
            }
            Some(l) if l.expires_at > now => {}
            _ => {
                h.epoch += 1;
                h.lease = Some(Lease {
                    controller_id: call.controller_id().clone(),
                    epoch: h.epoch,
                    expires_at: now + call.ttl_seconds(),
                });
            }
        }
        h.requests.insert(call.request_id().to_string(), None);
    }
    let lease = h.lease.clone().ok_or(RemoteError::StaleEpoch)?;
    answer(h, lease)
}

/// A task as the remote in memory shows it (one that never was is working).
fn reading(h: &Held, task: TaskId) -> Reading {
    let (state, revision) = (h.tasks.iter())
        .find(|t| t.0 == task)
        .map_or((RemoteState::Working, 1), |t| (t.1, t.2));
    Reading {
        observation: Observation {
            revision: Some(revision),
            heartbeat_seq: Some(revision),
            ..Observation::new(task, state)
        },
        changed_at: None,
    }
}

/// An ended attempt's evidence when the remote gave none.
pub fn no_evidence(task: TaskId) -> Evidence {
    Evidence {
        task,
        evidence_revision: None,
        run_id: None,
        attempt_id: None,
        artifacts: vec![],
        answer: None,
        said: None,
    }
}
