//! The report's lines: the column heads, one row per campaign count, the time-to-notice rows
//! and the targets.

use super::notice;
use super::targets::*;
use super::Row;

/// The steady rows' column heads.
pub(super) fn print_header() {
    println!(
        "{:>9} {:>9} {:>8} {:>9} {:>16} {:>18} {:>14} {:>10} {:>6} {:>8} {:>10} {:>7} {:>7} {:>6} {:>12} {:>5} {:>13} {:>6} {:>9} {:>13} {:>6}",
        "campaigns",
        "heartbeat",
        "ticks",
        "expected",
        "cpu_s/1000ticks",
        "cpu_share@120s",
        "rss_KiB/camp",
        "fixed_MiB",
        "ctl",
        "renewals",
        "cpu_share",
        "writes",
        "durable",
        "wakes",
        "recovery_s",
        "cache",
        "floor_s/1000",
        "ratio",
        "kernel",
        "paced_s/1000",
        "paced"
    );
}

/// One steady row and its lines of detail.
pub(super) fn print_row(row: &Row) {
    println!(
        "{:>9} {:>8.1}s {:>8} {:>9} {:>16.4} {:>17.3}% {:>14.1} {:>10.1} {:>6} {:>8} {:>9.3}% {:>7} {:>7} {:>6} {:>12.3} {:>5} {:>13.4} {:>5.1}x {:>3.0}%/{:.0}% {:>13.4} {:>5.2}x",
        row.campaigns,
        row.heartbeat_secs,
        row.ticks,
        row.expected_ticks,
        row.cpu_per_1000_ticks,
        row.cpu_share_at_120s * 100.0,
        row.rss_kib_per_campaign,
        row.rss_fixed_mib,
        row.controlling,
        row.renewals,
        row.cpu_share_measured * 100.0,
        row.writes_during_unchanged,
        row.durable_writes_during_unchanged,
        row.wakes_during_unchanged,
        row.recovery_secs,
        if row.recovery_cold { "cold" } else { "warm" },
        row.floor_cpu_per_1000_polls,
        row.floor_ratio(),
        row.system_share * 100.0,
        row.floor_system_share * 100.0,
        row.paced_floor_cpu_per_1000_polls,
        row.paced_floor_ratio(),
    );
    let rounds = |v: &[f64]| -> String {
        v.iter()
            .map(|r| format!("{r:.2}x"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "{:>9} ratio per round, sorted (the median counts): {}; against the paced floor: {}",
        "",
        rounds(&row.floor_ratios),
        rounds(&row.paced_floor_ratios)
    );
    println!(
        "{:>9} recovery: every driver spawned and the first answers in {:.3} s; every document then read on demand in {:.3} s more",
        "", row.recovery_secs, row.read_all_secs
    );
    println!(
        "{:>9} disk: {:.1} KiB per campaign at rest, {:.2} KiB added per noisy campaign-day; backup under load: {} files in {:.3} s, the heartbeat at {:.0}% of its cadence meanwhile; restore and recovery of it: {:.3} s (the same files written bare: {:.3} s)",
        "",
        row.disk_kib_per_campaign,
        row.disk_kib_per_campaign_day,
        row.backup_files,
        row.backup_secs,
        row.backup_tick_share * 100.0,
        row.restore_recovery_secs,
        row.restore_floor_secs
    );
    if !restore_disk_capable(row) {
        println!(
            "{:>9} restore: the {MAX_RESTORE_SECS_PER_10K} s per 10,000 target not judged: this disk wrote the files bare in {:.2} s per 10,000 (a disk that can meet it does so in <= {:.1} s); judged against that floor only",
            "",
            row.restore_floor_secs * 10_000.0 / row.campaigns.max(1) as f64,
            MAX_RESTORE_SECS_PER_10K / MAX_RESTORE_FLOOR_RATIO
        );
    }
}

/// A time-to-notice row against a polling-only remote.
pub(super) fn print_polling(row: &notice::NoticeRow) {
    let s = &row.settings;
    println!(
        "time-to-notice, polling-only remote: {} campaigns, {} live; heartbeat {} s, hot poll {}, budget {} requests/s: {} of {} noticed; p50 {:.2} s, p99 {:.2} s, max {:.2} s (ideal poller at the budget: p50 {:.2} s); {:.2} requests/s to the remote in all, of them {:.2} hot polls/s ({:.2} in the busiest 5 s); CPU {:.2e} s per campaign-second (a bare poll loop at the same rate: {:.2e}, {:.1}x); memory {:.1} KiB per live campaign claimed",
        row.campaigns,
        row.live,
        s.heartbeat,
        if s.hot_poll == 0 { "off".to_string() } else { format!("{} s", s.hot_poll) },
        s.budget_rps,
        row.noticed,
        row.live,
        row.p50_secs,
        row.p99_secs,
        row.max_secs,
        row.ideal_p50_secs,
        row.requests_per_sec,
        row.hot_polls_per_sec,
        row.max_hot_polls_per_sec_5s,
        row.cpu_per_campaign_per_sec,
        row.floor_cpu_per_campaign_per_sec.unwrap_or(f64::NAN),
        row.cpu_per_campaign_per_sec / row.floor_cpu_per_campaign_per_sec.unwrap_or(f64::NAN),
        row.rss_per_live_kib,
    );
}

/// A time-to-notice row against a streaming remote, beside a bare SSE reader's memory.
pub(super) fn print_streaming(row: &notice::NoticeRow, floor: f64) {
    println!(
        "time-to-notice, streaming remote: {} campaigns, {} live, {} streams open; heartbeat {} s: {} of {} noticed; p50 {:.2} s, p99 {:.2} s, max {:.2} s; {:.2} requests/s to the remote in all; CPU {:.2e} s per campaign-second; memory {:.1} KiB per live campaign streamed (its claim included; a bare SSE reader: {:.1} KiB per stream)",
        row.campaigns,
        row.live,
        row.streams_open,
        row.settings.heartbeat,
        row.noticed,
        row.live,
        row.p50_secs,
        row.p99_secs,
        row.max_secs,
        row.requests_per_sec,
        row.cpu_per_campaign_per_sec,
        row.rss_per_live_kib,
        floor,
    );
}

/// Every target, as `--check` judges them.
pub(super) fn print_targets() {
    println!("targets: <= {MAX_CPU_PER_1000_TICKS} CPU s per 1,000 unchanged ticks (5% of one core for 10,000 campaigns at 120 s); <= {MAX_RSS_KIB_PER_CAMPAIGN} KiB RSS per campaign; recovery <= {MAX_RECOVERY_SECS_PER_10K} s per 10,000 campaigns; >= {:.0}% of the expected ticks; 0 writes (but the renewals' lease records, none durable) and 0 wakes on unchanged ticks; CPU per remote call <= {MAX_FLOOR_RATIO}x the floor's per poll from {FLOOR_RATIO_FROM} campaigns, <= {MAX_FLOOR_RATIO_ANY}x below, and <= {MAX_PACED_FLOOR_RATIO}x a bare poller's at the same rate; durable step <= {MAX_DURABLE_RATIO}x its floor; backup under load <= {MAX_BACKUP_SECS_PER_10K} s per 10,000 campaigns with >= {:.0}% of the heartbeat's cadence kept, restore and recovery <= {MAX_RESTORE_FLOOR_RATIO}x writing its files bare and <= {MAX_RESTORE_SECS_PER_10K} s per 10,000 on a disk that writes them bare within {:.1} s; <= {MAX_DISK_KIB_PER_CAMPAIGN_DAY} KiB of disk per noisy campaign-day; time-to-notice with hot polling at <= 20 live campaigns: p50 <= {} s, every live campaign noticing, and never more hot polls than the budget in any 5 s; streamed: p50 <= {} s and p99 <= {} s, every live campaign streamed, <= {} KiB per open stream (from {} streams)", MIN_TICK_SHARE * 100.0, MIN_BACKUP_TICK_SHARE * 100.0, MAX_RESTORE_SECS_PER_10K / MAX_RESTORE_FLOOR_RATIO, notice::MAX_POLLING_P50_SECS, notice::MAX_STREAMING_P50_SECS, notice::MAX_STREAMING_P99_SECS, notice::MAX_KIB_PER_STREAM, notice::MIN_STREAMS_FOR_MEMORY);
}
