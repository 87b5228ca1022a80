//! The safe error classes of a remote call. Remote error text is never carried: only a class, and for
//! unmapped JSON-RPC errors the numeric code. Each class says whether the request may have reached
//! the remote, because that alone decides between a plain failure and an `AmbiguousWrite`.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RemoteError {
    /// Could not connect; nothing was sent.
    #[error("remote unavailable")]
    Unavailable,
    /// Timed out before the request was sent.
    #[error("timed out before sending")]
    TimeoutBeforeSend,
    /// Timed out (or the connection dropped) after the request was sent: the outcome is unknown.
    #[error("timed out after sending; outcome unknown")]
    TimeoutAfterSend,
    /// The remote does not offer this operation (-32601, or a non-JSON-RPC 404/500).
    #[error("remote operation unavailable")]
    MethodUnavailable,
    #[error("lease held by another controller")]
    LeaseHeldByOther,
    #[error("stale lease epoch")]
    StaleEpoch,
    #[error("lease expired")]
    LeaseExpired,
    #[error("policy constraint violated")]
    PolicyViolation,
    #[error("unknown campaign")]
    UnknownCampaign,
    /// The answer could not be read as the expected shape.
    #[error("malformed remote response")]
    MalformedResponse,
    #[error("remote response too large")]
    TooLarge,
    #[error("redirect refused")]
    RedirectRefused,
    #[error("TLS failure")]
    Tls,
    #[error("authentication failed")]
    AuthFailed,
    /// Any other JSON-RPC error, by code only.
    #[error("remote error {code}")]
    Remote { code: i64 },
}

impl RemoteError {
    /// True when the request may have reached the remote and been applied without our knowing.
    /// A write failing this way must become an `AmbiguousWrite`, never a failure or a retry.
    pub fn may_have_reached_remote(&self) -> bool {
        matches!(
            self,
            RemoteError::TimeoutAfterSend | RemoteError::MalformedResponse | RemoteError::TooLarge
        )
    }

    /// True when the remote fenced us out: the lease is no longer ours to use.
    pub fn is_fencing(&self) -> bool {
        matches!(
            self,
            RemoteError::LeaseHeldByOther | RemoteError::StaleEpoch | RemoteError::LeaseExpired
        )
    }
}
