//! What to measure, as given on the command line, and the command that reproduces a report.

use super::NoticeSettings;
use argus_supervisor_lib::a2a::HttpConfig;

/// What to measure, as given on the command line.
#[derive(Debug, Clone)]
pub struct Options {
    /// Campaign counts, one row each.
    pub counts: Vec<usize>,
    /// Seconds of steady heartbeats measured per row.
    pub seconds: u64,
    /// Compare every figure with its target; fail when one is missed.
    pub check: bool,
    /// Poll tasks created on this A2A remote instead of the bench's own simulated one.
    pub remote: Option<HttpConfig>,
    /// The heartbeat in seconds; `None`: max(1, N / 2000), so the simulated remote keeps up.
    pub heartbeat: Option<u64>,
    /// The share of the campaigns (0 to 1) that claim control before the measurement and keep
    /// renewing their leases through it (a lease lasting 4 heartbeats + 60 s, renewed 2
    /// heartbeats + 45 s before it ends, as `serve` paces it).
    pub controlling: f64,
    /// Drop the page cache before timing the recovery (needs root; said in the row either way).
    pub cold: bool,
    /// Campaign counts of the time-to-notice measurement (10% of them live), one row each.
    pub notice: Vec<usize>,
    /// The same against a streaming remote.
    pub notice_streaming: Vec<usize>,
    /// Its heartbeat, hot polling and budget.
    pub notice_settings: NoticeSettings,
}

impl Options {
    /// The command line that reproduces this report.
    pub(super) fn command(&self) -> String {
        let counts: Vec<String> = self.counts.iter().map(usize::to_string).collect();
        let mut out = format!(
            "argus-supervisor bench --campaigns {} --seconds {}",
            counts.join(","),
            self.seconds
        );
        if let Some(h) = self.heartbeat {
            out.push_str(&format!(" --heartbeat {h}"));
        }
        if self.controlling > 0.0 {
            out.push_str(&format!(" --controlling {}", self.controlling));
        }
        if self.cold {
            out.push_str(" --cold");
        }
        if let Some(r) = &self.remote {
            out.push_str(&format!(" --remote {}", r.endpoint));
        }
        let s = &self.notice_settings;
        out.push_str(&format!(
            " --notice {} --notice-streaming {} --notice-heartbeat {} --hot-poll {} --budget {}",
            list(&self.notice),
            list(&self.notice_streaming),
            s.heartbeat,
            s.hot_poll,
            s.budget_rps
        ));
        if self.check {
            out.push_str(" --check");
        }
        out
    }
}

/// Counts as the command line takes them (`0`: none).
pub(super) fn list(counts: &[usize]) -> String {
    match counts {
        [] => "0".to_string(),
        _ => counts
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}
