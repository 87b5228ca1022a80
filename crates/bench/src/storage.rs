//! The state root's figures under the steady load: backups taken back to back, recovery at
//! start, and restores against writing their files bare.

use super::{settle, write_floor};
use argus_supervisor_lib::a2a::A2aClient;
use argus_supervisor_lib::control::SystemClock;
use argus_supervisor_lib::runtime::reduce::CountingWake;
use argus_supervisor_lib::runtime::{Runtime, RuntimeConfig};
use argus_supervisor_lib::store::Store;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Backups taken back to back under the steady load.
pub(super) struct Backups {
    /// The median backup's seconds.
    pub(super) secs: f64,
    pub(super) files: usize,
    /// The last archive.
    pub(super) archive: std::path::PathBuf,
    /// The heartbeat's ticks over the backups, against its steady rate.
    pub(super) tick_share: f64,
}

/// Backups under the same steady load: how long one takes (the median), and whether the
/// heartbeat kept its cadence over them all (taken back to back for at least 2 s: over one short
/// backup the count of ticks is too coarse to compare).
pub(super) async fn backups(
    root: &std::path::Path,
    stats: &argus_supervisor_lib::runtime::Stats,
    steady_rate: f64,
) -> Result<Backups, String> {
    let (tb, backups_started) = (stats.ticks.load(Ordering::Relaxed), Instant::now());
    let (mut backup_times, mut archive, mut backup_files) = (vec![], std::path::PathBuf::new(), 0);
    while backup_times.len() < 10
        && (backup_times.len() < 3 || backups_started.elapsed() < Duration::from_secs(2))
    {
        let backup_root = root.to_path_buf();
        let started = Instant::now();
        let (a, files) = tokio::task::spawn_blocking(move || {
            argus_supervisor_lib::store::backup::take(&backup_root, "argus-supervisor bench")
                .map(|(a, m)| (a, m.files.len()))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        backup_times.push(started.elapsed().as_secs_f64());
        // The earlier archives stay until the restore is timed: freeing their blocks on a disk
        // mounted with `discard` would be paid by the restore's sync, not by anything it does.
        (archive, backup_files) = (a, files);
    }
    let window = backups_started.elapsed().as_secs_f64();
    backup_times.sort_by(f64::total_cmp);
    let backup_secs = backup_times[backup_times.len() / 2];
    let backup_tick_share = (stats.ticks.load(Ordering::Relaxed) - tb) as f64
        / window.max(1e-3)
        / steady_rate.max(1e-9);
    Ok(Backups {
        secs: backup_secs,
        files: backup_files,
        archive,
        tick_share: backup_tick_share,
    })
}

/// A start on the root the steady row wrote: the seconds until every driver answers, then until
/// every document is read; and one campaign's id, to look for after a restore.
pub(super) async fn recover(
    store: Store,
    client: Arc<A2aClient>,
    config: RuntimeConfig,
    wake: Arc<CountingWake>,
    n: usize,
) -> Result<(f64, f64, String), String> {
    let started = Instant::now();
    let recovered = Runtime::start(store, client, config, Arc::new(SystemClock), wake)
        .map_err(|e| e.to_string())?;
    let listed = recovered.by_state().values().sum::<u64>();
    let one = recovered.campaign_ids().pop().unwrap_or_default();
    if listed != n as u64 || recovered.document(&one).await.is_none() {
        return Err(format!(
            "the recovery found {listed} of {n} campaigns, or could not read {one}"
        ));
    }
    let recovery_secs = started.elapsed().as_secs_f64();
    let read = recovered.documents().await.len();
    let read_all_secs = started.elapsed().as_secs_f64() - recovery_secs;
    recovered.kill();
    if read != n {
        return Err(format!(
            "the recovery read {read} of {n} campaign documents"
        ));
    }
    Ok((recovery_secs, read_all_secs, one))
}

/// Restore plus recovery of `archive`, and its floor (the same files written bare).
pub(super) async fn restores(
    root: &std::path::Path,
    archive: &std::path::Path,
    (client, config, wake): (Arc<A2aClient>, RuntimeConfig, Arc<CountingWake>),
    n: usize,
    one: &str,
) -> Result<(f64, f64), String> {
    // The archive restored into a fresh root, and a start on it. Creating files is most of a
    // restore, and its cost on a shared disk swings tenfold from moment to moment and drifts as
    // rounds free and take inodes: four restores alternate with four rounds of the floor (the
    // same files written bare) in the order restore-floor, floor-restore, ... so the drift falls
    // on both alike; the best rounds compared, each round begun on a settled disk.
    let restored = root.with_extension("restored");
    let restore = || -> Result<f64, String> {
        let _ = std::fs::remove_dir_all(&restored);
        // The removal of the last round's files would otherwise be paid by the restore's sync,
        // never by the floor's.
        settle(restored.parent().unwrap_or(&restored))?;
        let started = Instant::now();
        argus_supervisor_lib::store::backup::restore(archive, &restored, false)
            .map_err(|e| e.to_string())?;
        Ok(started.elapsed().as_secs_f64())
    };
    let (mut restores, mut floors) = (vec![], vec![]);
    for round in 0..4 {
        let floor =
            |round: usize| write_floor(&restored, &root.with_extension(format!("floor-{round}")));
        if round % 2 == 0 {
            restores.push(restore()?);
            floors.push(floor(round)?);
        } else {
            floors.push(floor(round)?);
            restores.push(restore()?);
        }
    }
    let recovery_started = Instant::now();
    let back = Runtime::start(
        Store::open(&restored).map_err(|e| e.to_string())?,
        client,
        config,
        Arc::new(SystemClock),
        wake,
    )
    .map_err(|e| e.to_string())?;
    let listed = back.by_state().values().sum::<u64>();
    if listed != n as u64 || back.document(one).await.is_none() {
        return Err(format!("the restored root had {listed} of {n} campaigns"));
    }
    // The best of four rounds each: a file's creation on this disk swings tenfold from one round
    // to the next (the same restore took 0.26 s and 2.3 s back to back), and the best round is
    // the one the disk disturbed least.
    let best = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
    let restore_recovery_secs = best(restores) + recovery_started.elapsed().as_secs_f64();
    let restore_floor_secs = best(floors);
    back.kill();
    let _ = std::fs::remove_dir_all(&restored);
    Ok((restore_recovery_secs, restore_floor_secs))
}
