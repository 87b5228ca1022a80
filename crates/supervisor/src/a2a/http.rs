//! The HTTP transport under the A2A client: one place that sends, bounds and classifies.
//!
//! It owns the endpoint rules (HTTPS, or plain HTTP to loopback only when allowed), the refusal of
//! redirects, the timeouts, the 1 MiB cap enforced while reading, the auth headers, and the mapping of
//! every failure to a safe [`RemoteError`] class that says whether the request may have reached the
//! remote. It must never log a URL (it may carry a token), a header or a body.
//!
//! Two wires carry a request, chosen once at start: hyper's pooled client straight to the remote
//! (every status poll goes here, so its cost per request is the supervisor's), or reqwest when the
//! environment names a proxy for the endpoint (reqwest implements proxying; the direct wire does
//! not). Both apply the same rules above; the trust roots are the same (the compiled-in Mozilla
//! roots and the platform's store unless `ARGUS_SUPERVISOR_CA_ONLY`, plus `ARGUS_SUPERVISOR_CA_FILE`).
//! The wires are built in `http/connect.rs`; failures are classified in `http/failure.rs`.

use crate::control::RemoteError;
use crate::security::Secret;
use ::http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use ::http::StatusCode;
use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use reqwest::Url;
use serde::Serialize;
use serde_json::Value;
use std::net::IpAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

mod connect;
mod failure;
use connect::{direct_client, proxied_client, to_uri, TimedConnect};
pub use failure::map_code;
use failure::{check_status, classify_direct, classify_send, read_capped};

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
    /// Which headers carry the token: both (always, in `serve`); one alone only when `qualify`
    /// asks which scheme the remote accepts.
    pub auth_headers: AuthHeaders,
    /// The zone a remote's times without one are in, seconds east of UTC
    /// (`ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET`; default UTC): Agent Zero writes local time.
    pub naive_time_offset_secs: i32,
}

/// Where the remote's token travels, as configured. Agent Zero gives its A2A URL with the token in
/// the path (`http://host/a2a/t-<token>`); other remotes take `OPENTRAINING_A2A_TOKEN` in a header.
/// Said by `probe`, `qualify` and `health`, and in the advice after a refusal; the token itself is
/// never printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    /// No token at all: calls carry no credentials.
    None,
    /// `OPENTRAINING_A2A_TOKEN`, sent as `Authorization: Bearer` and `X-API-KEY`.
    Header,
    /// A `t-<token>` segment in `OPENTRAINING_A2A_URL`'s path.
    UrlPath,
    /// Both: the URL's path and the header.
    UrlPathAndHeader,
}

impl AuthMode {
    /// How the mode reads in a report.
    pub fn describe(self) -> &'static str {
        match self {
            AuthMode::None => "none: no token is configured",
            AuthMode::Header => "a token in headers (OPENTRAINING_A2A_TOKEN, as Authorization: Bearer and X-API-KEY)",
            AuthMode::UrlPath => "a token in the URL's path (OPENTRAINING_A2A_URL's t-… segment, as Agent Zero gives it; never printed)",
            AuthMode::UrlPathAndHeader => "a token in the URL's path (t-…) and one in headers (OPENTRAINING_A2A_TOKEN)",
        }
    }

    /// What to check when the remote refuses our credentials (401/403).
    pub fn refused_advice(self) -> &'static str {
        match self {
            AuthMode::None => "no token is configured: put the remote's token in OPENTRAINING_A2A_TOKEN, or use the A2A URL the remote gives (Agent Zero's carries it in its path, …/a2a/t-<token>)",
            AuthMode::Header => "check OPENTRAINING_A2A_TOKEN",
            AuthMode::UrlPath => "check the token in OPENTRAINING_A2A_URL's path (its t-… segment): Agent Zero derives it from its login and password, so it changes when they do; copy the A2A URL its settings show now",
            AuthMode::UrlPathAndHeader => "check the token in OPENTRAINING_A2A_URL's path (its t-… segment, which changes with Agent Zero's password) and OPENTRAINING_A2A_TOKEN",
        }
    }

    /// Whether a token travels in the URL's path.
    pub fn in_path(self) -> bool {
        matches!(self, AuthMode::UrlPath | AuthMode::UrlPathAndHeader)
    }
}

