//! The typed client of this API, below the CLI and `qualify`: one request at a time over TCP
//! (`http(s)://HOST:PORT`) or the daemon's Unix socket (`unix:PATH`), with the operator's token
//! (never printed). An answer is read into its type from [`super::contract`]; a shape the client
//! cannot read is an [`Unreadable`] that says so, never a default.

use super::contract::{ActionInput, ActionReply, Health, HealthBrief};
use crate::security::Secret;
use argus_machines::Verb;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The API at one base URL, with a token.
pub struct Client {
    via: Via,
    /// Where the API is, for messages: the base URL as given, then the prefix.
    root: String,
    token: Option<Secret>,
}

enum Via {
    Tcp(reqwest::Client),
    Unix(std::path::PathBuf),
}

/// Why a request got no answer of the API's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// Nothing answered at `root` (refused, timed out, not HTTP).
    #[error(
        "cannot reach the supervisor API at {root}: {why} (set --url or ARGUS_SUPERVISOR_URL)"
    )]
    Unreachable { root: String, why: String },
    /// The API refused the token (401): said in terms of the variable that holds it.
    #[error("error (unauthorized): {}", match .token_set {
        false => "ARGUS_SUPERVISOR_API_TOKEN is not set in this shell: set it to the token `serve` was started with",
        true => "the supervisor refused the token in ARGUS_SUPERVISOR_API_TOKEN: it is not the one `serve` was started with",
    })]
    Unauthorized { token_set: bool },
}

/// An answer whose body is not the shape its type says (a daemon of another version, a proxy).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the supervisor answered a shape this client does not read ({0}); `--json` shows it as it is"
)]
pub struct Unreadable(String);

/// One answer: its HTTP status and its body, read into a type on demand.
#[derive(Debug, Clone)]
pub struct Received {
    pub status: u16,
    body: bytes::Bytes,
}

impl Received {
    /// The body read whole into `T`.
    pub fn read<T: DeserializeOwned>(&self) -> Result<T, Unreadable> {
        serde_json::from_slice(&self.body).map_err(|e| Unreadable(e.to_string()))
    }

    /// The body as an action's answer (every answer of an action route, refusals included).
    pub fn answer(&self) -> Result<ActionReply, Unreadable> {
        self.read()
    }

    /// Whether the status is a success (2xx).
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as it came, indented when it is JSON (`--json`: never reshaped into a type).
    pub fn as_it_came(&self) -> String {
        match serde_json::from_slice::<serde_json::Value>(&self.body) {
            Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_default(),
            Err(_) => String::from_utf8_lossy(&self.body).into_owned(),
        }
    }
}

/// An answer's body followed chunk by chunk (the feed's server-sent events).
pub enum Stream {
    Tcp(reqwest::Response),
    Unix(hyper::body::Incoming),
}

impl Stream {
    /// The next chunk; `None` at the end (or when the connection broke).
    pub async fn chunk(&mut self) -> Option<bytes::Bytes> {
        match self {
            Stream::Tcp(r) => r.chunk().await.ok().flatten(),
            Stream::Unix(b) => {
                use http_body_util::BodyExt;
                loop {
                    match b.frame().await? {
                        Ok(f) => match f.into_data() {
                            Ok(d) => return Some(d),
                            Err(_) => continue,
                        },
                        Err(_) => return None,
                    }
                }
            }
        }
    }

    /// The rest of the body, read whole (a stream's refusal is an answer like any other).
    pub async fn whole(mut self, status: u16) -> Received {
        let mut all = vec![];
        while let Some(c) = self.chunk().await {
            all.extend_from_slice(&c);
        }
        Received {
            status,
            body: all.into(),
        }
    }
}

/// One path segment (a campaign id as typed), percent-encoded: `x?y` names a campaign, not a query.
pub fn seg(id: &str) -> String {
    percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC).to_string()
}

impl Client {
    /// The API at `base` with the token in ARGUS_SUPERVISOR_API_TOKEN.
    pub fn from_env(base: &str) -> Result<Client, String> {
        Client::with_token(base, Secret::from_env("ARGUS_SUPERVISOR_API_TOKEN"))
    }

    /// The daemon of the state root `home` at `base`. On a Unix socket its token is the one the
    /// daemon made and keeps in `home` (as the OpenOperator plugin runs it: a token in the host's
    /// environment is not the daemon's); otherwise ARGUS_SUPERVISOR_API_TOKEN.
    pub fn of_root(base: &str, home: &std::path::Path) -> Result<Client, String> {
        let mut client = Client::from_env(base)?;
        if let (Via::Unix(_), Some(kept)) = (&client.via, kept_token(home)) {
            client.token = Some(kept);
        }
        Ok(client)
    }

    /// A client of the API at `base` with this token (`qualify --daemon` drives its child so).
    pub fn with_token(base: &str, token: Option<Secret>) -> Result<Client, String> {
        let root = format!("{}{}", base.trim_end_matches('/'), super::PREFIX);
        let via = match base.strip_prefix("unix:") {
            Some(path) => Via::Unix(path.into()),
            None => Via::Tcp(
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| format!("cannot build an HTTP client: {e}"))?,
            ),
        };
        Ok(Client { via, root, token })
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Received, CallError> {
        let (status, body) = self.send(path, None, false).await?;
        Ok(body.whole(status).await)
    }

