//! `argus-supervisor bench`: figures for the runtime's speed and memory targets, measured against
//! the simulated remote running as a separate process on loopback (so its CPU is not ours).
//!
//! It prints, per campaign count: supervisor CPU per 1,000 unchanged heartbeat ticks and the CPU
//! share that implies at a 120 s heartbeat; RSS per supervised campaign (baseline taken before
//! anything is seeded); disk writes and wakes during unchanged ticks (must be 0); startup recovery
//! time; and, once, the durable step (campaign document + event line + feed line, each fsynced)
//! against the same bytes written raw, interleaved over several rounds with the spread printed;
//! per row, the floor (a bare polling loop on its own thread), flat out and paced to the
//! runtime's own request rate, interleaved with the runtime's window in rounds, each round's ratios
//! printed and the median ones asserted.
//! Every report starts with the command and settings that reproduce it. With `--check` each figure
//! is compared with its target and the process exits 1 when one is missed (CI runs a smoke size).
//! Then, per `--notice` count, the time-to-notice (`notice.rs`): from a change on the remote to the
//! feed line published, p50/p99, with the requests per second sent and the CPU per campaign.
//!
//! Its parts: `floor.rs` (the floors, measured in the same run), `storage.rs` (backups, recovery
//! and restores under load), `targets.rs` (what `--check` asserts), `print.rs` (the report's
//! lines), `usage.rs` (CPU and memory from the kernel), `options.rs` (the command line).

mod floor;
mod notice;
mod options;
mod print;
mod storage;
mod targets;
mod usage;
pub use floor::Durable;
use floor::{durable, Floor};
pub use notice::{bare_stream_reader, NoticeRow, NoticeSettings};
pub use options::Options;
use print::{print_header, print_polling, print_row, print_streaming, print_targets};
use storage::{backups, recover, restores, Backups};
use targets::{missed, FLOOR_MAX_POLLS, FLOOR_MIN_POLLS, FOREIGN_FLOOR_MIN_POLLS, ROUNDS};
pub use targets::{
    FLOOR_RATIO_FROM, MAX_BACKUP_SECS_PER_10K, MAX_CPU_PER_1000_TICKS,
    MAX_DISK_KIB_PER_CAMPAIGN_DAY, MAX_DURABLE_RATIO, MAX_FLOOR_RATIO, MAX_FLOOR_RATIO_ANY,
    MAX_PACED_FLOOR_RATIO, MAX_RECOVERY_SECS_PER_10K, MAX_RESTORE_FLOOR_RATIO,
    MAX_RESTORE_SECS_PER_10K, MAX_RSS_KIB_PER_CAMPAIGN, MIN_BACKUP_TICK_SHARE, MIN_TICK_SHARE,
    WRITES_PER_RENEWAL,
};
use usage::{rss_kib, Cpu};

use argus_machines::{ControllerId, TaskId};
use argus_supervisor_lib::a2a::{A2aClient, HttpConfig};
use argus_supervisor_lib::control::SystemClock;
use argus_supervisor_lib::protocol::Dialect;
use argus_supervisor_lib::runtime::reduce::CountingWake;
use argus_supervisor_lib::runtime::{OperatorCommand, Runtime, RuntimeConfig};
use argus_supervisor_lib::store::Store;
use serde_json::json;
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

