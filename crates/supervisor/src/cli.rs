//! `argus-supervisor campaigns ...`: the operator CLI, a thin client of the HTTP API.
//!
//! It owns nothing but the translation of arguments to API calls and of answers to text: one line
//! per action saying what really happened, exit status 0 only when it was done. The token comes from
//! `ARGUS_SUPERVISOR_API_TOKEN` only; it is never printed. Remote-provided text is stripped of
//! control characters before it reaches the terminal.

use crate::api::{ActionAnswer, CampaignList, CampaignView};
use crate::runtime::messages::{Feed, HumanMessage};
use crate::runtime::reduce::EventLog;
use crate::runtime::reply::Outcome;
use crate::security::{Secret, Untrusted};
use crate::store::retention::ArchiveList;
use serde_json::Value;

/// Every operator action and read, as the CLI spells them (each is one API route).
#[derive(Debug, Clone, clap::Subcommand)]
pub enum CampaignsCommand {
    /// List the live campaigns (`--archived`: those taken out of the live set).
    List {
        #[arg(long)]
        archived: bool,
    },
    /// Show one campaign: state, lease, attempts, pending question, verdict, last event.
    Show { id: String },
    /// An operator verb (`crate::api::verbs`: each one's arguments, input and answer).
    #[command(flatten)]
    Act(crate::api::verbs::VerbArgs),
    /// The significant-event log.
    Events { id: String },
    /// One campaign whole, as JSON: its document, events and feed (live or archived).
    Export { id: String },
    /// Take a closed campaign out of the live set (kept in the state root's `archive/`).
    Archive { id: String },
    /// The human-facing feed.
    Messages { id: String },
    /// Follow the human-facing feed live until the campaign closes (Ctrl-C stops).
    Watch { id: String },
    /// The remote's feed: each change of how OpenTraining answers (unreachable, refusing our
    /// credentials, answering with errors, answering again), told once for every campaign.
    Remote,
}

/// Remote (or operator) text for a terminal: control characters and bidi overrides removed.
pub fn clean(text: &str) -> String {
    Untrusted::new(text, 4096).as_str().to_string()
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(t) => clean(t),
        other => clean(&other.to_string()),
    }
}

/// How a CLI command ended: its exit code (documented in `campaigns --help` and the README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Done: an action carried out, a read answered.
    Done = 0,
    /// Refused (by the supervisor or the remote), or not done.
    Refused = 1,
    /// The supervisor could not be reached.
    Unreachable = 3,
    /// The API refused the token (401).
    Unauthorized = 4,
    /// No such campaign or route (404).
    NotFound = 5,
}

impl Exit {
    fn of(status: u16) -> Exit {
        match status {
            200..=299 => Exit::Done,
            401 => Exit::Unauthorized,
            404 => Exit::NotFound,
            _ => Exit::Refused,
        }
    }
}

/// One path segment (a campaign id as typed), percent-encoded: `x?y` names a campaign, not a query.
fn seg(id: &str) -> String {
    percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A time for a person: relative ("in 9m 12s", "3m ago") with the absolute UTC time beside it.
/// Takes unix seconds or RFC 3339, as the API gives them.
pub fn when(v: &Value, now: u64) -> String {
    let at = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(t) => crate::time::parse_rfc3339(t),
        _ => None,
    };
    match at {
        Some(at) => when_secs(at, now),
        None => s(v),
    }
}

/// [`when`] for unix seconds.
pub fn when_secs(at: u64, now: u64) -> String {
    let span = |d: u64| match d {
        0..=59 => format!("{d}s"),
        60..=3599 => format!("{}m {}s", d / 60, d % 60),
        3600..=86_399 => format!("{}h {}m", d / 3600, (d % 3600) / 60),
        _ => format!("{}d {}h", d / 86_400, (d % 86_400) / 3600),
    };
    // Within the second (now is read to the second, an event at its own instant): "just now".
    let rel = if at.abs_diff(now) < 1 {
        "just now".to_string()
    } else if at > now {
        format!("in {}", span(at - now))
    } else {
        format!("{} ago", span(now - at))
    };
    format!("{rel} ({})", crate::time::rfc3339(at))
}

