//! A subscription to one task's updates, read as server-sent events: the event framing, the
//! bounds, and which task each update names.
//!
//! Each event names its task (an update of another task ends the stream:
//! [`StreamEnd::OtherTask`]) or is a JSON-RPC error (which ends it too). An update that carries
//! the whole reading a poll gives — the task's state and its `metadata.argus_supervisor` with a
//! revision, as the contract's remote sends it — is read by the poll's own parser
//! ([`wire::parse_status`]: the same bounds and untrusted-text rules) into an
//! [`Update::Reading`]; any other update (a plain A2A server's, an artifact's) is only a doorbell,
//! [`Update::Bell`], whose content is never kept. Every shape real servers send is read: v0.3's
//! `kind`-tagged events (a2a-sdk's 0.3 compatibility), and the v1.0 wrapped
//! `{"task"|"statusUpdate"|"artifactUpdate": …}` that a2a-sdk sends in 1.0 and fasta2a 2.1.1 sends on
//! either method name. Bounds: a silence bound (no byte within it ends the stream), a bound on one
//! event, and one on the whole stream. Updates read from one arrival are given as one: the newest
//! reading, or a bell when any of them rang.

use super::http::{map_code, StreamBody};
use super::wire;
use crate::control::{RemoteError, StreamBounds, StreamEnd, Update, Updates};
use argus_machines::TaskId;
use serde_json::Value;

/// The updates of `task` from an opened event stream.
/// `naive_offset_secs`: the zone the remote's times without one are in (a reading's change time).
pub(super) fn updates(
    body: StreamBody,
    task: TaskId,
    bounds: StreamBounds,
    naive_offset_secs: i32,
) -> Updates {
    let reader = Reader {
        body,
        task,
        bounds,
        naive_offset_secs,
        events: Events::default(),
        carried: 0,
        done: false,
    };
    Box::pin(futures_util::stream::unfold(reader, |mut r| async move {
        let item = r.next().await?;
        Some((item, r))
    }))
}

struct Reader {
    body: StreamBody,
    task: TaskId,
    bounds: StreamBounds,
    naive_offset_secs: i32,
    events: Events,
    /// Bytes read from this stream so far.
    carried: usize,
    done: bool,
}

impl Reader {
    /// The next update (those already arrived, together), or the end; `None` after the end.
    async fn next(&mut self) -> Option<Result<Update, StreamEnd>> {
        if self.done {
            return None;
        }
        let mut heard: Option<Update> = None;
        let end = loop {
            match self.events.next_event(self.bounds.event_bytes) {
                Err(end) => break end,
                Ok(Some(data)) => match update_of(&data, &self.task, self.naive_offset_secs) {
                    Ok(Some(update)) => {
                        // A bell already rung stays rung: the read covers every later reading.
                        if heard != Some(Update::Bell) {
                            heard = Some(update);
                        }
                    }
                    Ok(None) => {}
                    Err(end) => break end,
                },
                Ok(None) if heard.is_some() => return heard.map(Ok),
                Ok(None) => {
                    let chunk = tokio::select! {
                        c = self.body.chunk() => c,
                        () = tokio::time::sleep(self.bounds.silence) => break StreamEnd::Silent,
                    };
                    match chunk {
                        None => break StreamEnd::Closed,
                        Some(Err(e)) => break StreamEnd::Broken(e),
                        Some(Ok(bytes)) => {
                            self.carried += bytes.len();
                            if self.carried > self.bounds.stream_bytes {
                                break StreamEnd::Spent;
                            }
                            self.events.buf.extend_from_slice(&bytes);
                        }
                    }
                }
            }
        };
        // An update read before the end is given first: the end comes next.
        if let Some(update) = heard {
            self.events.ended = Some(end);
            return Some(Ok(update));
        }
        self.done = true;
        Some(Err(end))
    }
}

