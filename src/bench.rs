//! `argus-supervisor bench`: figures for the runtime's speed and memory targets, measured against
//! the simulated remote running as a separate process on loopback (so its CPU is not ours).
//!
//! It prints, per campaign count: supervisor CPU per 1,000 unchanged heartbeat ticks and the CPU
//! share that implies at a 120 s heartbeat; RSS per supervised campaign; disk writes and wakes during
//! unchanged ticks (must be 0); startup recovery time; and, once, durable transitions per second
//! against the same atomic write done raw in a loop (ratio). Figures, not assertions.

use crate::a2a::{A2aClient, HttpConfig};
use crate::control::SystemClock;
use crate::runtime::reduce::CountingWake;
use crate::runtime::{CampaignDoc, OperatorCommand, Runtime, RuntimeConfig};
use crate::store::{write_atomic, Store};
use argus_machines::{
    CampaignMachine, ControllerId, Event, Observation, RemoteState, StateName, TaskId,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const STEADY: &str = r#"
name = "steady"
description = "Working forever; only routine updates (heartbeat_seq, metrics, stdout)."
[[attempts]]
steps = [{ at_ms = 0, state = "working", stage = "training", noise = 4000000000 }]
"#;

/// CPU seconds (user + system) used by this process so far, from /proc.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // clock ticks per second on Linux is 100 unless the kernel says otherwise.
    (ticks(11) + ticks(12)) / 100.0
}

/// Resident set size in KiB, from /proc.
fn rss_kib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(str::to_string)
        })
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(f64::NAN)
}