/// The API at one base URL — `http(s)://HOST:PORT` or `unix:PATH` (a daemon listening on a Unix
/// socket) — with the operator's token (from the environment; never printed).
pub(crate) struct Api {
    via: Via,
    /// Where the API is, for messages: the base URL as given, then the prefix.
    root: String,
    token: Option<Secret>,
}

enum Via {
    Tcp(reqwest::Client),
    Unix(std::path::PathBuf),
}

/// An answer's body, read whole or chunk by chunk (the feed's server-sent events).
enum Body {
    Tcp(reqwest::Response),
    Unix(hyper::body::Incoming),
}

impl Body {
    async fn chunk(&mut self) -> Option<bytes::Bytes> {
        match self {
            Body::Tcp(r) => r.chunk().await.ok().flatten(),
            Body::Unix(b) => {
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

    async fn json(mut self) -> Value {
        let mut all = vec![];
        while let Some(c) = self.chunk().await {
            all.extend_from_slice(&c);
        }
        serde_json::from_slice(&all).unwrap_or(Value::Null)
    }
}

impl Api {
    fn new(base: &str) -> Result<Api, String> {
        Api::with_token(base, Secret::from_env("ARGUS_SUPERVISOR_API_TOKEN"))
    }

    /// The daemon of the state root `home` at `base`. On a Unix socket its token is the one the
    /// daemon made and keeps in `home` (as the OpenOperator plugin runs it: a token in the host's
    /// environment is not the daemon's); otherwise ARGUS_SUPERVISOR_API_TOKEN.
    pub(crate) fn of_root(base: &str, home: &std::path::Path) -> Result<Api, String> {
        let kept = || {
            std::fs::read_to_string(home.join(crate::daemon::TOKEN_FILE))
                .ok()
                .map(|t| Secret::new(t.trim()))
        };
        let from_env = || Secret::from_env("ARGUS_SUPERVISOR_API_TOKEN");
        let token = match base.starts_with("unix:") {
            true => kept().or_else(from_env),
            false => from_env(),
        };
        Api::with_token(base, token)
    }

    /// A client of the API at `base` with this token (`qualify --daemon` drives its child so).
    pub(crate) fn with_token(base: &str, token: Option<Secret>) -> Result<Api, String> {
        let root = format!("{}{}", base.trim_end_matches('/'), crate::api::PREFIX);
        let via = match base.strip_prefix("unix:") {
            Some(path) => Via::Unix(path.into()),
            None => Via::Tcp(
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| format!("cannot build an HTTP client: {e}"))?,
            ),
        };
        Ok(Api { via, root, token })
    }

    fn unreachable(&self, why: &str) -> (Exit, String) {
        (
            Exit::Unreachable,
            format!(
                "cannot reach the supervisor API at {}: {why} (set --url or ARGUS_SUPERVISOR_URL)",
                self.root
            ),
        )
    }

    /// The API refused us: said in terms of the variable that holds the token, unset or refused.
    fn unauthorized(&self) -> (Exit, String) {
        let why = match &self.token {
            None => "ARGUS_SUPERVISOR_API_TOKEN is not set in this shell: set it to the token `serve` was started with",
            Some(_) => "the supervisor refused the token in ARGUS_SUPERVISOR_API_TOKEN: it is not the one `serve` was started with",
        };
        (Exit::Unauthorized, format!("error (unauthorized): {why}"))
    }

    /// One request (`POST` with a JSON body, or `GET`); its status and its body (a refused token
    /// is an error said here). A `stream`'s body is followed as long as it lasts (only its
    /// answer's start is timed).
    async fn send(
        &self,
        path: &str,
        body: Option<Value>,
        stream: bool,
    ) -> Result<(u16, Body), (Exit, String)> {
        match self.exchange(path, body, stream).await? {
            (401, _) => Err(self.unauthorized()),
            answer => Ok(answer),
        }
    }

    async fn exchange(
        &self,
        path: &str,
        body: Option<Value>,
        stream: bool,
    ) -> Result<(u16, Body), (Exit, String)> {
        // Actions wait for their outcome on the server (bounded at 30 s); leave room for it.
        let wait = std::time::Duration::from_secs(if body.is_some() { 45 } else { 30 });
        match &self.via {
            Via::Tcp(http) => {
                let url = format!("{}{path}", self.root);
                let mut req = match body {
                    Some(body) => http.post(&url).json(&body),
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
                Ok((resp.status().as_u16(), Body::Tcp(resp)))
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
        body: Option<Value>,
    ) -> Result<(u16, Body), String> {
        let stream = tokio::net::UnixStream::connect(socket)
            .await
            .map_err(|e| e.kind().to_string())?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|_| "the socket does not speak HTTP".to_string())?;
        tokio::spawn(conn);
        let mut req = ::http::Request::builder()
            .uri(format!("{}{path}", crate::api::PREFIX))
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
                serde_json::to_vec(&b).unwrap_or_default()
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
        Ok((resp.status().as_u16(), Body::Unix(resp.into_body())))
    }

    /// `POST` (an action, with its body) or `GET` one path: how it ended and the JSON answer, or
    /// what went wrong reaching it.
    pub(crate) async fn call(
        &self,
        path: &str,
        body: Option<Value>,
    ) -> Result<(Exit, Value), (Exit, String)> {
        let (status, body) = self.send(path, body, false).await?;
        Ok((Exit::of(status), body.json().await))
    }
}

/// What an answer of ours says (its `message`, cleaned; `-` when it says nothing).
fn said(v: &Value) -> String {
    ActionAnswer::read(v)
        .message
        .as_deref()
        .map_or_else(|| "-".into(), clean)
}

/// `backup --url`: the running daemon of `home` at `base` takes a consistent snapshot into its
/// `backups/`. The line to print, and how it ended.
pub async fn backup_online(base: &str, home: &std::path::Path) -> (String, Exit) {
    let api = match Api::of_root(base, home) {
        Ok(a) => a,
        Err(e) => return (e, Exit::Refused),
    };
    match api.call("/backup", Some(serde_json::json!({}))).await {
        Ok((Exit::Done, v)) => (said(&v), Exit::Done),
        Ok((exit, v)) => (
            format!("backup: not taken; the supervisor said: {}", said(&v)),
            exit,
        ),
        Err((exit, why)) => (format!("backup: not taken: {why}"), exit),
    }
}

/// How a read's answer is shown: its text, or why this CLI cannot read it.
type Render = fn(&Value, u64) -> Result<String, String>;

/// Run one CLI command against the API at `base` (e.g. `http://127.0.0.1:8787`). Returns the text
/// to print and whether the command succeeded (for an action: whether it was done).
pub async fn run(base: &str, command: CampaignsCommand, as_json: bool) -> (String, Exit) {
    use CampaignsCommand as C;
    let api = match Api::new(base) {
        Ok(a) => a,
        Err(e) => return (e, Exit::Refused),
    };
    let now = crate::time::now_secs();
    let (path, render): (String, Render) = match &command {
        C::Watch { id } => return watch(&api, id, as_json).await,
        C::Act(verb) => {
            let path = format!("/campaigns/{}/{}", seg(verb.id()), verb.verb().name());
            return match api.call(&path, Some(verb.body())).await {
                // An action succeeded only when it was done.
                Ok((exit, v)) => {
                    let (line, done) = action_line(&v, now);
                    let exit = match exit {
                        Exit::Done | Exit::Refused if done => Exit::Done,
                        Exit::Done => Exit::Refused,
                        other => other,
                    };
                    (if as_json { pretty(&v) } else { line }, exit)
                }
                Err(e) => (e.1, e.0),
            };
        }
        C::Archive { id } => {
            return match api
                .call(&format!("/archive/{}", seg(id)), Some(Value::Null))
                .await
            {
                Ok((Exit::Done, v)) => (if as_json { pretty(&v) } else { said(&v) }, Exit::Done),
                Ok((exit, v)) => (
                    if as_json {
                        pretty(&v)
                    } else {
                        error_line(&v, "archive failed")
                    },
                    exit,
                ),
                Err((exit, e)) => (e, exit),
            };
        }
        C::Export { id } => (format!("/campaigns/{}/export", seg(id)), |v, _| {
            Ok(pretty(v))
        }),
        C::List { archived: true } => ("/archive".into(), archived_list),
        C::List { archived: false } => ("/campaigns".into(), list),
        C::Show { id } => (format!("/campaigns/{}", seg(id)), show),
        C::Events { id } => (format!("/campaigns/{}/events", seg(id)), events),
        C::Messages { id } => (format!("/campaigns/{}/messages", seg(id)), messages),
        C::Remote => ("/remote/messages".into(), remote_messages),
    };
    match api.call(&path, None).await {
        Ok((exit, v)) if as_json => (pretty(&v), exit),
        Ok((Exit::Done, v)) => match render(&v, now) {
            Ok(text) => (text, Exit::Done),
            Err(why) => (why, Exit::Refused),
        },
        Ok((exit, v)) => (error_line(&v, "request failed"), exit),
        Err((exit, e)) => (e, exit),
    }
}

/// `campaigns list --archived`: one line each.
fn archived_list(v: &Value, now: u64) -> Result<String, String> {
    let list: ArchiveList = typed(v)?;
    let rows: Vec<String> = list
        .archived
        .iter()
        .map(|c| {
            format!(
                "{}  {}  {}  (last change {})",
                o(&c.campaign_id),
                o(&c.state),
                o(&c.objective),
                c.updated_at
                    .map_or_else(|| "-".into(), |t| when_secs(t, now))
            )
        })
        .collect();
    Ok(if rows.is_empty() {
        "no archived campaign".into()
    } else {
        rows.join("\n")
    })
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The API's error answer in one line: its own (`refused here (<code>): …. Next: …`), else
/// `error (<code>): <message>`.
fn error_line(v: &Value, otherwise: &str) -> String {
    let a = ActionAnswer::read(v);
    if let Some(line) = &a.message {
        return clean(line);
    }
    match a.error {
        Some(e) => format!("error ({}): {}", e.code, e.message),
        None => format!("error (error): {otherwise}"),
    }
}

/// An action's answer in one line (with the lease it left, if any), and whether it was done.
fn action_line(v: &Value, now: u64) -> (String, bool) {
    let a = ActionAnswer::read(v);
    let ok = a.was_done();
    let message = clean(&a.line());
    // A refusal's message already says whose it is and what to do next.
    let line = if ok || a.refused_by.is_some() {
        message
    } else {
        let code = (a.error.as_ref().map(|e| e.code.as_str()))
            .or(a.outcome.map(Outcome::name))
            .unwrap_or("error");
        format!("error ({code}): {message}")
    };
    let lease = a
        .lease
        .map(|l| {
            format!(
                " (lease epoch {}, expires {})",
                l.epoch,
                when_secs(l.expires_at, now)
            )
        })
        .unwrap_or_default();
    (format!("{line}{lease}\n"), ok)
}

fn list(v: &Value, _: u64) -> Result<String, String> {
    let list: CampaignList = typed(v)?;
    let mut out = format!(
        "{:<28} {:<32} {:>8} {:<14} {}\n",
        "CAMPAIGN", "STATE", "ATTEMPTS", "TASK", "QUESTION"
    );
    for c in list.campaigns {
        out.push_str(&format!(
            "{:<28} {:<32} {:>8} {:<14} {}\n",
            clean(&c.campaign_id),
            clean(&c.state),
            c.attempts,
            o(&c.remote_task_id),
            if c.pending_question.is_none() {
                "-"
            } else {
                "yes"
            },
        ));
    }
    Ok(out)
}

/// Our own API's answer, read whole into its type (a daemon of another version may answer a
/// shape this CLI does not read: said, never guessed at).
fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, String> {
    T::deserialize(v).map_err(|e| format!("the supervisor answered a shape this CLI does not read ({e}); `--json` shows it as it is"))
}

/// A typed value as [`s`] shows it: `-` for none, remote text cleaned.
fn o<T: serde::Serialize>(x: &T) -> String {
    s(&serde_json::to_value(x).unwrap_or(Value::Null))
}

/// The significant events, one readable line each (`--json` gives the log's lines as they are).
fn events(v: &Value, now: u64) -> Result<String, String> {
    let log: EventLog = typed(v)?;
    let mut out = String::new();
    for e in &log.events {
        let event = serde_json::to_value(&e.event).unwrap_or(Value::Null);
        // The event's own fields, after its type, as `key=value` (nested ones as `a.b=value`;
        // remote text cleaned).
        let mut fields = vec![];
        if let Some(o) = event.as_object() {
            for (k, v) in o.iter().filter(|(k, _)| k.as_str() != "type") {
                flat(k, v, &mut fields);
            }
        }
        let fields = fields.join(" ");
        out.push_str(&format!(
            "{}  {}  {}\n",
            when_secs(e.at, now),
            s(&event["type"]),
            fields
        ));
    }
    Ok(out)
}

/// `key=value` pairs of a JSON value, nested keys joined with `.`.
fn flat(key: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            for (k, v) in o {
                flat(&format!("{key}.{k}"), v, out);
            }
        }
        Value::Array(a) => out.push(format!(
            "{key}=[{}]",
            a.iter().map(s).collect::<Vec<_>>().join(", ")
        )),
        other => out.push(format!("{key}={}", s(other))),
    }
}

/// The feed, each line with its time.
fn messages(v: &Value, now: u64) -> Result<String, String> {
    let feed: Feed = typed(v)?;
    let mut out = String::new();
    for m in &feed.messages {
        out.push_str(&feed_line(m, now));
        out.push('\n');
    }
    Ok(out)
}

/// `campaigns remote`: each change of how OpenTraining answers, then how it answers now (said
/// even when nothing has changed: silence is not an answer).
fn remote_messages(v: &Value, now: u64) -> Result<String, String> {
    let feed: crate::runtime::messages::RemoteFeed = typed(v)?;
    let mut out = String::new();
    if feed.messages.is_empty() {
        out.push_str("No change of how OpenTraining answers has been told.\n");
    }
    for m in &feed.messages {
        out.push_str(&feed_line(m, now));
        out.push('\n');
    }
    if let Some(n) = &feed.now {
        out.push_str(&n.line());
        out.push('\n');
    }
    Ok(out)
}

fn feed_line(m: &HumanMessage, now: u64) -> String {
    format!(
        "{}  [{}] {}",
        when_secs(m.at, now),
        o(&m.kind),
        clean(&m.text)
    )
}

fn show(v: &Value, now: u64) -> Result<String, String> {
    let c: CampaignView = typed(v)?;
    let lease = match (c.controller_epoch, &c.lease_expires_at) {
        (Some(epoch), Some(expires)) => format!(
            "held by {} epoch {epoch}, expires {}",
            clean(&c.controller_id),
            when(&Value::String(expires.clone()), now)
        ),
        _ => "none".into(),
    };
    let last = c
        .latest_significant_event
        .as_ref()
        .and_then(|e| serde_json::to_value(e).ok())
        .map(|e| format!("{} {}", s(&e["type"]), clean(&e.to_string())))
        .unwrap_or_else(|| "-".into());
    let answer = answer_line(c.latest_evidence.as_ref().and_then(|e| e.answer.as_ref()));
    // An answer read for an earlier attempt than the one bound now says whose it is.
    let answer = match &c.latest_evidence {
        Some(e) if c.remote_task_id.as_ref().is_some_and(|t| *t != e.task) => {
            let n = c
                .attempt_history
                .iter()
                .position(|a| a.task_id == e.task)
                .map_or_else(
                    || "an earlier attempt".to_string(),
                    |i| format!("attempt {}", i + 1),
                );
            format!(
                "{answer}\n          (that answer is {n}'s, task {}; the attempt bound now is task {})",
                clean(e.task.as_str()),
                o(&c.remote_task_id)
            )
        }
        _ => answer,
    };
    let remote = match (&c.remote_stage, &c.remote_condition) {
        (stage, None) => stage.as_deref().map(clean).unwrap_or_default(),
        // The reading above is the last one; what reads meet now is said beside it.
        (_, Some(now)) => format!(
            "(last read); now {} since {}",
            o(&now.condition).replace('_', " "),
            o(&now.since)
        ),
    };
    let mut out = format!(
        "campaign  {}\nstate     {}\nobjective {}\ntask      {}\nrun       {} attempt {} source {}\nremote    {} {remote}\nremote says (untrusted) {}\n{answer}\nlease     {lease}\nattempts  {}\nquestion  {}\nargus     {} (project {})\nverdict   {}\nlast      {last}\nactions   {}\nquarantined {}\n",
        clean(&c.campaign_id),
        clean(&c.state),
        clean(&c.objective),
        o(&c.remote_task_id),
        o(&c.run_id),
        o(&c.attempt_id),
        o(&c.source_sha),
        o(&c.remote_state),
        o(&c.remote_message),
        c.attempts,
        o(&c.pending_question.as_ref().map(|q| &q.text)),
        o(&c.argus_status),
        o(&c.argus_project_id),
        o(&c.reviewer_verdict),
        c.allowed_actions.iter().map(|v| v.name()).collect::<Vec<_>>().join(" "),
        c.quarantined,
    );
    for a in &c.attempt_history {
        out.push_str(&format!(
            "  attempt {} task {} run {} source {} outcome {} verdict {}\n",
            o(&a.attempt_id),
            o(&a.task_id),
            o(&a.run_id),
            o(&a.source_sha),
            o(&a.outcome),
            o(&a.verdict),
        ));
    }
    Ok(out)
}

/// The ended attempt's final answer, on one line and cut (the API has it whole).
fn answer_line(answer: Option<&crate::runtime::AnswerSummary>) -> String {
    let Some(a) = answer else {
        return "answer    none given".to_string();
    };
    let text = clean(&a.untrusted_text);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = line.chars().take(300).collect();
    format!(
        "answer    (untrusted, from its {}, {} bytes) {cut}{}",
        o(&a.from).replace('_', " "),
        a.bytes,
        if cut.len() < line.len() { "…" } else { "" }
    )
}

/// Follow the feed's server-sent events, printing each line, until the campaign closes.
async fn watch(api: &Api, id: &str, as_json: bool) -> (String, Exit) {
    use std::io::Write;
    let path = format!("/campaigns/{}/messages/stream", seg(id));
    let mut resp = match api.send(&path, None, true).await {
        Ok((status, body)) if (200..300).contains(&status) => body,
        Ok((status, body)) => {
            return (
                error_line(&body.json().await, "request failed"),
                Exit::of(status),
            );
        }
        Err((exit, e)) => return (e, exit),
    };
    let mut buf = String::new();
    let mut event = String::new();
    let stdout = std::io::stdout();
    while let Some(chunk) = resp.chunk().await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(i) = buf.find('\n') {
            let line = buf[..i].trim_end_matches('\r').to_string();
            buf.drain(..=i);
            if let Some(name) = line.strip_prefix("event:") {
                event = name.trim().to_string();
            } else if let Some(data) = line.strip_prefix("data:") {
                if event == "closed" {
                    return (String::new(), Exit::Done);
                }
                let data = data.trim();
                let text = match serde_json::from_str::<HumanMessage>(data) {
                    _ if as_json => data.to_string(),
                    Ok(m) => feed_line(&m, crate::time::now_secs()),
                    Err(e) => format!("(a feed line this CLI cannot read: {e})"),
                };
                let mut out = stdout.lock();
                let _ = writeln!(out, "{text}");
                let _ = out.flush();
            }
        }
    }
    (String::new(), Exit::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_time_is_said_relative_to_now_and_the_present_second_is_just_now() {
        let now = 1_000_000;
        assert!(when(&json!(now), now).starts_with("just now ("));
        assert!(when(&json!(now - 3), now).starts_with("3s ago ("));
        assert!(when(&json!(now + 90), now).starts_with("in 1m 30s ("));
    }

    #[test]
    fn remote_text_reaches_the_terminal_without_control_characters() {
        let evil = "task-1\u{1b}[2J\u{1b}]0;owned\u{7}\r\u{202e}";
        let config = crate::runtime::RuntimeConfig::new(argus_machines::ControllerId::new("us"));
        let m = argus_machines::CampaignMachine::new(
            "c1",
            argus_machines::ControllerId::new("us"),
            config.policy(),
        );
        let mut doc = crate::runtime::CampaignDoc::new(&m, "train", 0);
        doc.pending_question = Some(evil.into());
        let mut reading = argus_machines::Observation::new(
            argus_machines::TaskId::new(evil),
            argus_machines::RemoteState::Working,
        );
        reading.stage = Some(evil.into());
        reading.status_message = Some(format!("which dataset? {evil}"));
        doc.remote = Some(reading);
        let view = CampaignView::of(&doc, config.policy(), &Default::default(), None);
        let mut v = serde_json::to_value(view).expect("a view serialises");
        v["remote_task_id"] = json!(evil);
        let out = show(&v, 0).expect("a campaign view reads back");
        assert!(out.contains("task-1"), "{out}");
        assert!(
            out.contains("remote says (untrusted) which dataset?"),
            "{out}"
        );
        for c in out.chars() {
            assert!(
                c == '\n' || !(c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
                "{c:?} reached the terminal: {out:?}"
            );
        }
    }
}
