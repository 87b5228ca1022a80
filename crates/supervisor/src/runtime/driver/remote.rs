//! The driver's remote calls: each [`Call`] the core hands out, made through the token it
//! carries, its outcome handed back as a [`Done`] with the token. One function per call, no
//! decisions: which call, with which authority and which request id, and what its answer means,
//! are the core's.

use super::super::core::{Call, Done, Reader, WriteCall};
use super::super::shared::Shared;
use super::Driver;
use crate::control::{Controller, Transport, WriteIntent};
use argus_machines::RequestId;
use std::sync::atomic::Ordering;

/// Wait for a slot under the shared limit on remote calls, and count the call.
async fn permit(sh: &Shared) -> Option<tokio::sync::SemaphorePermit<'_>> {
    let permit = sh.calls.acquire().await.ok();
    sh.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
    permit
}

impl<T: Transport + 'static> Driver<T> {
    /// Make one call, under the shared limit.
    pub(super) async fn make(&self, call: Call) -> Done {
        let sh = self.shared.clone();
        let remote = self.remote.as_ref();
        let clock = sh.clock.as_ref();
        let _permit = permit(&sh).await;
        match call {
            Call::Poll { task } => Done::Poll(remote.status(&task).await),
            Call::Evidence { task, through } => {
                let read = match &through {
                    Some(p) => p.evidence(remote).await,
                    None => remote.evidence(&task).await,
                };
                Done::Evidence {
                    task,
                    through,
                    read,
                }
            }
            Call::Confirm { observer, last } => {
                let now = clock.now();
                let outcome = observer.confirm(remote, clock, &last).await;
                Done::Confirm { outcome, now }
            }
            Call::Adopt { observer } => {
                let now = clock.now();
                let outcome = observer.adopt_claim(remote, clock).await;
                Done::Confirm { outcome, now }
            }
            Call::StillOurs { controller } => {
                let read = controller.read_control(remote).await;
                let now = clock.now();
                Done::StillOurs {
                    controller,
                    read,
                    now,
                }
            }
            Call::Claim {
                observer,
                intent,
                ttl,
            } => {
                let now = clock.now();
                let request_id = intent.request_id().clone();
                let outcome = observer.claim(remote, clock, intent, ttl).await;
                Done::Claim {
                    request_id,
                    outcome,
                    now,
                }
            }
            Call::Renew { controller, ttl } => {
                let now = clock.now();
                let outcome = controller
                    .renew(remote, clock, WriteIntent::fresh(), ttl)
                    .await;
                Done::Renew { outcome, now }
            }
            Call::Release { controller } => {
                let (observer, answer) = controller.release(remote, WriteIntent::fresh()).await;
                Done::Release { observer, answer }
            }
            Call::Write {
                controller,
                intent,
                write,
            } => self.write(controller, intent, write).await,
            Call::Readback { ambiguous } => {
                let request_id = ambiguous.request_id().clone();
                let outcome = ambiguous.request_status(remote).await;
                Done::Readback {
                    request_id,
                    outcome,
                }
            }
            Call::RequestStatus { reader, request_id } => {
                self.request_status(reader, request_id).await
            }
        }
    }

    /// What became of a request, asked by one who does not hold its write.
    async fn request_status(&self, reader: Reader, request_id: RequestId) -> Done {
        let remote = self.remote.as_ref();
        let answer = match &reader {
            Reader::Lost(l) => l.request_status(remote, &request_id).await,
            Reader::Observer(o) => o.request_status(remote, &request_id).await,
        };
        Done::RequestStatus {
            reader,
            request_id,
            answer,
        }
    }

    /// One mutation, through its `Controller`, under its intent.
    async fn write(&self, c: Controller, intent: WriteIntent, write: WriteCall) -> Done {
        let remote = self.remote.as_ref();
        let clock = self.shared.clock.as_ref();
        let request_id = intent.request_id().clone();
        let result = match write {
            WriteCall::Submit { request } => c
                .submit(remote, clock, intent, &request)
                .await
                .map_applied(Some),
            WriteCall::Cancel { task, reason } => c
                .cancel(remote, clock, intent, &task, &reason)
                .await
                .map_applied(|()| None),
            WriteCall::Intervene { task, text } => c
                .intervene(remote, clock, intent, &task, &text)
                .await
                .map_applied(|()| None),
        };
        Done::Write { request_id, result }
    }
}
