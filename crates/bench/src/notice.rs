//! Time-to-notice: from the moment the remote changes a task to the moment the campaign's feed
//! line saying so is published (it is published once the event is persisted), for a remote that
//! does not stream (every campaign at its heartbeat, the controlled ones whose attempt is live also
//! by hot polling within the budget) and for one that streams (the live ones followed by a
//! subscription whose updates ring for a read).
//!
//! `n` campaigns observe a task each; the first `live` claim control (their attempts run). Every
//! task asks a question an hour (the remote's clock) after it was created; once all is set, the
//! remote's clock is moved on an hour at once, so every task changes at that instant, and each
//! live campaign's `NEEDS_YOU` line is timed from it.

use super::{own_sim, Cpu};
use argus_machines::{ControllerId, TaskId};
use argus_supervisor_lib::a2a::HttpConfig;
use argus_supervisor_lib::control::SystemClock;
use argus_supervisor_lib::protocol::Dialect;
use argus_supervisor_lib::runtime::reduce::CountingWake;
use argus_supervisor_lib::runtime::{FeedNews, OperatorCommand, Runtime, RuntimeConfig};
use argus_supervisor_lib::store::Store;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When every task asks (the remote's clock, after the task was created): later than any setup
/// takes, and a jump the leases (a day long here) outlast.
const QUESTION_AT_MS: u64 = 3_600_000;

fn scenario(n: usize, streaming: bool) -> String {
    format!(
        r#"seed_campaigns = {n}
streaming = {streaming}
name = "notice"
description = "Working until the remote's clock passes an hour; then asking a question."
[[attempts]]
steps = [
  {{ at_ms = 0, state = "working", stage = "training" }},
  {{ at_ms = {QUESTION_AT_MS}, state = "input-required", stage = "training", message = "Which dataset?" }},
]
"#
    )
}

/// How changes reach the supervisor in a notice measurement.
#[derive(Debug, Clone, Copy)]
pub struct NoticeSettings {
    /// The heartbeat, seconds.
    pub heartbeat: u64,
    /// Hot polling's interval, seconds (0: off: the heartbeat alone notices).
    pub hot_poll: u64,
    /// The request budget, requests per second.
    pub budget_rps: f64,
    /// The remote streams (and the supervisor follows the live tasks by subscriptions, up to
    /// `serve`'s default cap).
    pub streaming: bool,
}

impl Default for NoticeSettings {
    /// `serve`'s defaults.
    fn default() -> Self {
        NoticeSettings {
            heartbeat: 120,
            hot_poll: 2,
            budget_rps: 4.0,
            streaming: false,
        }
    }
}

/// One notice measurement.
#[derive(Debug)]
pub struct NoticeRow {
    pub campaigns: usize,
    pub live: usize,
    pub settings: NoticeSettings,
    /// Live campaigns that noticed within the window (a heartbeat and a half).
    pub noticed: usize,
    pub p50_secs: f64,
    pub p99_secs: f64,
    pub max_secs: f64,
    /// What an ideal poller reading each live task once per the shorter of the interval the
    /// budget allows and the heartbeat would reach: half that at the median.
    pub ideal_p50_secs: f64,
    /// Requests to the remote per second over the window, all of them (the heartbeat's too).
    pub requests_per_sec: f64,
    /// Hot polls per second over the window, and the most in any 5 s of it (the budget's).
    pub hot_polls_per_sec: f64,
    pub max_hot_polls_per_sec_5s: f64,
    /// The supervisor's CPU over the window, per campaign and second.
    pub cpu_per_campaign_per_sec: f64,
    /// Polling only: the floor, a bare poll loop sending the same requests per second to the same
    /// remote on a thread of its own once the supervisor has stopped, its CPU per campaign and
    /// second (the same `n`).
    pub floor_cpu_per_campaign_per_sec: Option<f64>,
    /// Subscriptions open when the change came.
    pub streams_open: u64,
    /// The supervisor's RSS growth from every campaign observing to the live ones claimed (and,
    /// streaming, their streams open), per live campaign, KiB.
    pub rss_per_live_kib: f64,
}

impl NoticeRow {
    /// What `--check` finds missed: with hot polling at 20 live campaigns, p50 <= 5 s; and with
    /// hot polling on, never more hot polls than the budget (plus the bucket's one) in any 5 s.
    pub fn missed(&self) -> Vec<String> {
        let mut out = vec![];
        let s = &self.settings;
        if s.streaming {
            if self.p50_secs > MAX_STREAMING_P50_SECS || self.p99_secs > MAX_STREAMING_P99_SECS {
                out.push(format!(
                    "time-to-notice, {} live campaigns streamed: p50 {:.2} s, p99 {:.2} s (targets {MAX_STREAMING_P50_SECS} s, {MAX_STREAMING_P99_SECS} s)",
                    self.live, self.p50_secs, self.p99_secs
                ));
            }
            if self.streams_open < self.live as u64 {
                out.push(format!(
                    "time-to-notice: {} of {} live campaigns streamed",
                    self.streams_open, self.live
                ));
            }
        }
        if s.hot_poll == 0 && !s.streaming {
            return out;
        }
        if self.live <= 20 && self.p50_secs > MAX_POLLING_P50_SECS {
            out.push(format!(
                "time-to-notice, {} live campaigns polled: p50 {:.2} s > {MAX_POLLING_P50_SECS} s",
                self.live, self.p50_secs
            ));
        }
        if self.noticed < self.live {
            out.push(format!(
                "time-to-notice: {} of {} live campaigns noticed the question",
                self.noticed, self.live
            ));
        }
        if s.hot_poll > 0 && self.max_hot_polls_per_sec_5s > s.budget_rps + 0.2 {
            out.push(format!(
                "time-to-notice: {:.2} hot polls/s in 5 s > the budget {}",
                self.max_hot_polls_per_sec_5s, s.budget_rps
            ));
        }
        out
    }
}

/// The polling-only target at 20 live campaigns and the default budget.
pub const MAX_POLLING_P50_SECS: f64 = 5.0;
/// The streaming targets, at any size up to 10,000 campaigns (1,000 live).
pub const MAX_STREAMING_P50_SECS: f64 = 1.0;
pub const MAX_STREAMING_P99_SECS: f64 = 2.0;
/// The memory an open stream may add, judged from this many streams (fewer move RSS by less than
/// its page-and-arena noise).
pub const MAX_KIB_PER_STREAM: f64 = 64.0;
pub const MIN_STREAMS_FOR_MEMORY: usize = 100;

/// The `q`-quantile of sorted `v` (nearest rank).
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// Measure time-to-notice with `n` campaigns, 10% of them (at least one) live.
pub async fn measure(n: usize, settings: NoticeSettings) -> Result<NoticeRow, String> {
    let live = (n / 10).max(1);
    let (sim, http, client) =
        own_sim(&format!("notice-{n}"), &scenario(n, settings.streaming)).await?;
    let (dialect, sim_started, client) = (client.dialect(), Instant::now(), Arc::new(client));
    let root = std::env::temp_dir().join(format!("argus-bench-notice-{}", uuid::Uuid::new_v4()));
    let (rt, config) = start(&root, client, settings)?;
    let ids = observe_all(&rt, n).await?;
    let rss0 = super::rss_kib();
    claim_live(&rt, &ids[..live], settings).await?;
    let rss_per_live_kib = (super::rss_kib() - rss0) / live as f64;
    let (interval, settle) = settling(&config, live, settings.streaming);
    tokio::time::sleep(settle).await;
    let streams_open = rt.open_streams();
    if sim_started.elapsed() >= Duration::from_millis(QUESTION_AT_MS) {
        return Err("the setup outlasted the remote's hour".into());
    }
    let mut news = rt.subscribe();
    let stats = rt.stats().clone();
    let (sampler, samples) = sample_hot_polls(stats.clone());
    let (cpu0, q0) = (Cpu::now(), stats.remote_calls.load(Ordering::Relaxed));
    let h0 = stats.hot_polls.load(Ordering::Relaxed);
    let changed = Instant::now();
    jump_clock(&sim.url, QUESTION_AT_MS).await?;
    let window = config.heartbeat.mul_f64(1.5) + Duration::from_secs(5);
    let took = noticed(&mut news, &ids[..live], window, changed).await;
    // The busiest 5 s needs 5 s of samples: a window that ended sooner is held open.
    let least = Duration::from_secs(6);
    if let Some(rest) = least.checked_sub(changed.elapsed()) {
        tokio::time::sleep(rest).await;
    }
    let elapsed = changed.elapsed().as_secs_f64();
    let (cpu, q1) = (
        Cpu::now().since(cpu0),
        stats.remote_calls.load(Ordering::Relaxed),
    );
    let h1 = stats.hot_polls.load(Ordering::Relaxed);
    sampler.abort();
    let samples = std::mem::take(&mut *samples.lock().unwrap_or_else(|p| p.into_inner()));
    rt.shutdown().await;
    drop(rt);
    let _ = std::fs::remove_dir_all(&root);
    let requests_per_sec = (q1 - q0) as f64 / elapsed.max(1e-3);
    let floor_cpu_per_campaign_per_sec = match settings.streaming {
        true => None,
        false => {
            let tasks: Vec<String> = (1..=live).map(|i| format!("task-{i:04}")).collect();
            let per_sec = bare_poll_cpu(http, dialect, tasks, requests_per_sec).await?;
            Some(per_sec / n as f64)
        }
    };
    let mut secs: Vec<f64> = took.values().copied().collect();
    secs.sort_by(f64::total_cmp);
    Ok(NoticeRow {
        campaigns: n,
        live,
        settings,
        noticed: secs.len(),
        p50_secs: quantile(&secs, 0.5),
        p99_secs: quantile(&secs, 0.99),
        max_secs: secs.last().copied().unwrap_or(f64::NAN),
        ideal_p50_secs: interval.as_secs_f64() / 2.0,
        requests_per_sec,
        hot_polls_per_sec: (h1 - h0) as f64 / elapsed.max(1e-3),
        max_hot_polls_per_sec_5s: busiest(&samples, Duration::from_secs(5)),
        cpu_per_campaign_per_sec: cpu.total() / n as f64 / elapsed.max(1e-3),
        floor_cpu_per_campaign_per_sec,
        streams_open,
        rss_per_live_kib,
    })
}

/// The interval between two reads of a live campaign (the shorter of hot polling's and the
/// heartbeat), and how long to let the campaigns settle before the change. A change comes at any
/// moment between two reads, not just after the first: the campaigns became live together (their
/// reads in phase with their claims), so the change waits two and a half intervals, halfway
/// between two reads. Streamed, the change is heard whenever it comes: a second lets the first
/// reads settle.
fn settling(config: &RuntimeConfig, live: usize, streaming: bool) -> (Duration, Duration) {
    let interval = config
        .hot_interval(live as u64)
        .map_or(config.heartbeat, |i| i.min(config.heartbeat));
    let settle = if streaming {
        Duration::from_secs(1)
    } else {
        interval.mul_f64(2.5)
    };
    (interval, settle)
}

/// The runtime for a time-to-notice row: `settings`' heartbeat, hot polling and budget, a day's
/// lease (the remote's clock moves an hour on, and no lease may lapse for it).
fn start(
    root: &std::path::Path,
    client: Arc<argus_supervisor_lib::a2a::A2aClient>,
    settings: NoticeSettings,
) -> Result<(Runtime, RuntimeConfig), String> {
    let store = Store::open(root).map_err(|e| e.to_string())?;
    let mut config = RuntimeConfig::new(ControllerId::new("argus-openoperator"));
    config.heartbeat = Duration::from_secs(settings.heartbeat.max(1));
    config.lease_ttl_secs = 86_400;
    config.hot_poll = (settings.hot_poll > 0).then(|| Duration::from_secs(settings.hot_poll));
    config.hot_budget_rps = settings.budget_rps;
    let rt = Runtime::start(
        store,
        client,
        config.clone(),
        Arc::new(SystemClock),
        Arc::new(CountingWake::default()),
    )
    .map_err(|e| e.to_string())?;
    Ok((rt, config))
}

/// `n` campaigns, each observing its task (`bench-<i>` has `task-<i+1>`).
async fn observe_all(rt: &Runtime, n: usize) -> Result<Vec<String>, String> {
    let ids: Vec<String> = (0..n).map(|i| format!("bench-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        rt.create(id, "bench").await.map_err(|e| e.to_string())?;
        let task = TaskId::new(format!("task-{:04}", i + 1));
        rt.command(id, OperatorCommand::observe(Some(task)))
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(ids)
}

/// The live campaigns claim control, and are followed (hot polled, or streamed) within a minute.
async fn claim_live(rt: &Runtime, ids: &[String], settings: NoticeSettings) -> Result<(), String> {
    let live = ids.len();
    for id in ids {
        let reply = rt
            .command(id, OperatorCommand::claim())
            .await
            .map_err(|e| e.to_string())?;
        if !reply.accepted {
            return Err(format!("{id} could not claim control: {:?}", reply.state));
        }
    }
    let ready = Instant::now() + Duration::from_secs(60);
    let followed = || match settings.streaming {
        true => rt.open_streams(),
        false => rt.live_campaigns(),
    };
    while (settings.hot_poll > 0 || settings.streaming) && followed() < live as u64 {
        if Instant::now() > ready {
            return Err(format!(
                "{} of {live} campaigns live after a minute",
                followed()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The hot polls sent, sampled every 250 ms, for the busiest 5 s.
#[allow(clippy::type_complexity)]
fn sample_hot_polls(
    stats: Arc<argus_supervisor_lib::runtime::Stats>,
) -> (
    tokio::task::JoinHandle<()>,
    Arc<std::sync::Mutex<Vec<(Instant, u64)>>>,
) {
    let calls = stats;
    let samples = Arc::new(std::sync::Mutex::new(Vec::<(Instant, u64)>::new()));
    let taken = samples.clone();
    let sampler = tokio::spawn(async move {
        loop {
            let sample = (Instant::now(), calls.hot_polls.load(Ordering::Relaxed));
            taken.lock().unwrap_or_else(|p| p.into_inner()).push(sample);
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    (sampler, samples)
}

/// How long each asked campaign took to say its question (NEEDS_YOU), within `window` of the
/// change.
async fn noticed(
    news: &mut tokio::sync::broadcast::Receiver<FeedNews>,
    asked: &[String],
    window: Duration,
    changed: Instant,
) -> std::collections::HashMap<String, f64> {
    let live = asked.len();
    let asked: std::collections::HashSet<&str> = asked.iter().map(String::as_str).collect();
    let mut took: std::collections::HashMap<String, f64> = Default::default();
    while took.len() < live {
        let left = window.saturating_sub(changed.elapsed());
        let news = match tokio::time::timeout(left, news.recv()).await {
            Err(_) => break,
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
            Ok(Err(_)) => break,
            Ok(Ok(news)) => news,
        };
        let FeedNews::Line { campaign, line } = news else {
            continue;
        };
        if line.kind == argus_supervisor_lib::runtime::messages::MessageKind::NeedsYou
            && asked.contains(campaign.as_str())
        {
            took.entry(campaign.as_str().to_string())
                .or_insert_with(|| changed.elapsed().as_secs_f64());
        }
    }
    took
}

/// How long the bare poll loop runs, seconds.
const FLOOR_SECS: f64 = 5.0;

/// The floor for the polling rows' CPU: the steady rows' bare poll loop (`super::Floor`: reqwest
/// and `serde_json::Value` on a current-thread runtime of its own), one worker reading `tasks` in
/// turn, paced to `rate` requests per second for [`FLOOR_SECS`]; its CPU seconds per second.
async fn bare_poll_cpu(
    config: HttpConfig,
    dialect: Dialect,
    tasks: Vec<String>,
    rate: f64,
) -> Result<f64, String> {
    let floor = super::Floor::start(config, dialect, Arc::new(tasks), 1)?;
    let polls = (rate * FLOOR_SECS).ceil().max(1.0) as u64;
    let (per_poll, _) = floor.round(polls, Some(rate)).await?;
    Ok(per_poll * rate)
}

/// The floor for a stream's memory: `streams` bare SSE readers (reqwest, one connection and one
/// task each, reading and dropping what arrives) subscribed to tasks of a streaming sim, the RSS
/// they add per stream, KiB; measured in a child process of its own ([`bare_stream_reader`]).
pub async fn bare_stream_kib(streams: usize) -> Result<f64, String> {
    let (sim, _, _) = own_sim(&format!("sse-floor-{streams}"), &scenario(streams, true)).await?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let args = [
        "bench-floor-sse".to_string(),
        "--url".to_string(),
        sim.url.clone(),
        "--streams".to_string(),
        streams.to_string(),
    ];
    let out =
        tokio::task::spawn_blocking(move || std::process::Command::new(exe).args(args).output())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot start the SSE floor: {e}"))?;
    drop(sim);
    let said = String::from_utf8_lossy(&out.stdout);
    match said.trim().parse::<f64>() {
        Ok(kib) if out.status.success() => Ok(kib),
        _ => Err(format!(
            "the SSE floor failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// The bare SSE reader itself, in this process: `streams` reqwest streams of `url`'s tasks, each
/// read to its end; the memory each holds once every one has its first event, KiB. Run as
/// `argus-supervisor bench-floor-sse` in a process of its own, so no other measurement's memory
/// (the allocator keeps what it freed) hides its cost.
pub async fn bare_stream_reader(url: &str, streams: usize) -> Result<f64, String> {
    let client = reqwest::Client::new();
    let rss0 = super::rss_kib();
    let mut readers = vec![];
    for i in 0..streams {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "tasks/resubscribe",
            "params": {"id": format!("task-{:04}", i + 1)}});
        let mut resp = client
            .post(url)
            .header("accept", "text/event-stream")
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        readers.push(tokio::spawn(async move {
            while let Ok(Some(_)) = resp.chunk().await {}
        }));
    }
    // Every stream has its first event by now.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let kib = (super::rss_kib() - rss0) / streams.max(1) as f64;
    for r in readers {
        r.abort();
    }
    Ok(kib)
}

/// The most requests per second in any `span` of the samples (instant, requests sent so far).
fn busiest(samples: &[(Instant, u64)], span: Duration) -> f64 {
    let mut most: f64 = 0.0;
    for (i, (at, n)) in samples.iter().enumerate() {
        if let Some((end, m)) = samples[i..].iter().find(|(t, _)| *t >= *at + span) {
            let secs = end.duration_since(*at).as_secs_f64();
            most = most.max((m - n) as f64 / secs);
        }
    }
    most
}

/// Move the remote's clock `ms` on.
async fn jump_clock(url: &str, ms: u64) -> Result<(), String> {
    let at = format!("{}/_sim/clock", url.trim_end_matches('/'));
    let resp = reqwest::Client::new()
        .post(&at)
        .json(&serde_json::json!({ "advance_ms": ms }))
        .send()
        .await
        .map_err(|e| format!("cannot move the remote's clock: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!(
            "the remote refused to move its clock: {}",
            resp.status()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{busiest, quantile};
    use std::time::{Duration, Instant};

    #[test]
    fn quantiles_are_nearest_rank_and_the_busiest_span_is_found() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&[3.0], 0.99), 3.0);
        assert!(quantile(&[], 0.5).is_nan());
        let t = Instant::now();
        let s = Duration::from_secs;
        // 4/s, then 10 in one second, then quiet.
        let samples = [(t, 0), (t + s(5), 20), (t + s(6), 30), (t + s(11), 30)];
        assert_eq!(busiest(&samples, s(5)), 4.0);
        assert_eq!(busiest(&samples[1..], s(5)), 10.0 / 6.0);
    }
}