/// The headers a token is sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthHeaders {
    /// `Authorization: Bearer` and `X-API-KEY` (Agent Zero accepts either).
    #[default]
    Both,
    Bearer,
    ApiKey,
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
            auth_headers: AuthHeaders::Both,
            ca_only: false,
            naive_time_offset_secs: 0,
        }
    }

    /// Where this configuration's token travels (an endpoint that does not parse has none in
    /// its path).
    pub fn auth_mode(&self) -> AuthMode {
        let in_path = Endpoint::parse(&self.endpoint, self.allow_insecure_loopback)
            .is_ok_and(|e| e.path_token().is_some());
        match (in_path, self.token.is_some()) {
            (false, false) => AuthMode::None,
            (false, true) => AuthMode::Header,
            (true, false) => AuthMode::UrlPath,
            (true, true) => AuthMode::UrlPathAndHeader,
        }
    }

    /// This configuration without any credentials: no header token, and the URL's path without
    /// its token segment (what anyone who knows the host could call).
    pub fn without_credentials(&self) -> HttpConfig {
        let endpoint = Endpoint::parse(&self.endpoint, self.allow_insecure_loopback)
            .map(|e| e.without_path_token().url().to_string())
            .unwrap_or_else(|_| self.endpoint.clone());
        HttpConfig {
            endpoint,
            token: None,
            ..self.clone()
        }
    }

    /// Trust the certificates of the PEM bundle at `ca_file` besides the usual roots, or
    /// (`ca_only`) only them.
    pub fn with_trust(
        mut self,
        ca_file: Option<&std::path::Path>,
        ca_only: bool,
    ) -> Result<Self, TrustError> {
        self.ca_only = ca_only;
        if let Some(path) = ca_file {
            let pem =
                std::fs::read(path).map_err(|e| TrustError::Unreadable(e.kind().to_string()))?;
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

    /// The index of the path segment that carries a token (`t-<token>`, the form Agent Zero's
    /// A2A URL takes), if one does.
    fn path_token(&self) -> Option<usize> {
        self.url
            .path_segments()?
            .position(|s| s.len() > 2 && s.starts_with("t-"))
    }

    /// The endpoint without its path's token segment (unchanged when it has none).
    pub fn without_path_token(&self) -> Endpoint {
        let Some(at) = self.path_token() else {
            return self.clone();
        };
        let kept: Vec<&str> = self
            .url
            .path_segments()
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, s)| (i != at).then_some(s))
            .collect();
        let mut url = self.url.clone();
        let mut path = format!("/{}", kept.join("/"));
        if !path.ends_with('/') {
            path.push('/');
        }
        url.set_path(&path);
        Endpoint { url }
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
    wire: Wire,
    endpoint: Endpoint,
    /// The endpoint as the `Uri` a request is sent to, converted once: reqwest re-parsed the URL
    /// twice per request (its redirect layer and its answer), a visible share of a poll's cost.
    post_uri: ::http::Uri,
    /// The headers every request carries (user agent; the token's two, marked sensitive), built
    /// once: a token that cannot be a header value is refused at start, not on every call.
    fixed: Arc<[(HeaderName, HeaderValue)]>,
    /// Longest wait between bytes of an answer, and for the whole exchange (the direct wire's
    /// timer; the proxied wire's client carries its own).
    read_timeout: Duration,
    total_timeout: Duration,
    /// The next JSON-RPC id, shared by the clones of this transport.
    next_id: Arc<AtomicU64>,
}

/// How a request reaches the remote.
#[derive(Clone)]
enum Wire {
    /// Straight to the remote, on hyper's pooled client (keep-alive, HTTP/2 by ALPN). Behind an
    /// `Arc`: the client is a dozen handles, and the enum would otherwise be its size.
    Direct(Arc<DirectClient>),
    /// Through the proxy the environment names for this endpoint (`HTTPS_PROXY`, `HTTP_PROXY`,
    /// `ALL_PROXY`, minus `NO_PROXY`), on reqwest, which implements proxying. Chosen once, at
    /// start, by the same rules reqwest applies.
    Proxied(reqwest::Client),
}

type DirectClient = hyper_util::client::legacy::Client<
    TimedConnect<hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>>,
    Full<Bytes>,
