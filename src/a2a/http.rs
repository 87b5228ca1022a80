//! The HTTP transport under the A2A client: one place that sends, bounds and classifies.
//!
//! It owns the endpoint rules (HTTPS, or plain HTTP to loopback only when allowed), the refusal of
//! redirects, the timeouts, the 1 MiB cap enforced while reading, the auth headers, and the mapping of
//! every failure to a safe [`RemoteError`] class that says whether the request may have reached the
//! remote. It must never log a URL (it may carry a token), a header or a body.

use crate::control::RemoteError;
use crate::security::Secret;
use reqwest::{StatusCode, Url};
use serde::Serialize;
use serde_json::Value;
use std::net::IpAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// Largest response body read from the remote.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// Transport settings. Timeouts are always finite.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The configured A2A base URL (`OPENTRAINING_A2A_URL`); `card.url` is never used instead.
    pub endpoint: String,
    pub token: Option<Secret>,
    /// Allow plain `http://` to a loopback address (tests, the demo). Never for other hosts.
    pub allow_insecure_loopback: bool,
    pub connect_timeout: Duration,
    /// Longest wait between bytes of an answer.
    pub read_timeout: Duration,
    /// Longest whole request, connect to last byte.
    pub total_timeout: Duration,
    /// Extra trusted CA certificates (PEM bundle, `ARGUS_SUPERVISOR_CA_FILE`), added to the
    /// platform's store and the compiled-in roots.
    pub ca_pem: Option<Vec<u8>>,
    /// Trust only `ca_pem` (`ARGUS_SUPERVISOR_CA_ONLY=1`). Verification itself is never optional.
    pub ca_only: bool,
}

/// Why the trust configuration was refused (names the variable, never a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    #[error("ARGUS_SUPERVISOR_CA_FILE cannot be read: {0}")]
    Unreadable(String),
    #[error("ARGUS_SUPERVISOR_CA_FILE holds no PEM certificate")]
    NoCertificate,
    #[error("ARGUS_SUPERVISOR_CA_ONLY=1 needs ARGUS_SUPERVISOR_CA_FILE")]
    OnlyWithoutFile,
    #[error("ARGUS_SUPERVISOR_CA_ONLY: expected 1 or 0")]
    BadFlag,
}

impl HttpConfig {
    pub fn new(endpoint: impl Into<String>) -> Self {
        HttpConfig {
            endpoint: endpoint.into(),
            token: None,
            allow_insecure_loopback: false,
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(15),
            total_timeout: Duration::from_secs(30),
            ca_pem: None,
            ca_only: false,
        }
    }

    /// Read `ARGUS_SUPERVISOR_CA_FILE` and `ARGUS_SUPERVISOR_CA_ONLY` into this configuration.
    pub fn with_trust_from_env(mut self) -> Result<Self, TrustError> {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.trim().is_empty());
        self.ca_only = match var("ARGUS_SUPERVISOR_CA_ONLY").as_deref() {
            None | Some("0" | "false" | "no") => false,
            Some("1" | "true" | "yes") => true,
            Some(_) => return Err(TrustError::BadFlag),
        };
        if let Some(path) = var("ARGUS_SUPERVISOR_CA_FILE") {
            let pem =
                std::fs::read(&path).map_err(|e| TrustError::Unreadable(e.kind().to_string()))?;
            if reqwest::Certificate::from_pem_bundle(&pem).map_or(true, |c| c.is_empty()) {
                return Err(TrustError::NoCertificate);
            }
            self.ca_pem = Some(pem);
        } else if self.ca_only {
            return Err(TrustError::OnlyWithoutFile);
        }
        Ok(self)
    }
}

/// A validated endpoint. Displays as `scheme://host:port/…` only: paths may carry tokens.
#[derive(Clone)]
pub struct Endpoint {
    url: Url,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Endpoint({self})")
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = self.url.host_str().unwrap_or("?");
        match self.url.port() {
            Some(p) => write!(f, "{}://{host}:{p}/…", self.url.scheme()),
            None => write!(f, "{}://{host}/…", self.url.scheme()),
        }
    }
}

