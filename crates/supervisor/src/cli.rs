//! `argus-supervisor campaigns ...`: the operator CLI, over the typed client of the HTTP API
//! ([`crate::api::client`]).
//!
//! It owns nothing but the translation of arguments to API calls and of answers to text: one line
//! per action saying what really happened, exit status 0 only when it was done. The token comes from
//! `ARGUS_SUPERVISOR_API_TOKEN` only; it is never printed. Remote-provided text is stripped of
//! control characters before it reaches the terminal.

use crate::api::client::{seg, CallError, Client, Received, Stream};
use crate::api::contract::{
    ActionReply, ArchiveList, CampaignList, CampaignView, EventLog, Feed, HumanMessage, RemoteFeed,
};
use crate::runtime::reply::Outcome;
use crate::security::clean;
use serde::Serialize;

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

/// A typed value as a terminal shows it: `-` for none, text cleaned (quotes off a string).
fn o<T: Serialize>(x: &T) -> String {
    let json = serde_json::to_string(x).unwrap_or_default();
    match serde_json::from_str::<Option<String>>(&json) {
        Ok(None) => "-".into(),
        Ok(Some(text)) => clean(&text),
        Err(_) => clean(&json),
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
    /// How an answer of this status ends the command.
    fn of(status: u16) -> Exit {
        match status {
            200..=299 => Exit::Done,
            401 => Exit::Unauthorized,
            404 => Exit::NotFound,
            _ => Exit::Refused,
        }
    }

    /// How a request that got no answer ends the command.
    fn failed(e: &CallError) -> Exit {
        match e {
            CallError::Unreachable { .. } => Exit::Unreachable,
            CallError::Unauthorized { .. } => Exit::Unauthorized,
        }
    }
}

/// A request that got no answer: its line and its exit.
fn failed(e: CallError) -> (String, Exit) {
    (e.to_string(), Exit::failed(&e))
}

/// A time for a person: relative ("in 9m 12s", "3m ago") with the absolute UTC time beside it;
/// an RFC 3339 time, as the API gives them (one it cannot read is shown as it is, cleaned).
pub fn when(at: &str, now: u64) -> String {
    match crate::time::parse_rfc3339(at) {
        Some(at) => when_secs(at, now),
        None => clean(at),
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

/// What an answer of ours says (its `message`, cleaned; `-` when it says nothing), or why it
/// cannot be read.
fn said(reply: &Received) -> String {
    match reply.answer() {
        Ok(a) => a.message.as_deref().map_or_else(|| "-".into(), clean),
        Err(e) => e.to_string(),
    }
}

/// `backup --url`: the running daemon of `home` at `base` takes a consistent snapshot into its
/// `backups/`. The line to print, and how it ended.
pub async fn backup_online(base: &str, home: &std::path::Path) -> (String, Exit) {
    let api = match Client::of_root(base, home) {
        Ok(a) => a,
        Err(e) => return (e, Exit::Refused),
    };
    match api.post("/backup", &NoInput {}).await {
        Ok(r) if r.ok() => (said(&r), Exit::Done),
        Ok(r) => (
            format!("backup: not taken; the supervisor said: {}", said(&r)),
            Exit::of(r.status),
        ),
        Err(e) => (format!("backup: not taken: {e}"), Exit::failed(&e)),
    }
}

/// The body of a route that takes none (`backup`, `archive`): an empty object.
#[derive(Serialize)]
struct NoInput {}

/// How a read's answer is shown: its text, or why this CLI cannot read it.
type Render = fn(&Received, u64) -> Result<String, String>;

/// Run one CLI command against the API at `base` (e.g. `http://127.0.0.1:8787`). Returns the text
/// to print and whether the command succeeded (for an action: whether it was done).
pub async fn run(base: &str, command: CampaignsCommand, as_json: bool) -> (String, Exit) {
    use CampaignsCommand as C;
    let api = match Client::from_env(base) {
        Ok(a) => a,
        Err(e) => return (e, Exit::Refused),
    };
    let now = crate::time::now_secs();
    let (path, render): (String, Render) = match &command {
        C::Watch { id } => return watch(&api, id, as_json).await,
        C::Act(verb) => {
            return match api.act(verb.id(), verb.verb(), &verb.input()).await {
                Ok(r) if as_json => {
                    let done = r.answer().is_ok_and(|a| a.was_done());
                    (r.as_it_came(), action_exit(Exit::of(r.status), done))
                }
                Ok(r) => {
                    let (line, done) = action_line(&r, now);
                    (line, action_exit(Exit::of(r.status), done))
                }
                Err(e) => failed(e),
            };
        }
        C::Archive { id } => {
            return match api
                .post(&format!("/archive/{}", seg(id)), &NoInput {})
                .await
            {
                Ok(r) if as_json => (r.as_it_came(), Exit::of(r.status)),
                Ok(r) if r.ok() => (said(&r), Exit::Done),
                Ok(r) => (error_line(&r, "archive failed"), Exit::of(r.status)),
                Err(e) => failed(e),
            };
        }
        C::Export { id } => (format!("/campaigns/{}/export", seg(id)), |r, _| {
            Ok(r.as_it_came())
        }),
        C::List { archived: true } => ("/archive".into(), archived_list),
        C::List { archived: false } => ("/campaigns".into(), list),
        C::Show { id } => (format!("/campaigns/{}", seg(id)), show),
        C::Events { id } => (format!("/campaigns/{}/events", seg(id)), events),
        C::Messages { id } => (format!("/campaigns/{}/messages", seg(id)), messages),
        C::Remote => ("/remote/messages".into(), remote_messages),
    };
    match api.get(&path).await {
        Ok(r) if as_json => (r.as_it_came(), Exit::of(r.status)),
        Ok(r) if r.ok() => match render(&r, now) {
            Ok(text) => (text, Exit::Done),
            Err(why) => (why, Exit::Refused),
        },
        Ok(r) => (error_line(&r, "request failed"), Exit::of(r.status)),
        Err(e) => failed(e),
    }
}

/// An action succeeded only when it was done.
fn action_exit(exit: Exit, done: bool) -> Exit {
    match exit {
        Exit::Done | Exit::Refused if done => Exit::Done,
        Exit::Done => Exit::Refused,
        other => other,
    }
}

/// Our own API's answer, read whole into its type (a daemon of another version may answer a
/// shape this CLI does not read: said, never guessed at).
fn typed<T: serde::de::DeserializeOwned>(r: &Received) -> Result<T, String> {
    r.read().map_err(|e| e.to_string())
}

/// `campaigns list --archived`: one line each.
fn archived_list(r: &Received, now: u64) -> Result<String, String> {
    let list: ArchiveList = typed(r)?;
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

/// The API's error answer in one line: its own (`refused here (<code>): …. Next: …`), else
/// `error (<code>): <message>`; a body this CLI cannot read is said as such, with the status.
fn error_line(r: &Received, otherwise: &str) -> String {
    let a = match r.answer() {
        Ok(a) => a,
        Err(e) => return format!("error ({}): {otherwise}: {e}", r.status),
    };
    if let Some(line) = &a.message {
        return clean(line);
    }
    match a.error {
        Some(e) => format!("error ({}): {}", e.code.name(), e.message),
        None => format!("error (error): {otherwise}"),
    }
}

/// An action's answer in one line (with the lease it left, if any), and whether it was done.
fn action_line(r: &Received, now: u64) -> (String, bool) {
    let a = match r.answer() {
        Ok(a) => a,
        Err(e) => return (format!("error ({}): {e}\n", r.status), false),
    };
    (answer_text(&a, now), a.was_done())
}

/// An action's answer as its line says it.
fn answer_text(a: &ActionReply, now: u64) -> String {
    let message = clean(&a.line());
    // A refusal's message already says whose it is and what to do next.
    let line = if a.was_done() || a.refused_by.is_some() {
        message
    } else {
        let code = (a.error.as_ref().map(|e| e.code.name()))
            .or(a.outcome.map(Outcome::name))
            .unwrap_or("error");
        format!("error ({code}): {message}")
    };
    let lease = a
        .lease
        .as_ref()
        .map(|l| {
            format!(
                " (lease epoch {}, expires {})",
                l.epoch,
                when_secs(l.expires_at, now)
            )
        })
        .unwrap_or_default();
    format!("{line}{lease}\n")
}

fn list(r: &Received, _: u64) -> Result<String, String> {
    let list: CampaignList = typed(r)?;
    let mut out = format!(
        "{:<28} {:<32} {:>8} {:<14} {}\n",
        "CAMPAIGN", "STATE", "ATTEMPTS", "TASK", "QUESTION"
    );
    for c in list.campaigns {
        out.push_str(&format!(
            "{:<28} {:<32} {:>8} {:<14} {}\n",
            clean(&c.campaign_id),
            clean(&c.state.persisted()),
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

/// The significant events, one readable line each (`--json` gives the log's lines as they are).
fn events(r: &Received, now: u64) -> Result<String, String> {
    let log: EventLog = typed(r)?;
    let mut out = String::new();
    for e in &log.events {
        // The event's own fields, after its type, as `key=value` (nested ones as `a.b=value`;
        // remote text cleaned).
        let (kind, fields) = crate::api::view::event_fields(&e.event);
        let fields: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{k}={}", clean(v)))
            .collect();
        out.push_str(&format!(
            "{}  {}  {}\n",
            when_secs(e.at, now),
            clean(&kind),
            fields.join(" ")
        ));
    }
    Ok(out)
}

/// The feed, each line with its time.
fn messages(r: &Received, now: u64) -> Result<String, String> {
    let feed: Feed = typed(r)?;
    let mut out = String::new();
    for m in &feed.messages {
        out.push_str(&feed_line(m, now));
        out.push('\n');
    }
    Ok(out)
}

/// `campaigns remote`: each change of how OpenTraining answers, then how it answers now (said
/// even when nothing has changed: silence is not an answer).
fn remote_messages(r: &Received, now: u64) -> Result<String, String> {
    let feed: RemoteFeed = typed(r)?;
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

fn show(r: &Received, now: u64) -> Result<String, String> {
    let c: CampaignView = typed(r)?;
    Ok(shown(&c, now))
}

/// One campaign, as `campaigns show` says it.
fn shown(c: &CampaignView, now: u64) -> String {
    let lease = match (c.controller_epoch, &c.lease_expires_at) {
        (Some(epoch), Some(expires)) => format!(
            "held by {} epoch {epoch}, expires {}",
            clean(&c.controller_id),
            when(expires, now)
        ),
        _ => "none".into(),
    };
    let last = c
        .latest_significant_event
        .as_ref()
        .map(|e| {
            let (kind, _) = crate::api::view::event_fields(e);
            format!(
                "{} {}",
                clean(&kind),
                clean(&serde_json::to_string(e).unwrap_or_default())
            )
        })
        .unwrap_or_else(|| "-".into());
    let answer = evidence_line(c);
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
        clean(&c.state.persisted()),
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
    out
}

/// The ended attempt's answer, and whose it is when it is an earlier attempt's than the one
/// bound now.
fn evidence_line(c: &CampaignView) -> String {
    let answer = answer_line(c.latest_evidence.as_ref().and_then(|e| e.answer.as_ref()));
    match &c.latest_evidence {
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
    }
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
async fn watch(api: &Client, id: &str, as_json: bool) -> (String, Exit) {
    use std::io::Write;
    let path = format!("/campaigns/{}/messages/stream", seg(id));
    let mut resp: Stream = match api.stream(&path).await {
        Ok((status, body)) if Exit::of(status) == Exit::Done => body,
        Ok((status, body)) => {
            let r = body.whole(status).await;
            return (error_line(&r, "request failed"), Exit::of(status));
        }
        Err(e) => return failed(e),
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

    #[test]
    fn a_time_is_said_relative_to_now_and_the_present_second_is_just_now() {
        let now = 1_000_000;
        assert!(when_secs(now, now).starts_with("just now ("));
        assert!(when_secs(now - 3, now).starts_with("3s ago ("));
        assert!(when_secs(now + 90, now).starts_with("in 1m 30s ("));
        assert!(when(&crate::time::rfc3339(now + 90), now).starts_with("in 1m 30s ("));
        assert_eq!(when("not a time\u{1b}[2J", now), "not a time[2J");
    }

    #[test]
    fn a_typed_value_shows_none_as_a_dash_and_text_cleaned() {
        assert_eq!(o(&None::<String>), "-");
        assert_eq!(o(&Some("a\u{1b}b")), "ab");
        assert_eq!(o(&3u32), "3");
        assert_eq!(o(&Outcome::Done), "done");
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
        let mut view = CampaignView::of(&doc, config.policy(), &Default::default(), None);
        view.remote_task_id = Some(argus_machines::TaskId::new(evil));
        let out = shown(&view, 0);
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