/// Server-sent events framing (the WHATWG rules a client needs): lines end in LF, CRLF or CR; a
/// blank line dispatches the `data` lines gathered since the last one; comments (`:` first) and
/// other fields are skipped.
#[derive(Default)]
struct Events {
    /// Bytes arrived and not yet framed.
    buf: Vec<u8>,
    /// The event being gathered: its data lines, joined by LF.
    data: Vec<u8>,
    has_data: bool,
    /// The stream's end, once read, held back behind a bell.
    ended: Option<StreamEnd>,
}

impl Events {
    /// The next whole event's data, `None` until more bytes arrive, or the end (an event or a
    /// line over `max` bytes, or an end held back).
    fn next_event(&mut self, max: usize) -> Result<Option<Vec<u8>>, StreamEnd> {
        if let Some(end) = self.ended.take() {
            return Err(end);
        }
        loop {
            let Some(at) = self.buf.iter().position(|b| *b == b'\n' || *b == b'\r') else {
                if self.buf.len() > max {
                    return Err(StreamEnd::EventTooLarge);
                }
                return Ok(None);
            };
            let crlf = self.buf[at] == b'\r' && self.buf.get(at + 1) == Some(&b'\n');
            let line: Vec<u8> = self.buf.drain(..at).collect();
            self.buf.drain(..if crlf { 2 } else { 1 });
            if line.is_empty() {
                if self.has_data {
                    self.has_data = false;
                    self.data.pop(); // the last LF
                    return Ok(Some(std::mem::take(&mut self.data)));
                }
                continue;
            }
            if line.first() == Some(&b':') {
                continue;
            }
            let (field, value) = match line.iter().position(|b| *b == b':') {
                Some(i) => (&line[..i], &line[i + 1..]),
                None => (&line[..], &[][..]),
            };
            if field != b"data" {
                continue;
            }
            let value = value.strip_prefix(b" ").unwrap_or(value);
            if self.data.len() + value.len() + 1 > max {
                return Err(StreamEnd::EventTooLarge);
            }
            self.data.extend_from_slice(value);
            self.data.push(b'\n');
            self.has_data = true;
        }
    }
}

/// The update an event is for `task`; `None` for what a stream may also carry (a message); the
/// end for a JSON-RPC error, an event that is not JSON-RPC, or an update of another task.
fn update_of(
    data: &[u8],
    task: &TaskId,
    naive_offset_secs: i32,
) -> Result<Option<Update>, StreamEnd> {
    let event: Value = serde_json::from_slice(data)
        .map_err(|_| StreamEnd::Broken(RemoteError::MalformedResponse))?;
    if let Some(error) = event.get("error").filter(|e| !e.is_null()) {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        return Err(StreamEnd::Broken(map_code(code)));
    }
    let result = event
        .get("result")
        .ok_or(StreamEnd::Broken(RemoteError::MalformedResponse))?;
    match task_named(result) {
        Some(id) if id == task.as_str() => Ok(Some(
            reading(result, naive_offset_secs).unwrap_or(Update::Bell),
        )),
        Some(_) => Err(StreamEnd::OtherTask),
        None => Ok(None),
    }
}

/// The reading an update carries whole: a task, or a status update, with the contract's
/// metadata and its revision; read as a poll's answer is. `None` otherwise (a bell).
fn reading(result: &Value, naive_offset_secs: i32) -> Option<Update> {
    let status_update = |u: &Value| {
        serde_json::json!({
            "id": u.get("taskId"),
            "status": u.get("status"),
            "metadata": u.get("metadata"),
        })
    };
    let task = if let Some(task) = result.get("task") {
        task.clone()
    } else if let Some(update) = result.get("statusUpdate") {
        status_update(update)
    } else if result.get("taskId").is_some() && result.get("status").is_some() {
        status_update(result)
    } else if result.get("id").is_some() && result.get("status").is_some() {
        result.clone()
    } else {
        return None;
    };
    task.pointer("/metadata/argus_supervisor/revision")?
        .as_u64()?;
    let view = wire::parse_status(&task).ok()?.zoned(naive_offset_secs);
    Some(Update::Reading(Box::new(view.into_reading())))
}