struct SimProcess {
    child: Child,
    url: String,
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_sim(scenario_path: &std::path::Path) -> Result<SimProcess, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let mut child = Command::new(exe)
        .args(["sim", "--listen", "127.0.0.1:0", "--scenario"])
        .arg(scenario_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the sim: {e}"))?;
    let stdout = child.stdout.take().ok_or("sim has no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| format!("sim did not print its URL: {e}"))?;
    Ok(SimProcess {
        child,
        url: line.trim().to_string(),
    })
}

async fn rpc(
    http: &reqwest::Client,
    url: &str,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let v: Value = http
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    v.get("result")
        .cloned()
        .ok_or_else(|| format!("{method} failed: {v}"))
}

/// Create one remote task per campaign at the sim (claim + submit, raw JSON-RPC: setup, not measured).
async fn seed_tasks(url: &str, n: usize) -> Result<Vec<String>, String> {
    let http = reqwest::Client::new();
    let mut out = Vec::with_capacity(n);
    let mut batch = vec![];
    for i in 0..n {
        let http = http.clone();
        let url = url.to_string();
        batch.push(tokio::spawn(async move {
            let cid = format!("bench-{i}");
            rpc(&http, &url, "campaign/claim_control", json!({"campaign_id": cid, "controller_id": "bench-seeder",
                "ttl_seconds": 3600, "request_id": format!("claim-{i}"), "constraints": crate::control::constraints_envelope()})).await?;
            let t = rpc(&http, &url, "message/send", json!({
                "message": {"kind": "message", "role": "user", "messageId": format!("send-{i}"), "parts": [{"kind": "text", "text": "bench"}]},
                "metadata": {"argus_supervisor": {"campaign_id": cid, "controller_id": "bench-seeder", "controller_epoch": 1, "request_id": format!("send-{i}")}}})).await?;
            t.get("id").and_then(Value::as_str).map(str::to_string).ok_or_else(|| "no task id".to_string())
        }));
        if batch.len() == 64 || i + 1 == n {
            for h in batch.drain(..) {
                out.push(h.await.map_err(|e| e.to_string())??);
            }
        }
    }
    Ok(out)
}

/// One row of the report.
#[derive(Debug)]
pub struct Row {
    pub campaigns: usize,
    pub heartbeat_secs: f64,
    pub ticks: u64,
    pub cpu_per_1000_ticks: f64,
    pub cpu_share_at_120s: f64,
    pub rss_kib_per_campaign: f64,
    pub writes_during_unchanged: u64,
    pub wakes_during_unchanged: u64,
    pub recovery_secs: f64,
}

async fn measure(n: usize, seconds: u64, scenario: &std::path::Path) -> Result<Row, String> {
    let sim = start_sim(scenario)?;
    let tasks = seed_tasks(&sim.url, n).await?;
    let root = std::env::temp_dir().join(format!("argus-bench-{}", uuid::Uuid::new_v4()));
    let store = Store::open(&root).map_err(|e| e.to_string())?;
    let mut http = HttpConfig::new(&sim.url);
    http.allow_insecure_loopback = true;
    let client = Arc::new(
        A2aClient::discover(&http)
            .await
            .map_err(|e| e.to_string())?,
    );
    let heartbeat = Duration::from_secs_f64((n as f64 / 2000.0).max(1.0));
    let mut config = RuntimeConfig::new(ControllerId::new("argus-openoperator"));
    config.heartbeat = heartbeat;
    config.lease_ttl_secs = 3600;
    let wake = Arc::new(CountingWake::default());
    let rss0 = rss_kib();
    let rt = Runtime::start(
        store.clone(),
        client.clone(),
        config.clone(),
        Arc::new(SystemClock),
        wake.clone(),
    )
    .map_err(|e| e.to_string())?;
    for (i, task) in tasks.iter().enumerate() {
        let id = format!("bench-{i}");
        rt.create(&id, "bench").map_err(|e| e.to_string())?;
        rt.command(
            &id,
            OperatorCommand::Observe {
                task: Some(TaskId::new(task.clone())),
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    }
    // Let every campaign see its task once (the first reading is material), then measure.
    tokio::time::sleep(heartbeat.mul_f64(2.5)).await;
    let rss1 = rss_kib();
    let stats = rt.stats().clone();
    let (t0, w0, k0, c0) = (
        stats.ticks.load(Ordering::Relaxed),
        stats.disk_writes.load(Ordering::Relaxed),
        wake.wakes.load(Ordering::Relaxed),
        cpu_seconds(),
    );
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let (t1, w1, k1, c1) = (
        stats.ticks.load(Ordering::Relaxed),
        stats.disk_writes.load(Ordering::Relaxed),
        wake.wakes.load(Ordering::Relaxed),
        cpu_seconds(),
    );
    rt.shutdown().await;
    drop(rt);
    let ticks = t1 - t0;
    let cpu_per_tick = (c1 - c0) / ticks.max(1) as f64;
    let started = Instant::now();
    let recovered = Runtime::start(store, client, config, Arc::new(SystemClock), wake)
        .map_err(|e| e.to_string())?;
    let recovery_secs = started.elapsed().as_secs_f64();
    recovered.kill();
    let _ = std::fs::remove_dir_all(&root);
    Ok(Row {
        campaigns: n,
        heartbeat_secs: heartbeat.as_secs_f64(),
        ticks,
        cpu_per_1000_ticks: cpu_per_tick * 1000.0,
        cpu_share_at_120s: cpu_per_tick * n as f64 / 120.0,
        rss_kib_per_campaign: (rss1 - rss0) / n as f64,
        writes_during_unchanged: w1 - w0,
        wakes_during_unchanged: k1 - k0,
        recovery_secs,
    })
}

/// Durable transitions (machine step + campaign document, written atomically) per second, and the
/// same-size atomic write done raw in a loop.
fn durable_ratio(k: usize) -> Result<(f64, f64), String> {
    let root = std::env::temp_dir().join(format!("argus-bench-io-{}", uuid::Uuid::new_v4()));
    let store = Store::open(&root).map_err(|e| e.to_string())?;
    let mut machine = CampaignMachine::new(
        "bench",
        ControllerId::new("argus-openoperator"),
        Default::default(),
    );
    machine.step(&Event::Operator(argus_machines::Command::Observe {
        task: Some(TaskId::new("t")),
    }));
    let path = store.campaign_path("bench").map_err(|e| e.to_string())?;
    let mut doc = CampaignDoc::new(&machine, "bench", 0);
    let started = Instant::now();
    for i in 0..k {
        let o = Observation {
            task: TaskId::new("t"),
            state: RemoteState::Working,
            revision: Some(i as u64 + 1),
            heartbeat_seq: Some(i as u64 + 1),
            stage: Some(format!("stage-{}", i % 2)),
            evidence_revision: None,
            blocked: false,
            campaign_id: None,
            run_id: None,
            attempt_id: None,
            source_sha: None,
            evidence_ref: None,
        };
        let step = machine.step(&Event::Observed(o));
        debug_assert!(step.changed && machine.state_name() == StateName::Watching);
        doc.machine = machine.record();
        doc.updated_at = i as u64;
        store.write_doc(&path, &doc).map_err(|e| e.to_string())?;
    }
    let durable = k as f64 / started.elapsed().as_secs_f64();
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let raw_path = root.join("raw.json");
    let started = Instant::now();
    for _ in 0..k {
        write_atomic(&raw_path, &bytes).map_err(|e| e.to_string())?;
    }
    let raw = k as f64 / started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&root);
    Ok((durable, raw))
}

/// Run the benchmark and print the figures.
pub async fn run(counts: &[usize], seconds: u64) -> Result<(), String> {
    let scenario =
        std::env::temp_dir().join(format!("argus-bench-steady-{}.toml", std::process::id()));
    std::fs::write(&scenario, STEADY).map_err(|e| e.to_string())?;
    let (durable, raw) = durable_ratio(2_000)?;
    println!("durable transitions: {durable:.0}/s; raw atomic write floor: {raw:.0}/s; ratio {:.2}x (target <= 1.5x)", raw / durable);
    println!(
        "{:>9} {:>9} {:>8} {:>16} {:>18} {:>14} {:>7} {:>6} {:>12}",
        "campaigns",
        "heartbeat",
        "ticks",
        "cpu_s/1000ticks",
        "cpu_share@120s",
        "rss_KiB/camp",
        "writes",
        "wakes",
        "recovery_s"
    );
    for &n in counts {
        let row = measure(n, seconds, &scenario).await?;
        println!(
            "{:>9} {:>8.1}s {:>8} {:>16.4} {:>17.3}% {:>14.1} {:>7} {:>6} {:>12.3}",
            row.campaigns,
            row.heartbeat_secs,
            row.ticks,
            row.cpu_per_1000_ticks,
            row.cpu_share_at_120s * 100.0,
            row.rss_kib_per_campaign,
            row.writes_during_unchanged,
            row.wakes_during_unchanged,
            row.recovery_secs
        );
    }
    println!("targets: 10,000 campaigns at 120 s under 5% of one core; < 16 KiB RSS per idle campaign; recovery of 10,000 under 2 s; 0 writes and 0 wakes on unchanged ticks");
    let _ = std::fs::remove_file(&scenario);
    Ok(())
}
