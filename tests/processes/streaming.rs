//! Streaming through `serve`: against the sim streaming in either dialect, a live task's question
//! is noticed by its stream between heartbeats (hot polling off), from the update itself (the
//! sim's updates carry the contract's metadata, so no read is needed; `tests/interop.rs` has the
//! real servers, whose updates ring for a read); every way a stream can go wrong (cut mid-update, silent, a flood, an update of
//! another task) falls back, is opened again, and never doubles an event. Judged by what the
//! remote received (its audit, timed by its own clock) and by the feed.

use super::contract::arm;
use super::operable::sample;
use super::serve_loop::{audit, serve, tmp, wait_for, Daemon, API_TOKEN, SIM_TOKEN};
use crate::support::procs::{notice_times, raw, spawn_sim, SimProc};
use serde_json::{json, Value};

/// The sim streaming `input-required` (the task asks 1 s after it is created) in `dialect`.
fn streaming_sim(dialect: &str) -> (SimProc, String) {
    spawn_sim(
        "127.0.0.1:0",
        "input-required",
        SIM_TOKEN,
        ["--streaming", "--dialect", dialect],
    )
}

/// `serve` with a heartbeat of a minute and hot polling off: between heartbeats only a stream
/// can notice anything. Silence closes a stream after 5 s.
fn serve_streaming(url: &str, tag: &str) -> Daemon {
    let d = serve(
        url,
        &tmp(tag).join("state"),
        &[
            ("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "60".to_string()),
            ("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "600".to_string()),
            ("ARGUS_SUPERVISOR_HOT_POLL_SECONDS", "0".to_string()),
            ("ARGUS_SUPERVISOR_STREAM_SILENCE_SECONDS", "5".to_string()),
        ],
    );
    let h = d.wait_health(|h| h["remote"]["state"] == "discovered");
    assert_eq!(h["notice"]["mode"], "streaming", "{h}");
    assert_eq!(h["notice"]["remote_streams"], true, "{h}");
    d
}

fn entries(url: &str) -> Vec<Value> {
    audit(url)["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The task the remote made for campaign `id`, and when (the remote's clock, ms).
fn task_made(url: &str, id: &str) -> (String, u64) {
    entries(url)
        .iter()
        .find(|e| e["campaign_id"] == id && e["task_id"].is_string())
        .and_then(|e| Some((e["task_id"].as_str()?.to_string(), e["t_ms"].as_u64()?)))
        .unwrap_or_else(|| panic!("no task made for {id}"))
}

/// What the remote received about `task`: (method, time) in order.
fn about(url: &str, task: &str) -> Vec<(String, u64)> {
    entries(url)
        .iter()
        .filter(|e| e["read_task"] == task)
        .filter_map(|e| Some((e["method"].as_str()?.to_string(), e["t_ms"].as_u64()?)))
        .collect()
}

pub(crate) fn metrics(d: &Daemon) -> String {
    let auth = format!("Bearer {API_TOKEN}");
    raw("GET", &d.api("/metrics"), &[("authorization", &auth)], None)
        .map(|(_, m)| m)
        .unwrap_or_default()
}

/// Submit for `id` and wait until it asks; the feed says so once.
fn asks(d: &Daemon, id: &str) {
    d.observe_and_claim(id, "train");
    assert_eq!(d.act(id, "submit", json!({"message": "go"})).0, 200);
    d.wait_state(id, "controlling.awaiting_input");
    let questions = d
        .feed(id)
        .iter()
        .filter(|l| l.starts_with("Needs you"))
        .count();
    assert_eq!(questions, 1, "{id}: {:?}", d.feed(id));
}

#[rstest::rstest]
#[case("0.3", "tasks/resubscribe", "tasks/get")]
#[case("1.0", "SubscribeToTask", "GetTask")]
fn a_streamed_question_is_noticed_between_heartbeats_from_the_update_itself(
    #[case] dialect: &str,
    #[case] subscribe: &str,
    #[case] get: &str,
) {
    let (_sim, url) = streaming_sim(dialect);
    let d = serve_streaming(&url, &format!("stream-{dialect}"));
    let ticks = |d: &Daemon| {
        d.get("/health")
            .map(|(_, h)| h["heartbeat"]["ticks"].clone())
    };
    let before = ticks(&d);
    asks(&d, "s1");
    assert_eq!(ticks(&d), before, "noticed by a heartbeat, not the stream");
    let (task, made) = task_made(&url, "s1");
    let got = about(&url, &task);
    println!("{dialect}: the remote received about {task}: {got:?}");
    // Subscribed while the task was live, in this dialect's name.
    assert!(got.iter().any(|(m, _)| m == subscribe), "{got:?}");
    // The question (1 s after the task was made) came in the stream's update, whole: the task
    // was not read again after it asked.
    let asked = made + 1000;
    let reads_after = got.iter().filter(|(m, t)| m == get && *t >= asked).count();
    assert_eq!(reads_after, 0, "question at {asked}: {got:?}");
    let h = d.wait_health(|h| h["notice"]["streams_open"] == 1);
    assert_eq!(
        h["notice"]["live_campaigns"], 0,
        "a streamed campaign is not hot polled: {h}"
    );
    let m = metrics(&d);
    assert_eq!(sample(&m, "argus_supervisor_streams_open"), 1, "{m}");
    assert!(
        sample(&m, "argus_supervisor_stream_updates_total") >= 1,
        "{m}"
    );
    assert_eq!(sample(&m, "argus_supervisor_hot_polls_total"), 0, "{m}");
    // Time-to-notice, timed by the sim's own `status.timestamp` (this host's clock): the question
    // was noticed, no change took longer than the task has existed, and none went untimed.
    let (count, sum) = notice_times(&m);
    let since = argus_supervisor_lib::time::now_ms().saturating_sub(made) as f64 / 1000.0;
    println!(
        "{dialect}: {count} notices timed, {sum:.3} s in all, {since:.3} s since the task was made"
    );
    assert!(count >= 1, "{m}");
    assert!(sum >= 0.0 && sum <= count as f64 * since, "{m}");
    for why in ["no_timestamp", "clock_ahead"] {
        let series = format!("argus_supervisor_notices_unmeasured_total{{why=\"{why}\"}}");
        assert_eq!(sample(&m, &series), 0, "{m}");
    }

    // A stream cut in the middle of an update falls back, is opened again, and the next
    // campaign's question is still noticed, once.
    arm(&url, json!({"kind": "stream_cut", "times": 1}));
    asks(&d, "s2");
    let (task2, _) = task_made(&url, "s2");
    let subs = about(&url, &task2)
        .iter()
        .filter(|(m, _)| m == subscribe)
        .count();
    assert!(
        subs >= 2,
        "the cut stream was not opened again: {:?}",
        about(&url, &task2)
    );
    let m = metrics(&d);
    assert!(
        sample(&m, "argus_supervisor_stream_reconnects_total") >= 1,
        "{m}"
    );
    assert!(
        m.contains("argus_supervisor_stream_ends_total{why=\"dropped_after_send\"}"),
        "{m}"
    );
}

#[test]
fn a_stream_that_floods_names_another_task_or_falls_silent_is_bounded_and_never_doubles_an_event() {
    let (_sim, url) = streaming_sim("0.3");
    let d = serve_streaming(&url, "stream-faults");

    // A flood: the first update sent 2,000 times. It costs the remote no read (the updates carry the
    // reading, and a revision already seen is dropped), and the question is noticed once.
    arm(
        &url,
        json!({"kind": "stream_flood", "copies": 2000, "times": 1}),
    );
    asks(&d, "f1");
    let (task, _) = task_made(&url, "f1");
    let reads = about(&url, &task)
        .iter()
        .filter(|(m, _)| m == "tasks/get")
        .count();
    assert!(
        reads <= 2,
        "{reads} reads for a flood: {:?}",
        about(&url, &task)
    );

    // The same flood as a plain A2A server's updates (no metadata: each only a doorbell): the
    // reads they ring for are at least 250 ms apart, so a handful, and the question (its update
    // whole again) is still noticed once.
    arm(
        &url,
        json!({"kind": "stream_flood", "copies": 2000, "bare": true, "times": 1}),
    );
    asks(&d, "b1");
    let (task, made) = task_made(&url, "b1");
    let read_at: Vec<u64> = about(&url, &task)
        .iter()
        .filter(|(m, _)| m == "tasks/get")
        .map(|(_, t)| *t)
        .collect();
    println!(
        "bare flood: reads at {:?} ms after the task was made",
        read_at.iter().map(|t| t - made).collect::<Vec<_>>()
    );
    assert!(
        read_at.len() >= 2,
        "the bells rang for no read: {read_at:?}"
    );
    assert!(
        read_at.len() <= 8,
        "{} reads for a flood: {read_at:?}",
        read_at.len()
    );
    // Apart by the gap (the remote's clock; 50 ms for the way there), after the submit's own.
    for pair in read_at[1..].windows(2) {
        assert!(
            pair[1] - pair[0] >= 200,
            "reads {pair:?} closer than the gap"
        );
    }
    let m = metrics(&d);
    assert!(
        sample(&m, "argus_supervisor_stream_reads_total") >= 1,
        "{m}"
    );

    // A flood past the bound on one stream (4 MiB: 20,000 copies of a task of ~500 bytes):
    // the stream is closed as spent, the task read, and a new one opened.
    arm(
        &url,
        json!({"kind": "stream_flood", "copies": 20000, "times": 1}),
    );
    asks(&d, "g1");
    let m = metrics(&d);
    assert!(
        m.contains("argus_supervisor_stream_ends_total{why=\"spent\"}"),
        "{m}"
    );

    // An update naming another task: the stream is dropped (never trusted), the task read, a
    // new stream opened; the question is noticed once.
    arm(&url, json!({"kind": "stream_other_task", "times": 1}));
    asks(&d, "x1");
    let m = metrics(&d);
    assert!(
        m.contains("argus_supervisor_stream_ends_total{why=\"other_task\"}"),
        "{m}"
    );

    // A stream that says nothing, ever: closed after the silence bound (5 s), the task read,
    // and the question found.
    arm(&url, json!({"kind": "stream_silent", "times": 1}));
    asks(&d, "q1");
    let m = metrics(&d);
    assert!(
        m.contains("argus_supervisor_stream_ends_total{why=\"silent\"}"),
        "{m}"
    );
    // One task per campaign, whatever the streams did.
    let sends = entries(&url)
        .iter()
        .filter(|e| e["method"] == "message/send")
        .count();
    assert_eq!(sends, 5);
    wait_for("the five streams open again", || {
        d.get("/health")
            .is_some_and(|(_, h)| h["notice"]["streams_open"] == 5)
    });
}

#[test]
fn beyond_the_cap_on_open_streams_a_live_campaign_is_hot_polled() {
    let (_sim, url) = streaming_sim("0.3");
    let d = serve(
        &url,
        &tmp("stream-cap").join("state"),
        &[
            ("ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", "60".to_string()),
            ("ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", "600".to_string()),
            ("ARGUS_SUPERVISOR_HOT_POLL_SECONDS", "1".to_string()),
            ("ARGUS_SUPERVISOR_MAX_STREAMS", "1".to_string()),
        ],
    );
    d.wait_health(|h| h["remote"]["state"] == "discovered");
    asks(&d, "c1");
    asks(&d, "c2");
    let h =
        d.wait_health(|h| h["notice"]["streams_open"] == 1 && h["notice"]["live_campaigns"] == 1);
    assert_eq!(h["notice"]["max_streams"], 1, "{h}");
    // One task subscribed to, the other read by hot polls.
    let (t1, _) = task_made(&url, "c1");
    let (t2, _) = task_made(&url, "c2");
    let subscribed = |t: &str| about(&url, t).iter().any(|(m, _)| m == "tasks/resubscribe");
    assert!(
        subscribed(&t1) && !subscribed(&t2),
        "{:?} {:?}",
        about(&url, &t1),
        about(&url, &t2)
    );
    let m = metrics(&d);
    assert!(sample(&m, "argus_supervisor_hot_polls_total") >= 1, "{m}");
}

#[test]
fn a_remote_whose_clock_runs_ahead_is_not_timed_and_says_so_in_metrics() {
    let (_sim, url) = streaming_sim("0.3");
    let d = serve_streaming(&url, "stream-clock-ahead");
    // The remote's clock an hour ahead of this host's: every `status.timestamp` it writes is in
    // this host's future.
    let (s, b) = crate::support::procs::call(
        true,
        &format!("{url}_sim/clock"),
        SIM_TOKEN,
        json!({"advance_ms": 3_600_000}),
        reqwest::Client::builder(),
    )
    .expect("the sim's clock");
    assert_eq!(s, 200, "{b}");
    asks(&d, "k1");
    let m = metrics(&d);
    let (count, _) = notice_times(&m);
    assert_eq!(count, 0, "a time from the future was timed: {m}");
    let ahead = sample(
        &m,
        "argus_supervisor_notices_unmeasured_total{why=\"clock_ahead\"}",
    );
    assert!(ahead >= 1, "{m}");
}
