//! The sim's two dialects and its subscriptions.
//!
//! In the v1.0 dialect a core method arrives by its PascalCase name under `A2A-Version: 1.0` and
//! its answer is rewritten as v1.0 writes it (no `kind`, `TASK_STATE_*` states, `ROLE_*` roles,
//! `SendMessage`'s task wrapped as `{"task": …}`); the world itself speaks the contract's v0.3 names.
//!
//! A subscription (`tasks/resubscribe`, `SubscribeToTask`) answers with server-sent events, as the
//! real servers do: the task first, then an update each time its revision or state changes (at
//! the timeline's next step, or when the clock moves or a write applies), and the end after the
//! last one. Stream faults act on the next subscription: a cut mid-update, silence, a flood of
//! copies, an update naming another task.

use super::{rpc_error, Fault, Shared};
use argus_supervisor_lib::protocol::Dialect;
use argus_supervisor_lib::protocol::ErrorCode;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The world's name for a subscription.
pub(super) const SUBSCRIBE: &str = "tasks/resubscribe";

/// The longest a subscription sleeps before it looks at its task again.
const LOOK_AGAIN: Duration = Duration::from_secs(5);

/// The world's (contract) name of a method as it arrived in `dialect`; `None` when this dialect
/// does not serve it (a v0.3 core name on a v1.0 remote, a v1.0 name without its header, or on a
/// v0.3 remote). Extension methods are the same in both.
pub(super) fn core_method(
    dialect: Dialect,
    method: &str,
    headers: &HeaderMap,
) -> Option<&'static str> {
    const CORE: [(&str, &str); 4] = [
        ("message/send", "SendMessage"),
        ("tasks/get", "GetTask"),
        ("tasks/cancel", "CancelTask"),
        (SUBSCRIBE, "SubscribeToTask"),
    ];
    let v1_header = headers
        .get("a2a-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == "1.0");
    for (v03, v1) in CORE {
        match dialect {
            Dialect::V03 if method == v03 => return Some(v03),
            Dialect::V1 if method == v1 && v1_header => return Some(v03),
            _ if method == v03 || method == v1 => return None,
            _ => {}
        }
    }
    // Extension methods (and unknown ones, which the world refuses) pass as they are; the world
    // knows them by their names.
    argus_supervisor_lib::protocol::Method::ALL
        .into_iter()
        .map(|m| m.contract_name())
        .find(|n| *n == method)
        .or(Some("(unknown)"))
}

/// A core method's answer as `dialect` writes it.
pub(super) fn in_dialect(dialect: Dialect, core: &str, result: Value) -> Value {
    match dialect {
        Dialect::V03 => result,
        Dialect::V1 if core == "message/send" => json!({ "task": v1(result) }),
        Dialect::V1 if core == "tasks/get" || core == "tasks/cancel" => v1(result),
        Dialect::V1 => result,
    }
}

/// v0.3 JSON rewritten as v1.0 writes it.
fn v1(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| k != "kind")
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("state", Value::String(s)) => Value::String(format!(
                            "TASK_STATE_{}",
                            s.to_ascii_uppercase().replace('-', "_")
                        )),
                        ("role", Value::String(r)) => {
                            Value::String(format!("ROLE_{}", r.to_ascii_uppercase()))
                        }
                        (_, v) => v1(v),
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(v1).collect()),
        other => other,
    }
}

/// Answer a subscription: a refusal as an ordinary JSON-RPC answer, or the event stream.
pub(super) fn subscribe(
    shared: Arc<Shared>,
    received: &str,
    id: Value,
    params: &Value,
    dialect: Dialect,
) -> Response {
    let now = shared.now_ms();
    let task = match shared.world().subscribe(received, params, now) {
        Ok(task) => task,
        Err(e) => return Json(rpc_error(id, e.code, e.message)).into_response(),
    };
    let fault = shared.take_stream_fault();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(8);
    tokio::spawn(follow(shared, task, id, dialect, fault, tx));
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| ErrorCode::Internal.code().to_string().into_response())
}