/// One row of the report.
#[derive(Debug, Default)]
pub struct Row {
    pub campaigns: usize,
    /// Campaigns that held a lease through the measurement (renewing it).
    pub controlling: usize,
    /// Leases renewed during the measurement (each writes its lease record).
    pub renewals: u64,
    pub heartbeat_secs: f64,
    pub ticks: u64,
    /// Ticks the heartbeat should have produced in the measured window (campaigns × seconds /
    /// heartbeat): `ticks` well below it means the runtime could not keep the cadence.
    pub expected_ticks: u64,
    pub cpu_per_1000_ticks: f64,
    pub cpu_share_at_120s: f64,
    /// The CPU share measured over the window (one core = 1.0), at the heartbeat used.
    pub cpu_share_measured: f64,
    /// RSS added per supervised campaign, after the runtime started.
    pub rss_kib_per_campaign: f64,
    /// RSS the runtime itself added before any campaign (baseline taken before anything else).
    pub rss_fixed_mib: f64,
    pub writes_during_unchanged: u64,
    /// Of those, the writes that waited for the disk: none (a renewal writes only its lease
    /// record, unsynced: see `Ledger::step` and `store::Durability`).
    pub durable_writes_during_unchanged: u64,
    pub wakes_during_unchanged: u64,
    /// A start on the state root the row left, until every driver is spawned and the API's first
    /// answers are there: `status` (as published) and one campaign's document (read on demand).
    pub recovery_secs: f64,
    /// After that, until every campaign's document has been read on demand (as `GET /campaigns`
    /// does): what a start used to do before answering. Reported, not a target.
    pub read_all_secs: f64,
    /// Whether the page cache was dropped before the recovery was timed (`--cold`, as root).
    pub recovery_cold: bool,
    /// The floor: a bare `reqwest` + `serde_json` loop polling the same tasks of the same sim
    /// process at the runtime's concurrency, CPU seconds per 1,000 polls (the median round's).
    pub floor_cpu_per_1000_polls: f64,
    /// Our CPU per remote call against the floor's per poll, round by round, sorted: the median
    /// counts.
    pub floor_ratios: Vec<f64>,
    /// The share of the runtime's CPU spent in the kernel (system time), and the floor's.
    pub system_share: f64,
    pub floor_system_share: f64,
    /// The same floor paced to the runtime's own request rate in each round (a bare poller on a
    /// cadence, as the supervisor is), CPU seconds per 1,000 polls (the median round's), and our
    /// CPU per remote call against it, round by round, sorted.
    pub paced_floor_cpu_per_1000_polls: f64,
    pub paced_floor_ratios: Vec<f64>,
    /// `backup` taken under the same steady load, back to back for at least 2 s: one's seconds
    /// (the median) and files, and the heartbeat's ticks per second over them all against the
    /// steady rounds' (1.0: not slowed at all).
    pub backup_secs: f64,
    pub backup_files: usize,
    /// Disk a noisy campaign (the steady remote: routine updates only) adds per day, from the
    /// state root's growth over the measured window (KiB), and what one campaign holds at rest.
    pub disk_kib_per_campaign_day: f64,
    pub disk_kib_per_campaign: f64,
    pub backup_tick_share: f64,
    /// `restore` of that archive into a fresh root, then a start on it until every driver is
    /// spawned and one document answers.
    pub restore_recovery_secs: f64,
    /// Its floor, in the same run on the same disk: the restored files written again, bare (one
    /// thread, `fs::write` each, one sync at the end), into a sibling folder. Both the medians of
    /// three alternating rounds.
    pub restore_floor_secs: f64,
}

impl Row {
    /// Our CPU per remote call against the floor's per poll: the median of the rounds' ratios.
    fn floor_ratio(&self) -> f64 {
        median(&self.floor_ratios)
    }

    /// Our CPU per remote call against the paced floor's per poll: the median round's.
    fn paced_floor_ratio(&self) -> f64 {
        median(&self.paced_floor_ratios)
    }
}

