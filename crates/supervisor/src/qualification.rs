//! The qualification record: the last standing of one remote URL and one agent card, kept in the
//! state root (`qualification/<url key>-<card key>.json`) by `argus-supervisor qualify`
//! ([`crate::qualify`]), and read by `serve` (its `health` and the
//! `ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION` policy, in the live remote) and `probe`. The file is how
//! two processes share it: `qualify` writes it, the others only read. The URL is keyed by a hash
//! (it may carry a token in its path) and shown only without its path. A leaf: it knows neither the
//! A2A client nor the checks, so both may use it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What the run concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Every check of the write phase (and of the live acceptance, when asked) passed: writes may
    /// be trusted to this remote, with this card.
    Qualified,
    /// At least one check failed: the remote does not keep what its card promises.
    Failed,
    /// The card does not offer campaign control: the supervisor can only observe. Nothing written.
    ObserverOnly,
    /// The read-only checks passed; the write phase was not asked for (no `--write-campaign`).
    ReadOnly,
}

impl Standing {
    /// The standing as the report's first line says it (its verdict).
    pub fn says(self) -> &'static str {
        match self {
            Standing::Qualified => "QUALIFIED",
            Standing::Failed => "FAILED",
            Standing::ObserverOnly => "OBSERVER ONLY",
            Standing::ReadOnly => "READ-ONLY CHECKS ONLY (not qualified for writes)",
        }
    }
}

/// One run's verdict, as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub endpoint: String,
    pub card_sha256: String,
    pub standing: Standing,
    /// The failed checks' ids.
    pub failed: Vec<String>,
    pub reason: String,
    pub finished_at: String,
    /// When the run ended (unix seconds; `0` in records made before it was kept: read from
    /// `finished_at`). The record is of the deployment the card digest names, at that time.
    #[serde(default)]
    pub made_at: u64,
    /// The agent's version its card stated then (with the card's digest, the deployment the
    /// record is of, as far as the remote says).
    #[serde(default)]
    pub agent_version: Option<String>,
    pub write_campaign: Option<String>,
    pub controller_id: Option<String>,
    /// Whether the live acceptance through a child `serve` ran (and so passed, when qualified).
    pub live_acceptance: bool,
    /// The whole report, as `--json` printed it.
    pub report: serde_json::Value,
}

/// What `health` and `probe` say of the current card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QualificationStatus {
    Passed,
    /// It passed, longer ago than the age a record is trusted for: qualify again.
    Stale,
    Failed,
    None,
}

/// The qualification of the current card, as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Qualification {
    pub status: QualificationStatus,
    /// One line: `passed (2026-…, live acceptance run)`, `failed (lease.stale_epoch, …)`,
    /// `none (…why…)`.
    pub detail: String,
}

impl Qualification {
    /// Nothing known yet (the card has not been read).
    pub fn unknown() -> Self {
        Qualification {
            status: QualificationStatus::None,
            detail: "none (the agent card has not been read yet)".into(),
        }
    }
}

/// How many days a passing record is trusted unless the setting says otherwise.
pub const DEFAULT_MAX_AGE_DAYS: u64 = 90;

/// Where one remote's records live.
#[derive(Debug, Clone)]
pub struct Book {
    dir: PathBuf,
    url_key: String,
    /// How long a passing record is trusted (`None`: for ever).
    max_age_secs: Option<u64>,
}

/// The URL as its key is made from: no query or fragment, the path ending in `/` (as the A2A
/// client reads the endpoint), so `https://h/a2a` and `https://h/a2a/` are one remote.
fn normal_url(raw: &str) -> String {
    match url::Url::parse(raw.trim()) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            if !u.path().ends_with('/') {
                let path = format!("{}/", u.path());
                u.set_path(&path);
            }
            u.to_string()
        }
        Err(_) => raw.trim().to_string(),
    }
}

