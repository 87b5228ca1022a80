//! The safe error classes of a remote call. Remote error text is never carried: only a class, and for
//! unmapped JSON-RPC errors the numeric code. Each class says whether the request may have reached
//! the remote, because that alone decides between a plain failure and an `AmbiguousWrite`.

use thiserror::Error;

/// What a call to the remote gives: its answer, or the class of its failure. The one alias of
/// it (the A2A client, the tokens' requests and `qualify`'s trial all speak it).
pub type RemoteResult<T> = Result<T, RemoteError>;

/// Why a TLS handshake failed, in classes an operator can act on. Decided from the TLS library's
/// error types, never from message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsClass {
    /// The certificate chain does not lead to a trusted root: trust the CA
    /// (`ARGUS_SUPERVISOR_CA_FILE`, `SSL_CERT_FILE`).
    Untrusted,
    /// The certificate is valid, but not for the configured host name.
    Hostname,
    /// The certificate has expired (or is not valid yet): check the server's certificate and clocks.
    Expired,
    /// Anything else: protocol version, no common cipher, a bad certificate, a reset mid-handshake.
    Handshake,
}

impl TlsClass {
    pub fn class(self) -> &'static str {
        match self {
            TlsClass::Untrusted => "tls_untrusted",
            TlsClass::Hostname => "tls_hostname",
            TlsClass::Expired => "tls_expired",
            TlsClass::Handshake => "tls_handshake",
        }
    }
}

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
    /// The TLS handshake failed (nothing was sent), by class.
    #[error("TLS failure ({})", .0.class())]
    Tls(TlsClass),
    #[error("authentication failed")]
    AuthFailed,
    /// The remote has no such task (-32001).
    #[error("task not found")]
    TaskNotFound,
    /// The task cannot be cancelled (-32002), e.g. it already finished.
    #[error("task not cancelable")]
    NotCancelable,
    /// The connection broke after the request was sent: the outcome is unknown.
    #[error("connection lost after sending; outcome unknown")]
    DroppedAfterSend,
    /// An HTTP error status without a JSON-RPC body (by status only).
    #[error("remote HTTP status {status}")]
    Http { status: u16 },
    /// A 5xx with a body other than a gateway's or an overloaded server's (502, 503, 504): the
    /// remote is up and answered, with a failure of its own — a remote error, not an outage.
    #[error("remote server error (HTTP {status})")]
    ServerFault { status: u16 },
    /// The local capability check refused before sending (the card does not offer it).
    #[error("capability not offered by the remote: {0}")]
    CapabilityUnavailable(&'static str),
    /// The card, re-read before this write, no longer qualifies for writes (quarantined, or it
    /// could not be re-read); refused before sending.
    #[error("the remote's card does not qualify for writes: {0}")]
    CardNotQualified(&'static str),
    /// `ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION` is on and `qualify` kept no passing record for
    /// this remote's current card; refused before sending.
    #[error("the remote is not qualified for writes (no passing qualification record for its current card)")]
    Unqualified,
    /// The request is larger than the remote is known to accept; refused before sending.
    #[error("larger than the remote accepts")]
    TooLargeToSend,
    /// The card is not a usable agent card (no name, no skills array, not JSON).
    #[error("incompatible agent card")]
    IncompatibleCard,
    /// The configured endpoint is not HTTPS (plain HTTP only for loopback, when allowed).
    #[error(
        "insecure endpoint refused: HTTPS required (plain HTTP only to a loopback address, and only with --allow-insecure-loopback)"
    )]
    InsecureEndpoint,
    #[error("invalid endpoint URL")]
    InvalidEndpoint,
    /// Any other JSON-RPC error, by code only.
    #[error("remote error {code}")]
    Remote { code: i64 },
}