/// The median of sorted `v` (the upper one of an even count).
fn median(v: &[f64]) -> f64 {
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The bench's own simulated remote, playing `scenario` (TOML; `name` names its temporary file),
/// and the client that discovered it: (the sim, how to reach it, the client).
async fn own_sim(
    name: &str,
    scenario: &str,
) -> Result<(SimProcess, HttpConfig, A2aClient), String> {
    let path = std::env::temp_dir().join(format!("argus-bench-{name}-{}.toml", std::process::id()));
    std::fs::write(&path, scenario).map_err(|e| e.to_string())?;
    let sim = start_sim(&path);
    let _ = std::fs::remove_file(&path);
    let sim = sim?;
    let mut http = HttpConfig::new(&sim.url);
    http.allow_insecure_loopback = true;
    let client = A2aClient::discover(&http)
        .await
        .map_err(|e| e.to_string())?;
    Ok((sim, http, client))
}

/// The remote a measurement polls.
struct Polled {
    /// The bench's own simulated remote, stopped when the measurement ends.
    _sim: Option<SimProcess>,
    /// How the runtime and the floor reach it.
    http: HttpConfig,
    /// The tasks the campaigns observe, one each.
    tasks: Vec<String>,
}

async fn polled(n: usize, remote: Option<&HttpConfig>) -> Result<(Polled, A2aClient), String> {
    let Some(remote) = remote else {
        // `n` campaigns seeded by the sim itself (`seed_campaigns`), so the supervisor's process
        // spends nothing on setup: `bench-<i>` has task `task-<i+1>`.
        let (sim, http, client) = own_sim(
            &format!("steady-{n}"),
            &format!("seed_campaigns = {n}\n{STEADY}"),
        )
        .await?;
        let tasks = (1..=n).map(|i| format!("task-{i:04}")).collect();
        let polled = Polled {
            _sim: Some(sim),
            http,
            tasks,
        };
        return Ok((polled, client));
    };
    let client = A2aClient::discover(remote)
        .await
        .map_err(|e| format!("{}: {e}", remote.endpoint))?;
    let tasks = create_tasks(remote, client.dialect(), n).await?;
    let polled = Polled {
        _sim: None,
        http: remote.clone(),
        tasks,
    };
    Ok((polled, client))
}

/// A request to the remote as the floor and the task creation send it: bearer token when one is
/// configured, and the v1.0 version header for a v1.0 peer.
fn rpc(
    http: &reqwest::Client,
    config: &HttpConfig,
    dialect: Dialect,
    body: &serde_json::Value,
) -> reqwest::RequestBuilder {
    let mut req = http.post(&config.endpoint).json(body);
    if let Some(t) = &config.token {
        req = req.bearer_auth(t.expose());
    }
    if dialect == Dialect::V1 {
        req = req.header("A2A-Version", "1.0");
    }
    req
}

/// `--remote`: `n` tasks created on a remote the bench did not write (plain non-blocking
/// `message/send`, no campaign metadata: nothing there is controlled), to be polled read-only.
async fn create_tasks(
    config: &HttpConfig,
    dialect: Dialect,
    n: usize,
) -> Result<Vec<String>, String> {
    let http = reqwest::Client::new();
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        let message_id = uuid::Uuid::new_v4().to_string();
        let text = format!("argus-supervisor bench task {i}");
        let body = json!({"jsonrpc": "2.0", "id": i, "method": argus_supervisor_lib::protocol::send_method(dialect),
                          "params": argus_supervisor_lib::a2a::wire::send_params(dialect, &message_id, &text, json!({}))});
        let v: serde_json::Value = rpc(&http, config, dialect, &body)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        let task = v
            .get("result")
            .ok_or_else(|| format!("the remote refused to create a task: {v}"))
            .and_then(|r| {
                argus_supervisor_lib::a2a::wire::parse_task(r).map_err(|e| {
                    format!(
                        "the remote answered without a task to poll ({}): {v}",
                        e.class()
                    )
                })
            })?;
        tasks.push(task.id.as_str().to_string());
    }
    Ok(tasks)
}

/// Write every file under `from` again under `to`, bare (one thread, one sync at the end): the
/// floor of a restore on this disk now (creating files is most of it, and its cost on a disk
/// that freed many inodes lately varies tenfold). The seconds it took; `to` is removed.
fn write_floor(from: &std::path::Path, to: &std::path::Path) -> Result<f64, String> {
    let mut files = vec![];
    let mut todo = vec![from.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir)
            .map_err(|e| e.to_string())?
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(rel) = p.strip_prefix(from) {
                files.push((
                    rel.to_path_buf(),
                    std::fs::read(&p).map_err(|e| e.to_string())?,
                ));
            }
        }
    }
    // What earlier rounds freed is written out first, untimed: it is not this write's cost.
    settle(to.parent().unwrap_or(to))?;
    let started = Instant::now();
    for (rel, bytes) in &files {
        let path = to.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
    }
    let dir = std::fs::File::open(to).map_err(|e| e.to_string())?;
    rustix::fs::syncfs(&dir).map_err(|e| e.to_string())?;
    let secs = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(to);
    Ok(secs)
}

/// Write out whatever the file system holding `dir` has pending (the blocks and inodes a removal
/// freed, above all), so that a timed step that ends in a `syncfs` pays for its own writes only.
fn settle(dir: &std::path::Path) -> Result<(), String> {
    let dir = std::fs::File::open(dir).map_err(|e| e.to_string())?;
    rustix::fs::syncfs(&dir).map_err(|e| e.to_string())
}

