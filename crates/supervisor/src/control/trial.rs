//! The one door around the authority tokens, for `argus-supervisor qualify` only.
//!
//! Qualifying a remote means sending what the tokens exist to forbid — a mutation under a stale
//! epoch, a submit under a request id already applied, a renewal under a released epoch — and
//! watching the remote refuse it (or answer with its first answer). The tokens cannot send those,
//! by design, so this module builds the calls itself, with the epoch and request id the
//! qualification names. It is `pub(crate)`: only [`crate::qualify`] uses it, against the dedicated
//! test campaign its operator names; the daemon never reaches it.

use super::transport::{ClaimCall, SubmitRequest, Transport, WriteId};
use super::RemoteError;
use argus_machines::{ControllerId, Lease, ReadbackAnswer, RequestId, TaskId};

/// One test campaign on one remote, under one controller id (a second one is a second `Trial`).
pub(crate) struct Trial<'r, T: Transport> {
    remote: &'r T,
    campaign_id: &'r str,
    controller_id: ControllerId,
}

type Answer<T> = Result<T, RemoteError>;

impl<'r, T: Transport> Trial<'r, T> {
    pub(crate) fn new(remote: &'r T, campaign_id: &'r str, controller_id: ControllerId) -> Self {
        Trial {
            remote,
            campaign_id,
            controller_id,
        }
    }

    pub(crate) fn controller_id(&self) -> &ControllerId {
        &self.controller_id
    }

    fn call<'a>(&'a self, epoch: u64, request_id: &'a RequestId) -> WriteId<'a> {
        WriteId::new(self.campaign_id, &self.controller_id, epoch, request_id)
    }

    pub(crate) async fn claim(&self, ttl_seconds: u64, request_id: &RequestId) -> Answer<Lease> {
        self.remote
            .claim_control(ClaimCall {
                campaign_id: self.campaign_id,
                controller_id: &self.controller_id,
                ttl_seconds,
                request_id,
            })
            .await
    }

    pub(crate) async fn read_control(&self) -> Answer<Option<Lease>> {
        self.remote.read_control(self.campaign_id).await
    }

    /// A renewal under `epoch` — the lease's own, or on purpose a stale or released one.
    pub(crate) async fn renew(
        &self,
        epoch: u64,
        ttl_seconds: u64,
        request_id: &RequestId,
    ) -> Answer<Lease> {
        self.remote
            .renew_control(self.call(epoch, request_id), ttl_seconds)
            .await
    }

    /// A submit under `request_id` — a fresh one, or on purpose the one already applied.
    pub(crate) async fn submit(
        &self,
        epoch: u64,
        request_id: &RequestId,
        request: &SubmitRequest,
    ) -> Answer<TaskId> {
        self.remote
            .submit(self.call(epoch, request_id), request)
            .await
    }

    pub(crate) async fn cancel(
        &self,
        epoch: u64,
        request_id: &RequestId,
        task: &TaskId,
        reason: &str,
    ) -> Answer<()> {
        self.remote
            .cancel(self.call(epoch, request_id), task, reason)
            .await
    }

    pub(crate) async fn release(&self, epoch: u64, request_id: &RequestId) -> Answer<()> {
        self.remote
            .release_control(self.call(epoch, request_id))
            .await
    }

    pub(crate) async fn request_status(&self, request_id: &RequestId) -> Answer<ReadbackAnswer> {
        self.remote
            .request_status(self.campaign_id, request_id)
            .await
    }
}