/// The task an update names, in any of the shapes real servers send; `None` for a message.
fn task_named(result: &Value) -> Option<&str> {
    fn text(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str)
    }
    // v1.0: one of `task`, `statusUpdate`, `artifactUpdate`, `message`.
    if let Some(task) = result.get("task") {
        return text(task.get("id")).or(Some(""));
    }
    for key in ["statusUpdate", "artifactUpdate"] {
        if let Some(update) = result.get(key) {
            return text(update.get("taskId")).or(Some(""));
        }
    }
    if result.get("message").is_some() {
        return None;
    }
    // v0.3: the event itself, tagged by `kind` (a bare task or update without one is read alike).
    match text(result.get("kind")) {
        Some("message") => None,
        Some("task") => text(result.get("id")).or(Some("")),
        _ if result.get("taskId").is_some() => text(result.get("taskId")).or(Some("")),
        _ if result.get("status").is_some() => text(result.get("id")).or(Some("")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &[u8], max: usize) -> Vec<Result<String, StreamEnd>> {
        let mut e = Events::default();
        e.buf.extend_from_slice(input);
        let mut out = vec![];
        loop {
            match e.next_event(max) {
                Ok(Some(d)) => out.push(Ok(String::from_utf8_lossy(&d).into_owned())),
                Ok(None) => return out,
                Err(end) => {
                    out.push(Err(end));
                    return out;
                }
            }
        }
    }

    #[test]
    fn events_are_framed_by_blank_lines_in_any_line_ending_and_comments_are_skipped() {
        let got = events(
            b": keep-alive\n\ndata: {\"a\":1}\n\ndata:x\r\ndata: y\r\n\r\nevent: e\nid: 7\ndata: z\r\r",
            1024,
        );
        let want: Vec<Result<String, StreamEnd>> =
            vec![Ok("{\"a\":1}".into()), Ok("x\ny".into()), Ok("z".into())];
        assert_eq!(got, want);
        // An event not yet ended by its blank line waits for more bytes.
        assert_eq!(events(b"data: half", 1024), vec![]);
    }

    #[test]
    fn an_event_or_a_line_over_the_bound_ends_the_stream() {
        let long = format!("data: {}\n\n", "x".repeat(100));
        assert_eq!(
            events(long.as_bytes(), 64),
            vec![Err(StreamEnd::EventTooLarge)]
        );
        // A line that never ends is refused once it passes the bound, not held.
        let endless = "x".repeat(65);
        assert_eq!(
            events(endless.as_bytes(), 64),
            vec![Err(StreamEnd::EventTooLarge)]
        );
        // Many data lines that together pass it.
        let many = "data: xxxxxxxxxx\n".repeat(10);
        assert_eq!(
            events(many.as_bytes(), 64),
            vec![Err(StreamEnd::EventTooLarge)]
        );
    }

    #[test]
    fn every_shape_real_servers_send_names_its_task() {
        let ours = TaskId::new("t-1");
        let rpc = |result: Value| {
            serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": result}))
                .unwrap_or_default()
        };
        for (shape, result) in [
            (
                "v0.3 task",
                serde_json::json!({"kind": "task", "id": "t-1", "status": {"state": "working"}}),
            ),
            (
                "v0.3 status",
                serde_json::json!({"kind": "status-update", "taskId": "t-1", "status": {"state": "input-required"}, "final": true}),
            ),
            (
                "v0.3 artifact",
                serde_json::json!({"kind": "artifact-update", "taskId": "t-1", "artifact": {}}),
            ),
            (
                "v1 task",
                serde_json::json!({"task": {"id": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}),
            ),
            (
                "v1 status",
                serde_json::json!({"statusUpdate": {"taskId": "t-1", "status": {}}}),
            ),
            (
                "v1 artifact",
                serde_json::json!({"artifactUpdate": {"taskId": "t-1"}}),
            ),
            (
                "bare task",
                serde_json::json!({"id": "t-1", "status": {"state": "working"}}),
            ),
        ] {
            assert_eq!(
                update_of(&rpc(result.clone()), &ours, 0),
                Ok(Some(Update::Bell)),
                "{shape}"
            );
            let other = serde_json::to_string(&result)
                .unwrap_or_default()
                .replace("t-1", "t-2");
            let other: Value = serde_json::from_str(&other).unwrap_or(Value::Null);
            assert_eq!(
                update_of(&rpc(other), &ours, 0),
                Err(StreamEnd::OtherTask),
                "{shape}"
            );
        }
        // A message is carried, not an update; an update naming no task is not ours.
        assert_eq!(
            update_of(
                &rpc(serde_json::json!({"kind": "message", "taskId": "t-2"})),
                &ours,
                0
            ),
            Ok(None)
        );
        assert_eq!(
            update_of(
                &rpc(serde_json::json!({"message": {"taskId": "t-2"}})),
                &ours,
                0
            ),
            Ok(None)
        );
        assert_eq!(
            update_of(&rpc(serde_json::json!({"statusUpdate": {}})), &ours, 0),
            Err(StreamEnd::OtherTask)
        );
        // An error event ends the stream with its class; an event that is not JSON-RPC too.
        assert_eq!(
            update_of(
                br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone"}}"#,
                &ours,
                0
            ),
            Err(StreamEnd::Broken(RemoteError::TaskNotFound))
        );
        assert_eq!(
            update_of(b"<html>", &ours, 0),
            Err(StreamEnd::Broken(RemoteError::MalformedResponse))
        );
        assert_eq!(
            update_of(b"{\"jsonrpc\":\"2.0\"}", &ours, 0),
            Err(StreamEnd::Broken(RemoteError::MalformedResponse))
        );
    }

    #[test]
    fn an_update_with_the_contracts_metadata_is_read_as_a_poll_reads_the_task() {
        let ours = TaskId::new("t-1");
        let meta = serde_json::json!({"argus_supervisor": {"campaign_id": "c1", "revision": 3, "stage": "training"}});
        let status = serde_json::json!({"state": "input-required", "timestamp": "2026-12-03T10:00:00.250+00:00",
            "message": {"parts": [{"kind": "text", "text": "which <b>dataset</b>?"}]}});
        let task = serde_json::json!({"id": "t-1", "status": status, "metadata": meta});
        let polled = wire::parse_status(&task).map(wire::TaskView::into_reading);
        assert_eq!(
            polled.as_ref().map(|r| r.changed_at),
            Ok(Some(1_796_292_000_250))
        );
        let rpc = |result: Value| {
            serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": result}))
                .unwrap_or_default()
        };
        for (shape, result) in [
            (
                "v0.3 status",
                serde_json::json!({"kind": "status-update", "taskId": "t-1", "status": status, "metadata": meta, "final": false}),
            ),
            (
                "v1 status",
                serde_json::json!({"statusUpdate": {"taskId": "t-1", "status": status, "metadata": meta}}),
            ),
            ("v1 task", serde_json::json!({"task": task})),
            (
                "v0.3 task",
                serde_json::json!({"kind": "task", "id": "t-1", "status": status, "metadata": meta}),
            ),
        ] {
            let heard = update_of(&rpc(result), &ours, 0);
            assert_eq!(
                heard,
                Ok(polled.clone().ok().map(|o| Update::Reading(Box::new(o)))),
                "{shape}"
            );
        }
        // Without a revision it is not the whole reading: a bell.
        let bare = serde_json::json!({"statusUpdate": {"taskId": "t-1", "status": status, "metadata": {"argus_supervisor": {"stage": "x"}}}});
        assert_eq!(update_of(&rpc(bare), &ours, 0), Ok(Some(Update::Bell)));
    }
}