/// The bytes the state root's campaign files hold (documents, logs, lease records).
fn disk_bytes(root: &std::path::Path) -> u64 {
    ["campaigns", "events", "messages", "leases"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(root.join(d))
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Write everything out and drop the page cache, so the recovery reads from the disk. False when
/// the kernel refuses (not root, or a container without the knob).
fn drop_page_cache() -> bool {
    let synced = Command::new("sync").status().is_ok_and(|s| s.success());
    synced && std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}

async fn measure(n: usize, opts: &Options) -> Result<Row, String> {
    let (seconds, remote) = (opts.seconds, opts.remote.as_ref());
    // The baseline comes first: nothing of the measurement is allocated yet.
    let rss0 = rss_kib();
    let (polled, client) = polled(n, remote).await?;
    let dialect = client.dialect();
    // Shared with the floor's thread: one copy of the task ids.
    let tasks = Arc::new(polled.tasks.clone());
    let root = std::env::temp_dir().join(format!("argus-bench-{}", uuid::Uuid::new_v4()));
    let store = Store::open(&root).map_err(|e| e.to_string())?;
    let client = Arc::new(client);
    let config = steady_config(n, opts.heartbeat);
    let heartbeat = config.heartbeat;
    let wake = Arc::new(CountingWake::default());
    let rt = Runtime::start(
        store.clone(),
        client.clone(),
        config.clone(),
        Arc::new(SystemClock),
        wake.clone(),
    )
    .map_err(|e| e.to_string())?;
    // The runtime's own footprint (client, discovery, threads, allocator arenas) is fixed; what
    // each campaign costs is measured from here.
    let rss_started = rss_kib();
    let controlling = populate(&rt, &tasks, opts.controlling).await?;
    // Let every campaign see its task once (the first reading is material) and settle: a remote
    // we did not write may still move its fresh task along (1.5 heartbeats were too few for
    // fasta2a's echo tasks: a write fell in the window). Then measure.
    tokio::time::sleep(heartbeat.mul_f64(2.5)).await;
    let rss1 = rss_kib();
    let remote_at = (&polled.http, dialect);
    let steady = steady(&rt, &root, remote_at, &tasks, &wake, (opts, &config)).await?;
    rt.shutdown().await;
    drop(rt);
    let recovery_cold = opts.cold && drop_page_cache();
    let (recovery_secs, read_all_secs, one) =
        recover(store, client.clone(), config.clone(), wake.clone(), n).await?;
    let (restore_recovery_secs, restore_floor_secs) = restores(
        &root,
        &steady.backups.archive,
        (client, config, wake),
        n,
        &one,
    )
    .await?;
    let _ = std::fs::remove_dir_all(&root);
    let restores = (restore_recovery_secs, restore_floor_secs);
    let recovery = (recovery_secs, read_all_secs, recovery_cold);
    Ok(row(
        n,
        (seconds, heartbeat),
        steady,
        (rss0, rss_started, rss1),
        recovery,
        restores,
        controlling,
    ))
}

/// What the steady window measured: the rounds against the floor, the writes and wakes while
/// nothing changed, the disk, and the backups under the same load.
struct Steady {
    rounds: Rounds,
    renewals: u64,
    /// Writes, durable writes and wakes while nothing changed.
    unchanged: (u64, u64, u64),
    disk_kib_per_campaign_day: f64,
    disk_kib_per_campaign: f64,
    backups: Backups,
}

/// The steady window of a populated runtime: rounds against the floor, then backups.
async fn steady(
    rt: &Runtime,
    root: &std::path::Path,
    (http, dialect): (&HttpConfig, Dialect),
    tasks: &Arc<Vec<String>>,
    wake: &CountingWake,
    (opts, config): (&Options, &RuntimeConfig),
) -> Result<Steady, String> {
    let (n, seconds, remote) = (tasks.len(), opts.seconds, opts.remote.as_ref());
    // The floor runs on its own thread with its own clock, between the rounds, while the runtime
    // keeps ticking: each round compares the two under the same load of this shared machine, and
    // the median round counts. A first round warms its connections and is not counted.
    let floor = Floor::start(
        http.clone(),
        dialect,
        tasks.clone(),
        config.max_concurrent_calls,
    )?;
    // A remote we did not write may answer a few thousand polls a second at best (fasta2a in
    // Python): its rounds are shorter.
    let floor_min = if remote.is_some() {
        FOREIGN_FLOOR_MIN_POLLS
    } else {
        FLOOR_MIN_POLLS
    };
    floor.round(floor_min, None).await?;
    let stats = rt.stats().clone();
    let r0 = stats.renewals.load(Ordering::Relaxed);
    let (w0, d0, k0) = writes_and_wakes(&stats, wake);
    let round_length = Duration::from_secs_f64(seconds.max(1) as f64 / ROUNDS as f64);
    let (disk0, window_started) = (disk_bytes(root), Instant::now());
    let rounds = rounds(&stats, &floor, floor_min, round_length).await?;
    let disk1 = disk_bytes(root);
    let window = window_started.elapsed().as_secs_f64().max(1e-3);
    let disk_kib_per_campaign_day =
        disk1.saturating_sub(disk0) as f64 / 1024.0 / n.max(1) as f64 / window * 86_400.0;
    let disk_kib_per_campaign = disk1 as f64 / 1024.0 / n.max(1) as f64;
    // Backups under the same steady load: how long one takes (the median), and whether the
    // heartbeat kept its cadence over them all (taken back to back for at least 2 s: over one
    // short backup the count of ticks is too coarse to compare).
    let steady_rate = rounds.ticks as f64 / (round_length.as_secs_f64() * ROUNDS as f64);
    let backups = backups(root, &stats, steady_rate).await?;
    let (w1, d1, k1) = writes_and_wakes(&stats, wake);
    let renewals = stats.renewals.load(Ordering::Relaxed) - r0;
    Ok(Steady {
        rounds,
        renewals,
        unchanged: (w1 - w0, d1 - d0, k1 - k0),
        disk_kib_per_campaign_day,
        disk_kib_per_campaign,
        backups,
    })
}
/// The row a steady measurement makes: its figures per campaign and per tick.
fn row(
    n: usize,
    (seconds, heartbeat): (u64, Duration),
    steady: Steady,
    (rss0, rss_started, rss1): (f64, f64, f64),
    (recovery_secs, read_all_secs, recovery_cold): (f64, f64, bool),
    (restore_recovery_secs, restore_floor_secs): (f64, f64),
    controlling: usize,
) -> Row {
    let Steady {
        rounds: r,
        renewals,
        unchanged: (writes, durable, wakes),
        disk_kib_per_campaign_day,
        disk_kib_per_campaign,
        backups,
    } = steady;
    let cpu = r.used.total();
    let cpu_per_tick = cpu / r.ticks.max(1) as f64;
    Row {
        campaigns: n,
        controlling,
        renewals,
        heartbeat_secs: heartbeat.as_secs_f64(),
        ticks: r.ticks,
        expected_ticks: (n as f64 * seconds as f64 / heartbeat.as_secs_f64()) as u64,
        cpu_per_1000_ticks: cpu_per_tick * 1000.0,
        cpu_share_at_120s: cpu_per_tick * n as f64 / 120.0,
        cpu_share_measured: cpu / seconds.max(1) as f64,
        rss_kib_per_campaign: (rss1 - rss_started) / n as f64,
        rss_fixed_mib: (rss_started - rss0) / 1024.0,
        writes_during_unchanged: writes,
        durable_writes_during_unchanged: durable,
        wakes_during_unchanged: wakes,
        recovery_secs,
        read_all_secs,
        recovery_cold,
        floor_cpu_per_1000_polls: r.floors[ROUNDS / 2] * 1000.0,
        floor_ratios: r.ratios,
        paced_floor_cpu_per_1000_polls: r.paced_floors[ROUNDS / 2] * 1000.0,
        paced_floor_ratios: r.paced_ratios,
        backup_secs: backups.secs,
        backup_files: backups.files,
        disk_kib_per_campaign_day,
        disk_kib_per_campaign,
        backup_tick_share: backups.tick_share,
        restore_recovery_secs,
        restore_floor_secs,
        system_share: r.used.kernel_share(),
        floor_system_share: r.floor_kernel[ROUNDS / 2],
    }
}

/// The steady rows' runtime settings: the heartbeat asked for (or max(1, N / 2000) s, so the
/// simulated remote keeps up); a short lease (4 heartbeats + 60 s, the runtime accepts 2 + 60),
/// so renewals happen in the run, every 2 heartbeats + 15 s; no hot polling (it has its own row,
/// `notice.rs`).
fn steady_config(n: usize, heartbeat: Option<u64>) -> RuntimeConfig {
    let heartbeat = match heartbeat {
        Some(secs) => Duration::from_secs(secs.max(1)),
        None => Duration::from_secs_f64((n as f64 / 2000.0).max(1.0)),
    };
    let mut config = RuntimeConfig::new(ControllerId::new("argus-openoperator"));
    config.heartbeat = heartbeat;
    config.lease_ttl_secs = (4 * heartbeat.as_secs() + 60).min(86_400);
    config.hot_poll = None;
    config
}

/// Writes so far (all, durable) and wakes so far.
fn writes_and_wakes(
    stats: &argus_supervisor_lib::runtime::Stats,
    wake: &CountingWake,
) -> (u64, u64, u64) {
    (
        stats.disk_writes.load(Ordering::Relaxed),
        stats.durable_writes.load(Ordering::Relaxed),
        wake.wakes.load(Ordering::Relaxed),
    )
}

/// The steady rounds: our ticks and CPU, and the floor's, round by round.
#[derive(Default)]
struct Rounds {
    ticks: u64,
    used: Cpu,
    floors: Vec<f64>,
    floor_kernel: Vec<f64>,
    ratios: Vec<f64>,
    paced_floors: Vec<f64>,
    paced_ratios: Vec<f64>,
}

/// [`ROUNDS`] rounds of the runtime ticking alone, each followed by the floor polling as many
/// times (and again at the runtime's own rate): each round compares the two under the same load.
async fn rounds(
    stats: &argus_supervisor_lib::runtime::Stats,
    floor: &Floor,
    floor_min: u64,
    round_length: Duration,
) -> Result<Rounds, String> {
    let mut r = Rounds::default();
    for _ in 0..ROUNDS {
        let (t0, q0, c0) = (
            stats.ticks.load(Ordering::Relaxed),
            stats.remote_calls.load(Ordering::Relaxed),
            Cpu::now(),
        );
        tokio::time::sleep(round_length).await;
        let (round_ticks, round_calls, round_cpu) = (
            stats.ticks.load(Ordering::Relaxed) - t0,
            stats.remote_calls.load(Ordering::Relaxed) - q0,
            Cpu::now().since(c0),
        );
        r.ticks += round_ticks;
        r.used = r.used.plus(round_cpu);
        let (floor_per_poll, floor_system) = floor
            .round(round_calls.clamp(floor_min, FLOOR_MAX_POLLS), None)
            .await?;
        // The same requests at the runtime's own rate in the round: what a bare poller on a
        // cadence pays (at most the round's length).
        let rate = round_calls as f64 / round_length.as_secs_f64();
        let (paced_per_poll, _) = floor
            .round(round_calls.clamp(1, FLOOR_MAX_POLLS), Some(rate))
            .await?;
        r.floors.push(floor_per_poll);
        r.floor_kernel.push(floor_system);
        r.paced_floors.push(paced_per_poll);
        // Per remote call, as the floor's is per poll: a controller's tick makes two (its poll,
        // and its heartbeat's read_control or renewal), an observer's one.
        let ours = round_cpu.total() / round_calls.max(1) as f64;
        r.ratios.push(ours / floor_per_poll.max(1e-12));
        r.paced_ratios.push(ours / paced_per_poll.max(1e-12));
    }
    // Sorted: the median round counts.
    for v in [
        &mut r.floors,
        &mut r.floor_kernel,
        &mut r.ratios,
        &mut r.paced_floors,
        &mut r.paced_ratios,
    ] {
        v.sort_by(f64::total_cmp);
    }
    Ok(r)
}

/// The campaigns: one per task, each observing it; the first `share` of them claim control.
/// How many control.
async fn populate(rt: &Runtime, tasks: &[String], share: f64) -> Result<usize, String> {
    let n = tasks.len();
    for (i, task) in tasks.iter().enumerate() {
        let id = format!("bench-{i}");
        rt.create(&id, "bench").await.map_err(|e| e.to_string())?;
        rt.command(
            &id,
            OperatorCommand::observe(Some(TaskId::new(task.clone()))),
        )
        .await
        .map_err(|e| e.to_string())?;
    }
    let controlling = (n as f64 * share.clamp(0.0, 1.0)).round() as usize;
    for i in 0..controlling {
        let id = format!("bench-{i}");
        let reply = rt
            .command(&id, OperatorCommand::claim())
            .await
            .map_err(|e| e.to_string())?;
        if !reply.accepted || reply.lease.is_none() {
            return Err(format!(
                "{id} could not claim control ({}): {:?}",
                reply.refusal.map_or("refused", |r| r.name()),
                reply.state
            ));
        }
    }
    Ok(controlling)
}

/// Run the benchmark and print the figures; with `check`, fail when a target is missed.
/// `remote`: poll tasks the bench creates on that A2A remote instead of its own simulated one.
pub async fn run(opts: Options) -> Result<(), String> {
    if opts.controlling > 0.0 && opts.remote.is_some() {
        return Err("--controlling needs the bench's own simulated remote: a foreign remote's tasks carry no campaign to claim".into());
    }
    if !(0.0..=1.0).contains(&opts.controlling) {
        return Err("--controlling is a share of the campaigns, from 0 to 1".into());
    }
    println!(
        "command: {} (version {}, {} CPUs, durable step: 5 rounds x 200)",
        opts.command(),
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    );
    let mut misses = vec![];
    let d = durable(5, 200)?;
    println!(
        "durable step (document + event line + feed line): {:.0}/s; the same writes raw: {:.0}/s; ratio median {:.2}x (spread {:.2}x to {:.2}x over 5 interleaved rounds; target <= {MAX_DURABLE_RATIO}x)",
        d.real_per_sec, d.raw_per_sec, d.ratio_median, d.ratio_min, d.ratio_max
    );
    if d.ratio_median > MAX_DURABLE_RATIO {
        misses.push(format!(
            "durable step ratio {:.2}x > {MAX_DURABLE_RATIO}x",
            d.ratio_median
        ));
    }
    print_header();
    for &n in opts.counts.iter().filter(|n| **n > 0) {
        let row = measure(n, &opts).await?;
        print_row(&row);
        misses.extend(missed(&row));
    }
    for &n in opts.notice.iter().filter(|n| **n > 0) {
        let row = notice::measure(n, opts.notice_settings).await?;
        print_polling(&row);
        misses.extend(row.missed());
    }
    for &n in opts.notice_streaming.iter().filter(|n| **n > 0) {
        let settings = NoticeSettings {
            streaming: true,
            ..opts.notice_settings
        };
        let row = notice::measure(n, settings).await?;
        let floor = notice::bare_stream_kib(row.live).await?;
        print_streaming(&row, floor);
        misses.extend(row.missed());
        // RSS moves in pages and allocator arenas: read per stream only over enough of them.
        if row.live >= notice::MIN_STREAMS_FOR_MEMORY
            && row.rss_per_live_kib > notice::MAX_KIB_PER_STREAM
        {
            misses.push(format!(
                "memory per open stream: {:.1} KiB > {} KiB",
                row.rss_per_live_kib,
                notice::MAX_KIB_PER_STREAM
            ));
        }
    }
    print_targets();
    if opts.check {
        if misses.is_empty() {
            println!("check: every target met");
        } else {
            for m in &misses {
                println!("check: MISSED {m}");
            }
            return Err(format!("{} target(s) missed", misses.len()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::targets::restore_disk_capable;
    use super::*;

    fn restore_misses(campaigns: usize, restore: f64, floor: f64) -> Vec<String> {
        let row = Row {
            campaigns,
            restore_recovery_secs: restore,
            restore_floor_secs: floor,
            ..Row::default()
        };
        missed(&row)
            .into_iter()
            .filter(|m| m.contains("restore"))
            .collect()
    }

    #[test]
    fn a_restore_is_judged_by_its_floor_always_and_by_the_target_where_the_disk_can_meet_it() {
        // Within its floor and the target.
        assert!(restore_misses(10_000, 7.0, 3.5).is_empty());
        // Slow against its floor, at any size.
        assert_eq!(restore_misses(2_000, 1.0, 0.25).len(), 1);
        // A capable disk (3.9 s bare) and a restore within 2.5x of it cannot miss the target.
        assert!(restore_misses(10_000, 9.7, 3.9).is_empty());
        // A slow disk: the target is not judged, the floor is.
        assert!(restore_misses(10_000, 13.2, 7.3).is_empty());
        assert_eq!(restore_misses(10_000, 19.0, 7.3).len(), 1);
        // Scaled to the row's size: 2,000 campaigns within 0.8 s bare is a capable disk.
        assert!(restore_disk_capable(&Row {
            campaigns: 2_000,
            restore_floor_secs: 0.8,
            ..Row::default()
        }));
        assert!(!restore_disk_capable(&Row {
            campaigns: 2_000,
            restore_floor_secs: 0.9,
            ..Row::default()
        }));
    }
}