impl RemoteError {
    /// True only when the answer proves a write was not applied: it was never sent (no
    /// connection, refused locally, TLS handshake failed), or the remote refused it before
    /// processing — the contract's lease and policy codes (-32010..-32014), JSON-RPC -32600,
    /// -32601, -32602, -32700, A2A's -32001 (no such task) and -32002 (not cancelable), and HTTP
    /// 401, 403 and 413. Everything else (timeouts, drops, malformed or oversized answers, 5xx,
    /// -32603 and any other code, redirects, other 4xx) leaves the write ambiguous: it is read
    /// back, never settled as refused and never resent.
    pub fn proves_not_applied(&self) -> bool {
        match self {
            RemoteError::Unavailable
            | RemoteError::TimeoutBeforeSend
            | RemoteError::CapabilityUnavailable(_)
            | RemoteError::CardNotQualified(_)
            | RemoteError::Unqualified
            | RemoteError::TooLargeToSend
            | RemoteError::InsecureEndpoint
            | RemoteError::InvalidEndpoint
            | RemoteError::IncompatibleCard
            | RemoteError::Tls(_) => true,
            RemoteError::LeaseHeldByOther
            | RemoteError::StaleEpoch
            | RemoteError::LeaseExpired
            | RemoteError::PolicyViolation
            | RemoteError::UnknownCampaign
            | RemoteError::MethodUnavailable
            | RemoteError::TaskNotFound
            | RemoteError::NotCancelable
            | RemoteError::AuthFailed => true,
            RemoteError::Http { status } => *status == 413,
            RemoteError::Remote { code } => matches!(code, -32600 | -32602 | -32700),
            RemoteError::TimeoutAfterSend
            | RemoteError::DroppedAfterSend
            | RemoteError::ServerFault { .. }
            | RemoteError::MalformedResponse
            | RemoteError::TooLarge
            | RemoteError::RedirectRefused => false,
        }
    }

    /// True when the request may have reached the remote and been applied without our knowing.
    /// A write failing this way must become an `AmbiguousWrite`, never a failure or a retry.
    pub fn may_have_reached_remote(&self) -> bool {
        !self.proves_not_applied()
    }