impl Endpoint {
    /// Parse and check the endpoint: HTTPS, or HTTP to loopback when `allow_insecure_loopback`.
    pub fn parse(raw: &str, allow_insecure_loopback: bool) -> Result<Endpoint, RemoteError> {
        let mut url = Url::parse(raw).map_err(|_| RemoteError::InvalidEndpoint)?;
        if url.cannot_be_a_base()
            || url.host_str().is_none()
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return Err(RemoteError::InvalidEndpoint);
        }
        match url.scheme() {
            "https" => {}
            "http" if allow_insecure_loopback && is_loopback(&url) => {}
            "http" => return Err(RemoteError::InsecureEndpoint),
            _ => return Err(RemoteError::InvalidEndpoint),
        }
        url.set_query(None);
        url.set_fragment(None);
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        Ok(Endpoint { url })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    fn join(&self, rel: &str) -> Result<Url, RemoteError> {
        self.url.join(rel).map_err(|_| RemoteError::InvalidEndpoint)
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// The transport.
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    endpoint: Endpoint,
    token: Option<Secret>,
    /// The next JSON-RPC id, shared by the clones of this transport.
    next_id: Arc<AtomicU64>,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("endpoint", &self.endpoint)
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// Whether a call is a core A2A v1.0 method (which carries `A2A-Version: 1.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionHeader {
    None,
    V1,
}

impl Http {
    pub fn new(config: &HttpConfig) -> Result<Http, RemoteError> {
        let endpoint = Endpoint::parse(&config.endpoint, config.allow_insecure_loopback)?;
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .min_tls_version(reqwest::tls::Version::TLS_1_2)
            .tls_built_in_root_certs(!config.ca_only);
        if let Some(pem) = &config.ca_pem {
            for cert in reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|_| RemoteError::Tls(crate::control::TlsClass::Handshake))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        let client = builder
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .timeout(config.total_timeout)
            .https_only(!config.allow_insecure_loopback)
            .user_agent(concat!("argus-supervisor/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|_| RemoteError::Tls(crate::control::TlsClass::Handshake))?;
        Ok(Http {
            client,
            endpoint,
            token: config.token.clone(),
            next_id: Arc::new(AtomicU64::new(1)),
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn authorize(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            // Agent Zero accepts either header; both carry the same token.
            Some(t) => req.bearer_auth(t.expose()).header("X-API-KEY", t.expose()),
            None => req,
        }
    }

    /// GET a document under the endpoint (the agent card), bounded. `Ok(None)` on 404.
    pub async fn get_json(&self, rel: &str) -> Result<Option<Value>, RemoteError> {
        let url = self.endpoint.join(rel)?;
        let resp = self
            .authorize(self.client.get(url).header("Accept", "application/json"))
            .send()
            .await
            .map_err(classify_send)?;
        let status = resp.status();
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        check_status(status)?;
        let body = read_capped(resp).await?;
        if !status.is_success() {
            return Err(RemoteError::Http {
                status: status.as_u16(),
            });
        }
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|_| RemoteError::IncompatibleCard)
    }

    /// One JSON-RPC call. Returns `result`, or the mapped error class.
    pub async fn call<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        version: VersionHeader,
    ) -> Result<Value, RemoteError> {
        self.call_raw(method, params, version).await?.result()
    }

    /// One JSON-RPC call, its answer's bytes kept for the caller to read (a status poll reads
    /// them straight into what it keeps, [`super::wire::read_status_answer`]); a redirect, an
    /// auth refusal or an oversized body is already an error here.
    pub async fn call_raw<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        version: VersionHeader,
    ) -> Result<Answer, RemoteError> {
        // The JSON-RPC id only pairs a request with its answer on one HTTP exchange: a counter
        // serves (a random id cost a `getrandom` call per poll).
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        };
        let mut req = self
            .client
            .post(self.endpoint.url().clone())
            .header("Accept", "application/json")
            .json(&body);
        if version == VersionHeader::V1 {
            req = req.header("A2A-Version", "1.0");
        }
        let outcome = self.exchange(self.authorize(req)).await;
        if let Err(e) = &outcome {
            tracing::debug!(method, class = e.class(), "remote call failed");
        }
        outcome
    }

    async fn exchange(&self, req: reqwest::RequestBuilder) -> Result<Answer, RemoteError> {
        let resp = req.send().await.map_err(classify_send)?;
        let status = resp.status();
        check_status(status)?;
        let bytes = read_capped(resp).await?;
        Ok(Answer { status, bytes })
    }
}

/// A JSON-RPC request, serialised straight into the body.
#[derive(Serialize)]
struct Request<'a, P: ?Sized> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: &'a P,
}

/// A JSON-RPC answer as it arrived (its HTTP status and bounded body), not yet read.
pub struct Answer {
    status: StatusCode,
    bytes: Vec<u8>,
}

impl Answer {
    /// The body, for a reader that knows the shape it expects.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the HTTP status was a success (a reader of the bytes must not take a result
    /// from a failed exchange).
    pub fn is_success(&self) -> bool {
        self.status.is_success()
    }

    /// `result`, or the mapped error class. Only `error` and `result` are kept (`jsonrpc`, `id`
    /// and anything else are skipped while parsing), and the result is moved out, not copied.
    pub fn result(self) -> Result<Value, RemoteError> {
        let status = self.status;
        let Ok(envelope) = serde_json::from_slice::<Envelope>(&self.bytes) else {
            // A plain 404/500 may come from a proxy in between: a transient failure, never proof
            // that the remote lacks the operation (only JSON-RPC -32601 says that).
            return Err(match status.as_u16() {
                s if s >= 400 => RemoteError::Http { status: s },
                _ => RemoteError::MalformedResponse,
            });
        };
        if let Some(error) = envelope.error {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            return Err(map_code(code));
        }
        if !status.is_success() {
            return Err(RemoteError::Http {
                status: status.as_u16(),
            });
        }
        envelope.result.ok_or(RemoteError::MalformedResponse)
    }
}

/// A JSON-RPC answer: an object with a `result` or an `error` (a present `"error": null` counts
/// as no error, as JSON-RPC's own "MUST NOT exist on success" allows a lenient reader).
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
}

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

fn check_status(status: StatusCode) -> Result<(), RemoteError> {
    if status.is_redirection() {
        return Err(RemoteError::RedirectRefused);
    }
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        return Err(RemoteError::AuthFailed);
    }
    Ok(())
}

/// Classify a failure of `send()`: before the request could leave, or after.
fn classify_send(e: reqwest::Error) -> RemoteError {
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
fn tls_class(e: &reqwest::Error) -> Option<crate::control::TlsClass> {
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

/// Read the body, refusing past the cap: stop reading at the cap, never buffer more.
async fn read_capped(mut resp: reqwest::Response) -> Result<Vec<u8>, RemoteError> {
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
            Ok(None) => return Ok(body),
            Err(e) if e.is_timeout() => return Err(RemoteError::TimeoutAfterSend),
            Err(_) => return Err(RemoteError::DroppedAfterSend),
        }
    }
}
