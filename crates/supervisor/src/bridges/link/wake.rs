//! The runtime's wake sink on the link's side (wakes and significant events become link requests),
//! its counters, and each bridge's health as `health` says it.

use super::board::ArgusBoard;
use crate::bridges::foreman::{hint, Directive, ForemanAction, Hint};
use crate::runtime::reduce::{AnswerTo, WakeSink};
use argus_machines::{Significant, WakeReason};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Why Argus is woken: the machine reached a decision boundary, or Foreman asked for a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeCause {
    Boundary(WakeReason),
    Foreman(Hint),
}

/// A wake on its way to Argus.
#[derive(Debug, Clone)]
pub struct WakeRequest {
    pub campaign_id: String,
    pub cause: WakeCause,
    pub latest: Option<Significant>,
    /// Foreman's advice about the same event, told to Argus with it (one mission, not two).
    pub advice: Option<Advice>,
}

/// Foreman's directive as Argus is told it: advisory, never an instruction to the remote.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub hint: Hint,
    pub action: ForemanAction,
    /// Foreman's own reason (bounded and sanitised by the bridge).
    pub reason: String,
    pub confidence: f64,
}

impl From<&Directive> for Advice {
    fn from(d: &Directive) -> Self {
        Advice {
            hint: hint(d),
            action: d.action,
            reason: d.reason.clone(),
            confidence: d.confidence,
        }
    }
}

impl Advice {
    /// The advice in Argus's words: what Foreman said, and what it asks of Argus (§13).
    pub fn text(&self) -> String {
        let name = serde_json::to_value(self.action)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let ask = match self.hint {
            Hint::NoWake => "It asks nothing of you.",
            Hint::WakeReviewer => "It asks for independent verification: have your Reviewer check the evidence below before any decision.",
            Hint::WakePlanner => "It asks for planning: decide whether the work needs steering or a next attempt, and plan it.",
            Hint::AskArgus => "It suggests stopping or retrying the attempt: that is your decision; nothing was sent to the remote on its word.",
            Hint::CompletionCandidate => "It sees a candidate completion: only your Reviewer's `done` verdict completes the campaign.",
            Hint::Escalate => "It says a person may be needed: ask the operator if you cannot decide.",
        };
        format!(
            "Foreman's advice (advisory; it decides nothing and sends nothing): {name}, \"{}\" (confidence {:.2}). {ask}",
            self.reason, self.confidence
        )
    }
}

/// What the link task is asked to do.
#[derive(Debug)]
pub enum LinkRequest {
    Wake(WakeRequest),
    /// A significant event that is not itself a decision boundary: Foreman may ask for a wake.
    Consult {
        campaign_id: String,
        event: Significant,
    },
    /// The supervisor is stopping: stop every Argus daemon, then answer.
    Stop(tokio::sync::oneshot::Sender<()>),
}

/// The `WakeSink` the runtime calls: counts, and hands work to the link task.
pub struct ArgusWake {
    tx: mpsc::UnboundedSender<LinkRequest>,
    /// Wakes at decision boundaries (from the machine).
    pub wakes: AtomicU64,
    /// Wakes Foreman asked for.
    pub foreman_wakes: AtomicU64,
    /// Foreman consultations.
    pub foreman_calls: AtomicU64,
    /// Foreman consultations that failed (no directive).
    pub foreman_failures: AtomicU64,
    /// Argus calls that failed, by class (`timeout`, `backend_unavailable`, …).
    pub argus_failures: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// What `health` says of Argus.
    pub argus_status: std::sync::Mutex<BridgeStatus>,
    /// The same for Foreman (`not configured` when off).
    pub foreman_status: std::sync::Mutex<BridgeStatus>,
    /// What the Foreman runtime says is installed (its version and wheel digest), when it is the
    /// gate; read once at start.
    pub foreman_runtime: std::sync::Mutex<Option<crate::bridges::foreman::ForemanRuntime>>,
    /// Each campaign's Argus state, which the link owns (read by the API's campaign view).
    pub board: Arc<ArgusBoard>,
}

/// A bridge's state as `health` says it (its `Display` is the health line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BridgeStatus {
    /// Not verified yet.
    Starting,
    Running,
    NotConfigured,
    /// The child cannot be reached, since (Unix seconds; kept from the first failure of the
    /// outage).
    Unavailable {
        since: u64,
    },
    /// Argus answers but does not take wakes as work: the failure's class, since when (kept from
    /// the first failed delivery of the outage).
    Degraded {
        class: &'static str,
        since: u64,
    },
}

impl std::fmt::Display for BridgeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BridgeStatus::Starting => f.write_str("starting"),
            BridgeStatus::Running => f.write_str("running"),
            BridgeStatus::NotConfigured => f.write_str("not configured"),
            BridgeStatus::Unavailable { since } => write!(f, "unavailable since {since}"),
            BridgeStatus::Degraded { class, since } => {
                write!(f, "degraded ({class}) since {since}")
            }
        }
    }
}