    /// True when no answer came back — no connection, a timeout, a dropped connection, a 5xx or
    /// 429: an outage, to be said as one, never taken for a verdict on what the remote would say.
    /// (A TLS failure is its own class; everything else is an answer, if an unusable one.)
    pub fn is_no_answer(&self) -> bool {
        match self {
            RemoteError::Unavailable
            | RemoteError::TimeoutBeforeSend
            | RemoteError::TimeoutAfterSend
            | RemoteError::DroppedAfterSend => true,
            RemoteError::Http { status } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// What a failed read met, for the machine: four conditions an operator handles
    /// differently.
    pub fn read_condition(&self) -> argus_machines::RemoteCondition {
        use argus_machines::RemoteCondition;
        match self {
            RemoteError::AuthFailed => RemoteCondition::AuthRequired,
            RemoteError::TaskNotFound => RemoteCondition::TaskNotFound,
            RemoteError::Tls(_) => RemoteCondition::Unreachable,
            _ if self.is_no_answer() => RemoteCondition::Unreachable,
            // An answer, but not one that can be read: said as such, never "unreachable".
            _ => RemoteCondition::Unusable,
        }
    }

    /// Refused here before anything was sent: it says nothing of the remote.
    pub fn never_left(&self) -> bool {
        matches!(
            self,
            RemoteError::CapabilityUnavailable(_)
                | RemoteError::CardNotQualified(_)
                | RemoteError::Unqualified
                | RemoteError::TooLargeToSend
                | RemoteError::InsecureEndpoint
                | RemoteError::InvalidEndpoint
        )
    }

    /// What a failed call says of the remote as a whole: `None` when it answered in the
    /// contract's terms (no such task, a lease refused, a request rejected as invalid: it
    /// works) or the call never left ([`RemoteError::never_left`]); otherwise how it fails —
    /// unreachable, refusing our credentials, or answering with nothing usable.
    pub fn remote_failure(&self) -> Option<argus_machines::RemoteCondition> {
        if self.never_left() {
            return None;
        }
        match self {
            RemoteError::TaskNotFound
            | RemoteError::NotCancelable
            | RemoteError::LeaseHeldByOther
            | RemoteError::StaleEpoch
            | RemoteError::LeaseExpired
            | RemoteError::PolicyViolation
            | RemoteError::UnknownCampaign
            | RemoteError::MethodUnavailable => None,
            RemoteError::Remote {
                code: -32600 | -32602 | -32700,
            } => None,
            RemoteError::Http { status: 413 } => None,
            other => Some(other.read_condition()),
        }
    }

    /// The stable, safe code of this class (for logs, API answers and reports).
    pub fn class(&self) -> &'static str {
        match self {
            RemoteError::Unavailable => "unavailable",
            RemoteError::TimeoutBeforeSend => "timeout_before_send",
            RemoteError::TimeoutAfterSend => "timeout_after_send",
            RemoteError::MethodUnavailable => "method_unavailable",
            RemoteError::LeaseHeldByOther => "lease_held_by_other",
            RemoteError::StaleEpoch => "stale_epoch",
            RemoteError::LeaseExpired => "lease_expired",
            RemoteError::PolicyViolation => "policy_violation",
            RemoteError::UnknownCampaign => "unknown_campaign",
            RemoteError::MalformedResponse => "malformed_response",
            RemoteError::TooLarge => "too_large",
            RemoteError::RedirectRefused => "redirect_refused",
            RemoteError::Tls(c) => c.class(),
            RemoteError::AuthFailed => "auth_failed",
            RemoteError::TaskNotFound => "task_not_found",
            RemoteError::NotCancelable => "not_cancelable",
            RemoteError::DroppedAfterSend => "dropped_after_send",
            RemoteError::Http { .. } => "http_error",
            RemoteError::ServerFault { .. } => "server_fault",
            RemoteError::CapabilityUnavailable(_) => "capability_unavailable",
            RemoteError::CardNotQualified(_) => "card_not_qualified",
            RemoteError::Unqualified => "unqualified_remote",
            RemoteError::TooLargeToSend => "too_large_to_send",
            RemoteError::IncompatibleCard => "incompatible_card",
            RemoteError::InsecureEndpoint => "insecure_endpoint",
            RemoteError::InvalidEndpoint => "invalid_endpoint",
            RemoteError::Remote { .. } => "remote_error",
        }
    }

    /// The lease-refusal class the machine understands (anything else: no usable answer).
    pub fn lease_refusal(&self) -> argus_machines::LeaseRefusal {
        use argus_machines::LeaseRefusal;
        match self {
            RemoteError::LeaseHeldByOther => LeaseRefusal::HeldByOther,
            RemoteError::StaleEpoch => LeaseRefusal::StaleEpoch,
            RemoteError::LeaseExpired => LeaseRefusal::Expired,
            RemoteError::UnknownCampaign => LeaseRefusal::UnknownCampaign,
            RemoteError::PolicyViolation => LeaseRefusal::PolicyRefused,
            RemoteError::CapabilityUnavailable(_)
            | RemoteError::CardNotQualified(_)
            | RemoteError::Unqualified
            | RemoteError::MethodUnavailable => LeaseRefusal::CapabilityUnavailable,
            RemoteError::AuthFailed => LeaseRefusal::AuthFailed,
            RemoteError::Unavailable | RemoteError::TimeoutBeforeSend | RemoteError::Tls(_) => {
                LeaseRefusal::Unreachable
            }
            _ => LeaseRefusal::NoAnswer,
        }
    }

    /// True when the remote fenced us out: the lease is no longer ours to use.
    pub fn is_fencing(&self) -> bool {
        matches!(
            self,
            RemoteError::LeaseHeldByOther | RemoteError::StaleEpoch | RemoteError::LeaseExpired
        )
    }
}