    /// `POST path` with `body` as JSON.
    pub async fn post(&self, path: &str, body: &impl Serialize) -> Result<Received, CallError> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let (status, body) = self.send(path, Some(bytes), false).await?;
        Ok(body.whole(status).await)
    }

    /// `verb` on `campaign` with its input: the action's answer as it came.
    pub async fn act(
        &self,
        campaign: &str,
        verb: Verb,
        input: &ActionInput,
    ) -> Result<Received, CallError> {
        let path = format!("/campaigns/{}/{}", seg(campaign), verb.name());
        self.post(&path, input).await
    }

    /// `GET health`, read whole; an answer without the token's part (the brief shape) says so.
    pub async fn health(&self) -> Result<Health, String> {
        let reply = self.get("/health").await.map_err(|e| e.to_string())?;
        let unreadable = match reply.read::<Health>() {
            Ok(h) => return Ok(h),
            Err(e) => e,
        };
        match reply.read::<HealthBrief>() {
            Ok(_) => Err(
                "its health answered only its status: the token was not given or not accepted"
                    .into(),
            ),
            Err(_) => Err(unreadable.to_string()),
        }
    }

    /// `GET path`, its body followed as long as it lasts (only the answer's start is timed).
    pub async fn stream(&self, path: &str) -> Result<(u16, Stream), CallError> {
        self.send(path, None, true).await
    }

    async fn send(
        &self,
        path: &str,
        body: Option<Vec<u8>>,
        stream: bool,
    ) -> Result<(u16, Stream), CallError> {
        match self.exchange(path, body, stream).await? {
            (401, _) => Err(CallError::Unauthorized {
                token_set: self.token.is_some(),
            }),
            answer => Ok(answer),
        }
    }

    fn unreachable(&self, why: &str) -> CallError {
        CallError::Unreachable {
            root: self.root.clone(),
            why: why.into(),
        }
    }

    async fn exchange(
        &self,
        path: &str,
        body: Option<Vec<u8>>,
        stream: bool,
    ) -> Result<(u16, Stream), CallError> {
        // Actions wait for their outcome on the server (bounded at 30 s); leave room for it.
        let wait = std::time::Duration::from_secs(if body.is_some() { 45 } else { 30 });
        match &self.via {
            Via::Tcp(http) => {
                let url = format!("{}{path}", self.root);
                let mut req = match body {
                    Some(body) => http
                        .post(&url)
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(body),
                    None => http.get(&url),
                };
                if let Some(t) = &self.token {
                    req = req.bearer_auth(t.expose());
                }
                if !stream {
                    req = req.timeout(wait);
                }
                let resp = req.send().await.map_err(|e| {
                    self.unreachable(if e.is_connect() {
                        "connection refused"
                    } else if e.is_timeout() {
                        "timed out"
                    } else {
                        "request failed"
                    })
                })?;
                Ok((resp.status().as_u16(), Stream::Tcp(resp)))
            }
            Via::Unix(socket) => {
                let sent = tokio::time::timeout(wait, self.over_unix(socket, path, body)).await;
                match sent {
                    Ok(Ok(r)) => Ok(r),
                    Ok(Err(why)) => Err(self.unreachable(&why)),
                    Err(_) => Err(self.unreachable("timed out")),
                }
            }
        }
    }

    /// HTTP/1.1 over the daemon's Unix socket, one connection per request.
    async fn over_unix(
        &self,
        socket: &std::path::Path,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Stream), String> {
        let stream = tokio::net::UnixStream::connect(socket)
            .await
            .map_err(|e| e.kind().to_string())?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|_| "the socket does not speak HTTP".to_string())?;
        tokio::spawn(conn);
        let mut req = ::http::Request::builder()
            .uri(format!("{}{path}", super::PREFIX))
            .header(::http::header::HOST, "localhost");
        if let Some(t) = &self.token {
            req = req.header(
                ::http::header::AUTHORIZATION,
                format!("Bearer {}", t.expose()),
            );
        }
        let bytes = match body {
            Some(b) => {
                req = req
                    .method(::http::Method::POST)
                    .header(::http::header::CONTENT_TYPE, "application/json");
                b
            }
            None => vec![],
        };
        let req = req
            .body(http_body_util::Full::new(bytes::Bytes::from(bytes)))
            .map_err(|_| "request failed".to_string())?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(|_| "request failed".to_string())?;
        Ok((resp.status().as_u16(), Stream::Unix(resp.into_body())))
    }
}

/// The token the daemon of `home` made for its Unix socket ([`super::TOKEN_FILE`]), if any.
pub fn kept_token(home: &std::path::Path) -> Option<Secret> {
    std::fs::read_to_string(home.join(super::TOKEN_FILE))
        .ok()
        .map(|t| Secret::new(t.trim()))
}
