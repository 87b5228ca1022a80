//! What the authority tokens need from the remote: one typed call, and the subscription's reads;
//! and the one function that performs a call ([`send`]).
//!
//! A write's request carries a `Stamp` (and a claim a `ClaimStamp`), which only `control/` can
//! build and every write consumes, so code outside this module cannot reach a write through the
//! transport either: the `Controller` is the only door.

use super::error::RemoteError;
use super::remote::{RemoteAbility, StreamBounds, Updates};
use super::request::{Request, Response, Settled, Waiting};
use super::Clock;
use argus_machines::TaskId;
use std::future::Future;

/// The remote as the authority layer sees it: one typed call (a [`Request`] answered by a
/// [`Response`] of its kind), and the subscription's reads. A refusal before anything is sent (an
/// operation the card lacks, a remote quarantined) is an answer too: the request's own kind, with
/// its error ([`Request::refused`]).
pub trait Transport: Send + Sync {
    fn call(&self, request: Request) -> impl Future<Output = Response> + Send;
    /// Whether the remote says it streams a task's updates (its card's `capabilities.streaming`).
    fn streams(&self) -> bool {
        false
    }
    /// What the remote allows now, beyond reads (default: everything the contract names).
    fn ability(&self) -> RemoteAbility {
        RemoteAbility::everything()
    }
    /// Read the remote's card again now: before a verb its last card would refuse, so a card
    /// that changed back (or a qualification passed meanwhile) is what the verb is judged by
    /// (default: nothing to read).
    fn reread_card(&self) -> impl Future<Output = ()> + Send {
        async {}
    }
    /// Subscribe to a live task's updates (`tasks/resubscribe`, or `SubscribeToTask` in v1.0):
    /// a read; a subscription never writes. Refused locally where the remote does not stream.
    fn subscribe(
        &self,
        task: &TaskId,
        bounds: StreamBounds,
    ) -> impl Future<Output = Result<Updates, RemoteError>> + Send {
        let _ = (task, bounds);
        async { Err(RemoteError::CapabilityUnavailable("subscribe")) }
    }
}

/// A transport with no remote behind it: every call fails with `Unavailable` before sending.
/// Used when no remote is configured, so the supervisor stays a pure observer of its own state.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disconnected;

impl Transport for Disconnected {
    async fn call(&self, request: Request) -> Response {
        request.refused(RemoteError::Unavailable)
    }
}

/// Send one request: the only I/O of a remote call. A write whose lease is no longer usable at
/// `clock`'s now is not sent.
pub async fn send<T: Transport>(remote: &T, clock: &dyn Clock, request: Request) -> Response {
    match &request {
        Request::Renew { stamp, .. } | Request::Write { stamp, .. }
            if stamp.expired(clock.now()) =>
        {
            Response::Expired
        }
        _ => remote.call(request).await,
    }
}

/// Ask, send and settle one call, for a caller that holds the transport itself (tests, tools):
/// `call(remote, clock, observer.ask_claim(intent, ttl))`.
pub async fn call<T: Transport>(
    remote: &T,
    clock: &dyn Clock,
    (waiting, request): (Waiting, Request),
) -> Settled {
    let response = send(remote, clock, request).await;
    waiting.settle(response, clock.now())
}