>;

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("endpoint", &self.endpoint)
            .field(
                "wire",
                &match self.wire {
                    Wire::Direct(_) => "direct",
                    Wire::Proxied(_) => "proxied",
                },
            )
            .finish_non_exhaustive()
    }
}

/// Whether a call is a core A2A v1.0 method (which carries `A2A-Version: 1.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionHeader {
    None,
    V1,
}

const USER_AGENT: &str = concat!("argus-supervisor/", env!("CARGO_PKG_VERSION"));

impl Http {
    pub fn new(config: &HttpConfig) -> Result<Http, RemoteError> {
        let endpoint = Endpoint::parse(&config.endpoint, config.allow_insecure_loopback)?;
        let post_uri = to_uri(endpoint.url())?;
        let proxied = hyper_util::client::proxy::matcher::Matcher::from_system()
            .intercept(&post_uri)
            .is_some();
        let wire = if proxied {
            Wire::Proxied(proxied_client(config)?)
        } else {
            Wire::Direct(Arc::new(direct_client(config)?))
        };
        let mut fixed = vec![(
            ::http::header::USER_AGENT,
            HeaderValue::from_static(USER_AGENT),
        )];
        if let Some(t) = &config.token {
            let header = |v: String| {
                let mut v = HeaderValue::try_from(v).map_err(|_| RemoteError::AuthFailed)?;
                v.set_sensitive(true);
                Ok::<_, RemoteError>(v)
            };
            // Agent Zero accepts either header; both carry the same token.
            if config.auth_headers != AuthHeaders::ApiKey {
                fixed.push((
                    ::http::header::AUTHORIZATION,
                    header(format!("Bearer {}", t.expose()))?,
                ));
            }
            if config.auth_headers != AuthHeaders::Bearer {
                fixed.push((
                    HeaderName::from_static("x-api-key"),
                    header(t.expose().to_owned())?,
                ));
            }
        }
        Ok(Http {
            wire,
            endpoint,
            post_uri,
            fixed: fixed.into(),
            read_timeout: config.read_timeout,
            total_timeout: config.total_timeout,
            next_id: Arc::new(AtomicU64::new(1)),
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Whether requests go through a proxy named by the environment (said once at start).
    pub fn is_proxied(&self) -> bool {
        matches!(self.wire, Wire::Proxied(_))
    }

    /// GET a document under the endpoint (the agent card), bounded. `Ok(None)` on 404.
    pub async fn get_json(&self, rel: &str) -> Result<Option<Value>, RemoteError> {
        let url = self.endpoint.join(rel)?;
        let uri = to_uri(&url)?;
        let answer = self
            .send(::http::Method::GET, &url, uri, None, VersionHeader::None)
            .await?;
        if answer.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !answer.status.is_success() {
            return Err(RemoteError::Http {
                status: answer.status.as_u16(),
            });
        }
        serde_json::from_slice(&answer.bytes)
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
    ) -> Result<RpcAnswer, RemoteError> {
        let body = self.request(method, params)?;
        let outcome = self
            .send(
                ::http::Method::POST,
                self.endpoint.url(),
                self.post_uri.clone(),
                Some(body),
                version,
            )
            .await;
        if let Err(e) = &outcome {
            tracing::debug!(method, class = e.class(), "remote call failed");
        }
        outcome
    }

    /// One JSON-RPC request's body, under the next id.
    fn request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<Bytes, RemoteError> {
        // The JSON-RPC id only pairs a request with its answer on one HTTP exchange: a counter
        // serves (a random id cost a `getrandom` call per poll).
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        serde_json::to_vec(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .map(Bytes::from)
        // Never sent: the class reqwest's builder error had.
        .map_err(|_| RemoteError::InvalidEndpoint)
    }

    /// Send one request on the wire; refuse a redirect or an auth failure; read the body within
    /// the cap. `url` and `uri` name the same target (reqwest takes the one, hyper the other).
    async fn send(
        &self,
        method: ::http::Method,
        url: &Url,
        uri: ::http::Uri,
        body: Option<Bytes>,
        version: VersionHeader,
    ) -> Result<RpcAnswer, RemoteError> {
        let headers = self.headers(body.is_some(), version, "application/json");
        match &self.wire {
            Wire::Direct(client) => {
                let mut req = ::http::Request::new(Full::new(body.unwrap_or_default()));
                *req.method_mut() = method;
                *req.uri_mut() = uri;
                *req.headers_mut() = headers;
                self.exchange_direct(client, req).await
            }
            Wire::Proxied(client) => {
                let mut req = client.request(method, url.clone()).headers(headers);
                if let Some(body) = body {
                    req = req.body(body);
                }
                let resp = req.send().await.map_err(classify_send)?;
                let status = resp.status();
                check_status(status)?;
                let bytes = read_capped(resp).await?;
                Ok(RpcAnswer { status, bytes })
            }
        }
    }

    /// The headers of one request: the fixed ones, what it accepts, its content type when it has
    /// a body, and `A2A-Version` for a v1.0 core method.
    fn headers(&self, has_body: bool, version: VersionHeader, accept: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::with_capacity(self.fixed.len() + 3);
        for (name, value) in self.fixed.iter() {
            headers.insert(name.clone(), value.clone());
        }
        headers.insert(ACCEPT, HeaderValue::from_static(accept));
        if has_body {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        if version == VersionHeader::V1 {
            headers.insert(
                HeaderName::from_static("a2a-version"),
                HeaderValue::from_static("1.0"),
            );
        }
        headers
    }

    /// A JSON-RPC request whose answer may be a stream of server-sent events (a subscription).
    /// The same rules as [`Http::call_raw`] up to the answer's head (redirects and auth refusals
    /// are errors, the head must come within the total timeout); then an event stream is handed
    /// back unread, and any other answer is read whole within the cap (a refusal, mostly).
    pub async fn open_stream<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        version: VersionHeader,
    ) -> Result<Opened, RemoteError> {
        let body = self.request(method, params)?;
        let headers = self.headers(true, version, "text/event-stream");
        match &self.wire {
            Wire::Direct(client) => {
                let mut req = ::http::Request::new(Full::new(body));
                *req.method_mut() = ::http::Method::POST;
                *req.uri_mut() = self.post_uri.clone();
                *req.headers_mut() = headers;
                let total = tokio::time::Instant::now() + self.total_timeout;
                let resp = tokio::select! {
                    biased;
                    r = client.request(req) => r.map_err(classify_direct)?,
                    () = tokio::time::sleep_until(total) => return Err(RemoteError::TimeoutAfterSend),
                };
                check_status(resp.status())?;
                if is_event_stream(resp.headers()) {
                    return Ok(Opened::Stream(StreamBody::Direct(resp.into_body())));
                }
                self.read_direct(resp, total).await.map(Opened::RpcAnswer)
            }
            Wire::Proxied(client) => {
                // The client's total timeout would cut every stream: a stream has none (its
                // reader bounds its silence); the client's read timeout still applies.
                let resp = client
                    .post(self.endpoint.url().clone())
                    .headers(headers)
                    .body(body)
                    .timeout(Duration::from_secs(7 * 86_400))
                    .send()
                    .await
                    .map_err(classify_send)?;
                let status = resp.status();
                check_status(status)?;
                if is_event_stream(resp.headers()) {
                    return Ok(Opened::Stream(StreamBody::Proxied(resp)));
                }
                let bytes = read_capped(resp).await?;
                Ok(Opened::RpcAnswer(RpcAnswer { status, bytes }))
            }
        }
    }

    /// One exchange on hyper's client, under one timer: it fires at the read timeout after the
    /// last byte (or the send), or at the total timeout, whichever comes first.
    async fn exchange_direct(
        &self,
        client: &DirectClient,
        req: ::http::Request<Full<Bytes>>,
    ) -> Result<RpcAnswer, RemoteError> {
        let total = tokio::time::Instant::now() + self.total_timeout;
        let resp = tokio::select! {
            biased;
            r = client.request(req) => r.map_err(classify_direct)?,
            () = tokio::time::sleep_until((tokio::time::Instant::now() + self.read_timeout).min(total)) => {
                return Err(RemoteError::TimeoutAfterSend)
            }
        };
        check_status(resp.status())?;
        self.read_direct(resp, total).await
    }

    /// Read a direct answer's body within the cap, under one timer: it fires at the read timeout
    /// after the last byte, or at `total`, whichever comes first.
    async fn read_direct(
        &self,
        resp: ::http::Response<hyper::body::Incoming>,
        total: tokio::time::Instant,
    ) -> Result<RpcAnswer, RemoteError> {
        let next = |now: tokio::time::Instant| (now + self.read_timeout).min(total);
        let timer = tokio::time::sleep_until(next(tokio::time::Instant::now()));
        tokio::pin!(timer);
        let status = resp.status();
        let declared = resp
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
            return Err(RemoteError::TooLarge);
        }
        let mut body = resp.into_body();
        // Most answers arrive in one frame: kept as it came, copied only when a second arrives.
        let mut first: Option<Bytes> = None;
        let mut rest: Option<BytesMut> = None;
        loop {
            timer.as_mut().reset(next(tokio::time::Instant::now()));
            let frame = tokio::select! {
                biased;
                f = body.frame() => f,
                () = &mut timer => return Err(RemoteError::TimeoutAfterSend),
            };
            let data = match frame {
                None => break,
                Some(Err(_)) => return Err(RemoteError::DroppedAfterSend),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => data,
                    Err(_) => continue, // trailers
                },
            };
            let held =
                first.as_ref().map_or(0, Bytes::len) + rest.as_ref().map_or(0, BytesMut::len);
            if held + data.len() > MAX_RESPONSE_BYTES {
                return Err(RemoteError::TooLarge);
            }
            match (first.take(), &mut rest) {
                (_, Some(r)) => r.extend_from_slice(&data),
                (None, None) => first = Some(data),
                (Some(f), None) => {
                    let mut joined = BytesMut::with_capacity(f.len() + data.len());
                    joined.extend_from_slice(&f);
                    joined.extend_from_slice(&data);
                    rest = Some(joined);
                }
            }
        }
        let bytes = match (first, rest) {
            (_, Some(r)) => r.freeze(),
            (Some(f), None) => f,
            (None, None) => Bytes::new(),
        };
        Ok(RpcAnswer { status, bytes })
    }
}

/// Whether an answer's head says it is a stream of server-sent events.
fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

/// What a stream request got back.
pub enum Opened {
    /// The events, unread.
    Stream(StreamBody),
    /// An ordinary answer (a JSON-RPC error, mostly), read whole within the cap.
    RpcAnswer(RpcAnswer),
}

/// An event stream's body as it arrives, a chunk at a time; never read whole.
pub enum StreamBody {
    Direct(hyper::body::Incoming),
    Proxied(reqwest::Response),
}

impl StreamBody {
    /// The next bytes of the stream; `None` where the remote ended it.
    pub async fn chunk(&mut self) -> Option<Result<Bytes, RemoteError>> {
        match self {
            StreamBody::Direct(body) => loop {
                match body.frame().await? {
                    Err(_) => return Some(Err(RemoteError::DroppedAfterSend)),
                    Ok(frame) => {
                        if let Ok(data) = frame.into_data() {
                            return Some(Ok(data));
                        }
                    }
                }
            },
            StreamBody::Proxied(resp) => match resp.chunk().await {
                Ok(Some(data)) => Some(Ok(data)),
                Ok(None) => None,
                Err(e) if e.is_timeout() => Some(Err(RemoteError::TimeoutAfterSend)),
                Err(_) => Some(Err(RemoteError::DroppedAfterSend)),
            },
        }
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
pub struct RpcAnswer {
    status: StatusCode,
    bytes: Bytes,
}

impl RpcAnswer {
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
        // A body is JSON-RPC's only with a `result` or an `error`: JSON of another shape (an
        // agent's own message about its failure, say) is read as any other body is.
        let envelope = serde_json::from_slice::<RpcEnvelope>(&self.bytes)
            .ok()
            .filter(|e| e.error.is_some() || e.result.is_some());
        let Some(envelope) = envelope else {
            // A plain 404/500 may come from a proxy in between: a transient failure, never proof
            // that the remote lacks the operation (only JSON-RPC -32601 says that). A 5xx with a
            // body, other than a gateway's or an overloaded server's, is the remote failing while
            // it answers: a remote error, not an outage.
            return Err(match status.as_u16() {
                s @ (500 | 501 | 505..=599) if !self.bytes.is_empty() => {
                    RemoteError::ServerFault { status: s }
                }
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
struct RpcEnvelope {
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
}

#[cfg(test)]
mod tests;