fn status_slot(slot: &std::sync::Mutex<BridgeStatus>) -> std::sync::MutexGuard<'_, BridgeStatus> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// The bridge's status now.
pub fn status(slot: &std::sync::Mutex<BridgeStatus>) -> BridgeStatus {
    *status_slot(slot)
}

/// Argus answers but does not take wakes as work (kept from the first failed delivery).
pub fn set_degraded(slot: &std::sync::Mutex<BridgeStatus>, class: &'static str) {
    let mut s = status_slot(slot);
    if !matches!(*s, BridgeStatus::Degraded { .. }) {
        *s = BridgeStatus::Degraded {
            class,
            since: crate::time::now_secs(),
        };
    }
}

/// Answers, but cannot do its work, for `class` now: the outage's start is kept, its class is the
/// latest (Foreman's decision model may time out, then answer garbage, in one outage).
pub fn set_degraded_now(slot: &std::sync::Mutex<BridgeStatus>, class: &'static str) {
    let mut s = status_slot(slot);
    let since = match *s {
        BridgeStatus::Degraded { since, .. } => since,
        _ => crate::time::now_secs(),
    };
    *s = BridgeStatus::Degraded { class, since };
}

/// Running, or unavailable (kept from the first failure of the outage).
pub fn set_status(slot: &std::sync::Mutex<BridgeStatus>, ok: bool) {
    let mut s = status_slot(slot);
    if ok {
        *s = BridgeStatus::Running;
    } else if !matches!(*s, BridgeStatus::Unavailable { .. }) {
        *s = BridgeStatus::Unavailable {
            since: crate::time::now_secs(),
        };
    }
}

impl ArgusWake {
    /// Whether Argus can act now (its runtime answers and takes wakes). Its health line, which
    /// `health` shows, otherwise.
    pub fn not_acting(&self) -> Option<BridgeStatus> {
        let now = status(&self.argus_status);
        (now != BridgeStatus::Running).then_some(now)
    }

    /// Ask the link to stop every Argus daemon it caused and end, waiting at most `within`. False
    /// when it did not answer in time (each daemon left is logged by the link).
    pub async fn stop_link(&self, within: std::time::Duration) -> bool {
        let (done, answered) = tokio::sync::oneshot::channel();
        if self.tx.send(LinkRequest::Stop(done)).is_err() {
            return true;
        }
        matches!(tokio::time::timeout(within, answered).await, Ok(Ok(())))
    }

    /// The link's handles around `board` (see [`ArgusBoard::open`] and [`ArgusBoard::in_memory`]).
    pub fn new(board: ArgusBoard) -> (Arc<ArgusWake>, mpsc::UnboundedReceiver<LinkRequest>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let wake = ArgusWake {
            tx,
            wakes: AtomicU64::new(0),
            foreman_wakes: AtomicU64::new(0),
            foreman_calls: AtomicU64::new(0),
            foreman_failures: AtomicU64::new(0),
            argus_failures: Default::default(),
            argus_status: std::sync::Mutex::new(BridgeStatus::Starting),
            foreman_status: std::sync::Mutex::new(BridgeStatus::NotConfigured),
            foreman_runtime: std::sync::Mutex::new(None),
            board: Arc::new(board),
        };
        (Arc::new(wake), rx)
    }
}

impl WakeSink for ArgusWake {
    fn wake(&self, campaign_id: &str, reason: WakeReason, latest: Option<&Significant>) {
        self.wakes.fetch_add(1, Ordering::Relaxed);
        let _ = self.tx.send(LinkRequest::Wake(WakeRequest {
            campaign_id: campaign_id.to_string(),
            cause: WakeCause::Boundary(reason),
            latest: latest.cloned(),
            advice: None,
        }));
    }

    fn keep_answer(&self, campaign_id: &str, text: &str) -> std::io::Result<AnswerTo> {
        self.board
            .update(campaign_id, |r| r.pending_answer = Some(text.to_string()))
            .map_err(std::io::Error::other)?;
        Ok(AnswerTo::Argus)
    }

    fn significant(&self, campaign_id: &str, event: &Significant) {
        // Decision boundaries already wake Argus; Foreman is consulted on the rest. An attempt's
        // end is assessed once, on its evidence (whose advice rides with the end's own wake),
        // never on the state change that ended it.
        let consulted = match event {
            Significant::StateChanged { remote_state, .. } => !matches!(
                remote_state.view(),
                argus_machines::AttemptView::Terminal(_)
            ),
            Significant::EvidenceReady { .. } => true,
            _ => false,
        };
        if consulted {
            let _ = self.tx.send(LinkRequest::Consult {
                campaign_id: campaign_id.to_string(),
                event: event.clone(),
            });
        }
    }
}