type Tx = tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>;

/// Send the task's updates until it is over or the client goes away.
async fn follow(
    shared: Arc<Shared>,
    task: String,
    id: Value,
    dialect: Dialect,
    mut fault: Option<Fault>,
    tx: Tx,
) {
    if matches!(fault, Some(Fault::StreamSilent { .. })) {
        tx.closed().await;
        return;
    }
    let mut last: Option<(u64, String)> = None;
    loop {
        // Armed before looking, so a change between the look and the wait is not missed.
        let changed = shared.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let now = shared.now_ms();
        let Some(watch) = shared.world().watch(&task, now) else {
            return;
        };
        if last.as_ref() != Some(&watch.key) {
            let event = event(&watch, last.is_none(), dialect);
            if !send(&tx, &id, &task, event, fault.take()).await {
                return;
            }
            last = Some(watch.key.clone());
            if watch.terminal {
                return;
            }
        }
        let wait = watch
            .next_change_ms
            .map_or(LOOK_AGAIN, |at| {
                Duration::from_millis(at.saturating_sub(now))
            })
            .min(LOOK_AGAIN);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = &mut changed => {}
            () = tx.closed() => return,
        }
    }
}

/// One update sent, as the fault (if any) shapes it: cut mid-frame, about another task, or
/// flooded. False when the stream ends.
async fn send(tx: &Tx, id: &Value, task: &str, event: Value, fault: Option<Fault>) -> bool {
    let frame = |event: &Value| {
        let rpc = json!({"jsonrpc": "2.0", "id": id, "result": event});
        Bytes::from(format!("data: {rpc}\n\n"))
    };
    let sent = match fault {
        Some(Fault::StreamCut { .. }) => {
            let whole = frame(&event);
            let _ = tx.send(Ok(whole.slice(..whole.len() / 2))).await;
            let _ = tx
                .send(Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "cut by fault injection",
                )))
                .await;
            return false;
        }
        Some(Fault::StreamOtherTask { .. }) => {
            let other = serde_json::to_string(&event)
                .unwrap_or_default()
                .replace(task, "task-of-someone-else");
            let other: Value = serde_json::from_str(&other).unwrap_or(Value::Null);
            tx.send(Ok(frame(&other))).await
        }
        Some(Fault::StreamFlood { copies, bare, .. }) => {
            let event = if bare { stripped(event) } else { event };
            let mut sent = Ok(());
            for _ in 0..copies.max(1) {
                sent = tx.send(Ok(frame(&event))).await;
                if sent.is_err() {
                    break;
                }
            }
            sent
        }
        _ => tx.send(Ok(frame(&event))).await,
    };
    sent.is_ok()
}

/// An event without the task's metadata (what a plain A2A server sends).
fn stripped(mut event: Value) -> Value {
    for key in ["task", "statusUpdate"] {
        if let Some(o) = event.get_mut(key).and_then(Value::as_object_mut) {
            o.remove("metadata");
        }
    }
    if let Some(o) = event.as_object_mut() {
        o.remove("metadata");
    }
    event
}

/// The task (`first`) or a status update of it, as `dialect` writes it.
fn event(watch: &crate::world::Watch, first: bool, dialect: Dialect) -> Value {
    let task = &watch.task;
    if first {
        return match dialect {
            Dialect::V03 => task.clone(),
            Dialect::V1 => json!({ "task": v1(task.clone()) }),
        };
    }
    let update = json!({
        "taskId": task.get("id"),
        "contextId": task.get("contextId"),
        "status": task.get("status"),
        "final": watch.terminal,
        "metadata": task.get("metadata"),
    });
    match dialect {
        Dialect::V03 => {
            let mut update = update;
            update["kind"] = json!("status-update");
            update
        }
        Dialect::V1 => {
            let mut update = v1(update);
            if let Some(u) = update.as_object_mut() {
                u.remove("final");
            }
            json!({ "statusUpdate": update })
        }
    }
}