fn key(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    hash.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

impl Book {
    /// `endpoint` is the configured URL; its hash keys the records (the URL itself is not kept).
    pub fn new(home: &Path, endpoint: &str) -> Book {
        let normal = normal_url(endpoint);
        Book {
            dir: home.join("qualification"),
            url_key: key(&normal),
            max_age_secs: None,
        }
    }

    /// Trust a passing record for at most `days` (a remote redeployed under the same card keeps
    /// its record otherwise; `ARGUS_SUPERVISOR_QUALIFICATION_MAX_AGE_DAYS`).
    pub fn max_age_days(mut self, days: u64) -> Book {
        self.max_age_secs = Some(days.saturating_mul(86_400));
        self
    }

    fn path(&self, card_sha256: &str) -> PathBuf {
        self.dir
            .join(format!("{}-{}.json", self.url_key, key(card_sha256)))
    }

    /// Keep a run's record (atomically, durably). Returns where.
    pub fn keep(&self, record: &Record) -> Result<PathBuf, String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        let path = self.path(&record.card_sha256);
        let bytes = serde_json::to_vec_pretty(record).map_err(|e| e.to_string())?;
        crate::store::write_atomic(&path, &bytes).map_err(|e| e.to_string())?;
        Ok(path)
    }

    /// The record for this card, if one is kept and readable.
    pub fn record(&self, card_sha256: &str) -> Option<Record> {
        let bytes = std::fs::read(self.path(card_sha256)).ok()?;
        // A record that cannot be read is no record: it never lets a write through.
        serde_json::from_slice::<Record>(&bytes)
            .ok()
            .filter(|r| r.card_sha256 == card_sha256)
    }

    /// Whether a record exists for this URL under another card (a changed card made it stale).
    fn stale_exists(&self, card_sha256: &str) -> bool {
        let own = self.path(card_sha256);
        let prefix = format!("{}-", self.url_key);
        std::fs::read_dir(&self.dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.path() != own && e.file_name().to_string_lossy().starts_with(&prefix))
        })
    }

    /// What to say of the card with this hash.
    pub fn status(&self, card_sha256: &str) -> Qualification {
        let now = crate::time::now_secs();
        let age = |r: &Record| {
            let made = match r.made_at {
                0 => crate::time::parse_rfc3339(&r.finished_at).unwrap_or(0),
                t => t,
            };
            now.saturating_sub(made)
        };
        let (status, detail) = match self.record(card_sha256) {
            Some(r)
                if r.standing == Standing::Qualified
                    && self.max_age_secs.is_some_and(|max| age(&r) > max) =>
            {
                (
                    QualificationStatus::Stale,
                    format!(
                        "stale (passed {}, {} days ago; trusted for {} days, ARGUS_SUPERVISOR_QUALIFICATION_MAX_AGE_DAYS): run `argus-supervisor qualify` again",
                        r.finished_at,
                        age(&r) / 86_400,
                        self.max_age_secs.unwrap_or(0) / 86_400
                    ),
                )
            }
            Some(r) if r.standing == Standing::Qualified => (
                QualificationStatus::Passed,
                format!(
                    "passed ({}, campaign {}{}{})",
                    r.finished_at,
                    r.write_campaign.as_deref().unwrap_or("?"),
                    r.agent_version
                        .as_deref()
                        .map(|v| format!(", agent version {v}"))
                        .unwrap_or_default(),
                    if r.live_acceptance {
                        ", live acceptance passed"
                    } else {
                        ", without the live acceptance"
                    }
                ),
            ),
            Some(r) if r.standing == Standing::Failed => (
                QualificationStatus::Failed,
                format!("failed ({}; {})", r.failed.join(", "), r.finished_at),
            ),
            Some(r) if r.standing == Standing::ObserverOnly => (
                QualificationStatus::None,
                format!(
                    "none (the last run found an observer-only card: {})",
                    r.reason
                ),
            ),
            Some(_) => (
                QualificationStatus::None,
                "none (the last run had only the read-only checks; the write phase was not run)"
                    .into(),
            ),
            None if self.stale_exists(card_sha256) => (
                QualificationStatus::None,
                "none (a record exists for an earlier agent card: the card changed, qualify again)"
                    .into(),
            ),
            None => (
                QualificationStatus::None,
                "none (this remote and card were never qualified: run `argus-supervisor qualify`)"
                    .into(),
            ),
        };
        Qualification { status, detail }
    }
}
