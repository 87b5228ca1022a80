//! The floors a figure is compared with, measured in the same run: a bare polling loop on its
//! own thread (flat out, and paced to the runtime's own rate), and the durable step's bytes
//! written raw.

use super::rpc;
use super::usage::Cpu;
use argus_machines::{
    CampaignMachine, ControllerId, Event, Observation, RemoteState, StateName, TaskId,
};
use argus_supervisor_lib::a2a::HttpConfig;
use argus_supervisor_lib::protocol::Dialect;
use argus_supervisor_lib::runtime::CampaignDoc;
use argus_supervisor_lib::store::{write_atomic, Store};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The floor of a poll: a bare polling loop on its own thread (a current-thread tokio runtime and
/// one keep-alive `reqwest` client, so what it uses is that thread's CPU alone and its connections
/// stay open between rounds).
pub(super) struct Floor {
    jobs: Option<tokio::sync::mpsc::UnboundedSender<FloorJob>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One round for the floor's thread: this many polls; the answer (CPU seconds per poll, kernel
/// share) goes back on `done`.
pub(super) struct FloorJob {
    polls: u64,
    /// Requests per second, or flat out.
    rate: Option<f64>,
    done: tokio::sync::oneshot::Sender<Result<(f64, f64), String>>,
}

impl Floor {
    pub(super) fn start(
        config: HttpConfig,
        dialect: Dialect,
        tasks: Arc<Vec<String>>,
        concurrency: usize,
    ) -> Result<Floor, String> {
        let (jobs, mut rx) = tokio::sync::mpsc::unbounded_channel::<FloorJob>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let thread = std::thread::Builder::new()
            .name("bench-floor".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let http = reqwest::Client::new();
                    while let Some(job) = rx.recv().await {
                        let r = floor_round(
                            &http,
                            &config,
                            dialect,
                            &tasks,
                            job.polls,
                            concurrency,
                            job.rate,
                        )
                        .await;
                        let _ = job.done.send(r);
                    }
                })
            })
            .map_err(|e| e.to_string())?;
        Ok(Floor {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Poll `polls` times, flat out or at `rate` requests per second; CPU seconds of the floor's
    /// thread per poll, and its kernel share.
    pub(super) async fn round(&self, polls: u64, rate: Option<f64>) -> Result<(f64, f64), String> {
        let (done, answer) = tokio::sync::oneshot::channel();
        self.jobs
            .as_ref()
            .ok_or("the floor has stopped")?
            .send(FloorJob { polls, rate, done })
            .map_err(|_| "the floor's thread has stopped")?;
        answer.await.map_err(|_| "the floor's thread has stopped")?
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `polls` `tasks/get` calls (history length 0, as the client sends them) spread over
/// `concurrency` workers, each answer parsed to a `serde_json::Value` and dropped; flat out, or
/// paced to `rate` requests per second in all (each worker on its own interval). Runs on the
/// floor's current-thread runtime, so the calling thread's CPU is all of it.
pub(super) async fn floor_round(
    http: &reqwest::Client,
    config: &HttpConfig,
    dialect: Dialect,
    tasks: &Arc<Vec<String>>,
    polls: u64,
    concurrency: usize,
    rate: Option<f64>,
) -> Result<(f64, f64), String> {
    let workers = concurrency.max(1) as u64;
    let c0 = Cpu::of_this_thread();
    let mut handles = vec![];
    for w in 0..workers {
        let (http, config, tasks) = (http.clone(), config.clone(), tasks.clone());
        let share = polls / workers + u64::from(w < polls % workers);
        let period = rate.map(|r| Duration::from_secs_f64(workers as f64 / r.max(0.1)));
        handles.push(tokio::spawn(async move {
            let mut every = period.map(tokio::time::interval);
            for i in 0..share {
                if let Some(every) = every.as_mut() {
                    every.tick().await;
                }
                let task = &tasks[((w + i * workers) as usize) % tasks.len().max(1)];
                let body = json!({"jsonrpc": "2.0", "id": i, "method": argus_supervisor_lib::protocol::get_method(dialect),
                                  "params": argus_supervisor_lib::a2a::wire::get_params(task)});
                let bytes = rpc(&http, &config, dialect, &body)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?
                    .bytes()
                    .await
                    .map_err(|e| e.to_string())?;
                let v: serde_json::Value =
                    serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
                if v.get("result").is_none() {
                    return Err(format!("the floor's poll failed: {v}"));
                }
            }
            Ok::<(), String>(())
        }));
    }
    for h in handles {
        h.await.map_err(|e| e.to_string())??;
    }
    let used = Cpu::of_this_thread().since(c0);
    Ok((used.total() / polls.max(1) as f64, used.kernel_share()))
}

/// The durable step against its floor, one round: `k` real steps (machine step, campaign document
/// written atomically, one event line and one feed line appended, each fsynced, as the driver does)
/// and `k` raw writes of the same bytes with plain `std::fs` calls. Returns (real/s, raw/s).
pub(super) fn durable_round(store: &Store, k: usize, round: usize) -> Result<(f64, f64), String> {
    let id = format!("bench-{round}");
    let mut machine = CampaignMachine::new(
        id.clone(),
        ControllerId::new("argus-openoperator"),
        Default::default(),
    );
    machine.step(&Event::Operator(argus_machines::Command::Observe {
        task: Some(TaskId::new("t")),
    }));
    let cid = argus_supervisor_lib::store::validate_campaign_id(&id).map_err(|e| e.to_string())?;
    let path = store.campaign_path(&cid);
    let events = store.events_path(&cid);
    let feed = store.messages_path(&cid);
    let mut doc = CampaignDoc::new(&machine, &id, 0);
    let started = Instant::now();
    for i in 0..k {
        let o = Observation {
            revision: Some(i as u64 + 1),
            heartbeat_seq: Some(i as u64 + 1),
            stage: Some(format!("stage-{}", i % 2)),
            ..Observation::new(TaskId::new("t"), RemoteState::Working)
        };
        let step = machine.step(&Event::Observed(o));
        debug_assert!(step.changed && machine.state_name() == StateName::Watching);
        doc.machine = machine.record();
        doc.updated_at = i as u64;
        store.write_doc(&path, &doc).map_err(|e| e.to_string())?;
        let line = json!({"seq": i, "at": i, "event": {"type": "STAGE_TRANSITION", "stage": format!("stage-{}", i % 2)}});
        store
            .append_line(&events, &line)
            .map_err(|e| e.to_string())?;
        let message = json!({"seq": i, "kind": "STAGE_TRANSITION", "text": format!("Now in stage-{}.", i % 2)});
        store
            .append_line(&feed, &message)
            .map_err(|e| e.to_string())?;
    }
    let real = k as f64 / started.elapsed().as_secs_f64();
    // The floor: the same three durable writes of the same bytes, nothing else.
    let doc_bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let line = |p: &std::path::Path| -> Result<Vec<u8>, String> {
        let all = std::fs::read(p).map_err(|e| e.to_string())?;
        Ok(all
            .split_inclusive(|b| *b == b'\n')
            .next_back()
            .unwrap_or_default()
            .to_vec())
    };
    let (event_line, feed_line) = (line(&events)?, line(&feed)?);
    let raw_dir = store.root().join(format!("raw-{round}"));
    std::fs::create_dir_all(&raw_dir).map_err(|e| e.to_string())?;
    let append = |p: &std::path::Path, bytes: &[u8]| -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)?;
        f.write_all(bytes)?;
        f.sync_data()
    };
    let started = Instant::now();
    for _ in 0..k {
        write_atomic(&raw_dir.join("doc.json"), &doc_bytes).map_err(|e| e.to_string())?;
        append(&raw_dir.join("events.jsonl"), &event_line).map_err(|e| e.to_string())?;
        append(&raw_dir.join("feed.jsonl"), &feed_line).map_err(|e| e.to_string())?;
    }
    let raw = k as f64 / started.elapsed().as_secs_f64();
    Ok((real, raw))
}

/// The durable step over `rounds` interleaved rounds: the median ratio (floor rate / our rate) and
/// the spread of the per-round ratios.
pub struct Durable {
    pub real_per_sec: f64,
    pub raw_per_sec: f64,
    pub ratio_median: f64,
    pub ratio_min: f64,
    pub ratio_max: f64,
}

pub(super) fn durable(rounds: usize, k: usize) -> Result<Durable, String> {
    let root = std::env::temp_dir().join(format!("argus-bench-io-{}", uuid::Uuid::new_v4()));
    let store = Store::open(&root).map_err(|e| e.to_string())?;
    let mut results = vec![];
    for round in 0..rounds {
        results.push(durable_round(&store, k, round)?);
    }
    let _ = std::fs::remove_dir_all(&root);
    let mut ratios: Vec<f64> = results.iter().map(|(real, raw)| raw / real).collect();
    ratios.sort_by(f64::total_cmp);
    let mean = |f: fn(&(f64, f64)) -> f64| results.iter().map(f).sum::<f64>() / rounds as f64;
    Ok(Durable {
        real_per_sec: mean(|r| r.0),
        raw_per_sec: mean(|r| r.1),
        ratio_median: ratios[ratios.len() / 2],
        ratio_min: ratios[0],
        ratio_max: ratios[ratios.len() - 1],
    })
}
