//! The driver's remote calls: each [`Call`] the core hands out, made through the token it
//! carries, its outcome handed back as a [`Done`] with the token ([`perform`]), under the shared
//! limit on calls.

use super::super::core::{Call, Done, Reader, WriteCall};
use super::super::shared::Shared;
use super::Driver;
use crate::control::{Clock, Controller, Transport, WriteIntent};
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
        let _permit = permit(&sh).await;
        perform(self.remote.as_ref(), sh.clock.as_ref(), call).await
    }
}

/// Make one call on `remote` through the token it carries, and hand back its outcome with the
/// token. No decisions: which call, with which authority and which request id, and what its
/// answer means, are the core's. (The core's own tests perform calls with this too, on a remote
/// in memory.)
pub(crate) async fn perform<T: Transport>(remote: &T, clock: &dyn Clock, call: Call) -> Done {
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
        } => self::write(remote, clock, controller, intent, write).await,
        Call::Readback { ambiguous } => {
            let request_id = ambiguous.request_id().clone();
            let outcome = ambiguous.request_status(remote).await;
            Done::Readback {
                request_id,
                outcome,
            }
        }
        Call::RequestStatus { reader, request_id } => {
            self::request_status(remote, reader, request_id).await
        }
    }
}

/// What became of a request, asked by one who does not hold its write.
async fn request_status<T: Transport>(remote: &T, reader: Reader, request_id: RequestId) -> Done {
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
async fn write<T: Transport>(
    remote: &T,
    clock: &dyn Clock,
    c: Controller,
    intent: WriteIntent,
    write: WriteCall,
) -> Done {
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
