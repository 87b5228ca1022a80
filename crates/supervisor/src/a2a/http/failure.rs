//! Every failure to a safe [`RemoteError`] class that says whether the request may have reached
//! the remote: JSON-RPC codes, HTTP statuses, the wires' send errors, TLS failures, and a body
//! read under its cap. The remote's own text is never kept.

use super::MAX_RESPONSE_BYTES;
use crate::control::RemoteError;
use ::http::StatusCode;
use bytes::Bytes;

/// JSON-RPC error codes to safe classes. The remote's message text is never kept.
pub fn map_code(code: i64) -> RemoteError {
    match code {
        -32601 => RemoteError::MethodUnavailable,
        -32001 => RemoteError::TaskNotFound,
        -32002 => RemoteError::NotCancelable,
        -32010 => RemoteError::LeaseHeldByOther,
        -32011 => RemoteError::StaleEpoch,
        -32012 => RemoteError::LeaseExpired,
        -32013 => RemoteError::PolicyViolation,
        -32014 => RemoteError::UnknownCampaign,
        code => RemoteError::Remote { code },
    }
}

pub(super) fn check_status(status: StatusCode) -> Result<(), RemoteError> {
    if status.is_redirection() {
        return Err(RemoteError::RedirectRefused);
    }
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        return Err(RemoteError::AuthFailed);
    }
    Ok(())
}

/// Classify a failure of the direct wire's send: before the request could leave, or after.
pub(super) fn classify_direct(e: hyper_util::client::legacy::Error) -> RemoteError {
    if let Some(class) = tls_class(&e) {
        return RemoteError::Tls(class);
    }
    if e.is_connect() {
        return if timed_out(&e) {
            RemoteError::TimeoutBeforeSend
        } else {
            RemoteError::Unavailable
        };
    }
    // The client resends on its own only a request that never left (a pooled connection the
    // remote had closed); anything else may have reached the remote.
    RemoteError::DroppedAfterSend
}

/// Whether a connect failure was `TimedConnect`'s timer (an `io::ErrorKind::TimedOut` in the chain).
pub(super) fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                return true;
            }
        }
        source = s.source();
    }
    false
}

/// Classify a failure of the proxied wire's `send()`: before the request could leave, or after.
pub(super) fn classify_send(e: reqwest::Error) -> RemoteError {
    if e.is_redirect() {
        return RemoteError::RedirectRefused;
    }
    if let Some(class) = tls_class(&e) {
        return RemoteError::Tls(class);
    }
    if e.is_connect() {
        return if e.is_timeout() {
            RemoteError::TimeoutBeforeSend
        } else {
            RemoteError::Unavailable
        };
    }
    if e.is_builder() {
        return RemoteError::InvalidEndpoint;
    }
    if e.is_timeout() {
        RemoteError::TimeoutAfterSend
    } else {
        RemoteError::DroppedAfterSend
    }
}

/// The TLS failure behind a send error, if it is one: found by walking the error chain to the
/// TLS library's own error type (io errors are opened, as they hide their inner error's type).
pub(super) fn tls_class(e: &(dyn std::error::Error + 'static)) -> Option<crate::control::TlsClass> {
    use crate::control::TlsClass;
    use rustls::CertificateError as C;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(tls) = s.downcast_ref::<rustls::Error>() {
            return Some(match tls {
                rustls::Error::InvalidCertificate(c) => match c {
                    C::UnknownIssuer | C::BadSignature | C::UnknownRevocationStatus => {
                        TlsClass::Untrusted
                    }
                    C::NotValidForName | C::NotValidForNameContext { .. } => TlsClass::Hostname,
                    C::Expired
                    | C::ExpiredContext { .. }
                    | C::NotValidYet
                    | C::NotValidYetContext { .. } => TlsClass::Expired,
                    _ => TlsClass::Handshake,
                },
                _ => TlsClass::Handshake,
            });
        }
        // An io::Error hides its inner error from `source()` (it returns the inner's source):
        // open it explicitly, however deeply they nest.
        source = match s
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner),
            None => s.source(),
        };
    }
    None
}

/// Read the proxied wire's body, refusing past the cap: stop reading at the cap, never buffer more.
pub(super) async fn read_capped(mut resp: reqwest::Response) -> Result<Bytes, RemoteError> {
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(RemoteError::TooLarge);
    }
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err(RemoteError::TooLarge);
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body.into()),
            Err(e) if e.is_timeout() => return Err(RemoteError::TimeoutAfterSend),
            Err(_) => return Err(RemoteError::DroppedAfterSend),
        }
    }
}
