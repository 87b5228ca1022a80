//! The remote as `serve` holds it: discovered in the background, re-read on a schedule and before
//! every claim and write, and trusted to mutate only while its card stays verified.
//!
//! This module owns the "discovery is a claim" rule: the agent card is not
//! trusted for the life of the process. Until the first discovery succeeds every call fails locally
//! (`unavailable`, nothing sent), so the daemon can serve its API and recover campaigns at once. A
//! changed card is recorded; one that removes the extension, turns off an enforcement flag, drops an
//! operation or differs from a pinned hash puts the remote in `quarantined_pending_review`: from
//! then on no mutation leaves this process (releases still may), and one notice names the change.
//! It must never let a write through while quarantined or before discovery.

use super::{now_secs, A2aClient, Compatibility, HttpConfig, Method, OpStatus};
use crate::control::{Gate, RemoteError, Request, Response, StreamBounds, Transport, Updates};
use crate::qualification::{Book, Qualification, QualificationStatus};
use argus_machines::{RemoteCondition, TaskId};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::mpsc;

use crate::control::RemoteResult;

/// The operation name a card read is noted under.
const CARD: &str = "card";

/// Where discovery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Discovery {
    /// The card has not been read yet: every call fails here, nothing is sent.
    Undiscovered,
    Discovered,
    /// A card change took away what writes need: no mutation leaves the process.
    QuarantinedPendingReview,
}

/// How the remote answers now, judged from every call's outcome (reads, writes, card reads):
/// answering, or failing one way since a moment, once that many calls in a row failed so
/// ([`LiveRemote::with_outage_threshold`]). One answer in the contract's terms (a task it does
/// not know included) is the remote answering again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answering {
    Yes,
    No(RemoteCondition),
}

impl Answering {
    /// How it fails, if it does.
    pub fn failing(self) -> Option<RemoteCondition> {
        match self {
            Answering::Yes => None,
            Answering::No(c) => Some(c),
        }
    }

    /// As `health` and the logs spell it: `answering`, or the condition's name.
    pub fn name(self) -> &'static str {
        match self {
            Answering::Yes => "answering",
            Answering::No(RemoteCondition::Unreachable) => "unreachable",
            Answering::No(RemoteCondition::AuthRequired) => "auth_refused",
            Answering::No(RemoteCondition::Unusable) => "remote_error",
            Answering::No(RemoteCondition::TaskNotFound) => "task_not_found",
        }
    }
}

impl Answering {
    /// Every way the remote can be said to answer.
    pub const ALL: [Answering; 5] = [
        Answering::Yes,
        Answering::No(RemoteCondition::Unreachable),
        Answering::No(RemoteCondition::AuthRequired),
        Answering::No(RemoteCondition::Unusable),
        Answering::No(RemoteCondition::TaskNotFound),
    ];
}

impl Serialize for Answering {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Answering {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = Cow::<'de, str>::deserialize(d)?;
        Answering::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, &[]))
    }
}

/// A change of how the remote answers, told once (by `serve`, in the remote's feed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnsweringChange {
    pub from: Answering,
    /// When `from` began (Unix seconds).
    pub from_since: u64,
    pub to: Answering,
    /// When `to` began: the first failed call of the streak, or the answer that ended it.
    pub since: u64,
    /// The failed calls in a row behind `to`.
    pub failed_calls: u32,
    /// The safe class of the last failure.
    pub class: Option<&'static str>,
}

/// How the remote answers, as `health` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnsweringView {
    pub status: Answering,
    /// Since when (Unix seconds; `None` before any call).
    pub since: Option<u64>,
    /// Failed calls in a row now.
    pub failed_calls: u32,
    /// The safe class of the last failure, if the last call failed.
    pub last_error: Option<Cow<'static, str>>,
}

/// How a remote's times without a zone are read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimestampsView {
    /// The zone they are read in (`ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET`; `+00:00`: as UTC).
    pub naive_read_as: String,
    /// The remote wrote at least one (Agent Zero does: its local time).
    pub naive_seen: bool,
}

/// The tracker behind [`Answering`]: a streak of failures per operation, so a remote that
/// answers its lease calls and fails every task read is still failing (one operation's success
/// never hides another's errors; any answer does end an outage or a credentials refusal).
#[derive(Debug)]
struct Track {
    now: Answering,
    since: Option<u64>,
    /// Operations whose calls fail now: how, how many in a row, since when.
    failing: BTreeMap<&'static str, Streak>,
    last_error: Option<&'static str>,
    /// The last call's answer ended some failing streak (whether or not it changed how the remote
    /// is said to answer): the campaigns waiting on it may read now.
    recovered: bool,
}

#[derive(Debug, Clone, Copy)]
struct Streak {
    condition: RemoteCondition,
    calls: u32,
    since: u64,
}

impl Track {
    /// One call's outcome (`op`: which operation) at `at`; the change it makes, if any.
    fn note(
        &mut self,
        op: &'static str,
        failure: Option<(RemoteCondition, &'static str)>,
        at: u64,
        threshold: u32,
    ) -> Option<AnsweringChange> {
        self.since.get_or_insert(at);
        match failure {
            None => self.answered(op),
            Some((condition, class)) => self.failed(op, condition, class, at),
        }
        let (to, since, calls) = self.judged(failure.map(|(c, _)| c), at, threshold)?;
        let from = self.now;
        if from == to {
            return None;
        }
        let from_since = self.since.unwrap_or(at);
        self.now = to;
        self.since = Some(since);
        Some(AnsweringChange {
            from,
            from_since,
            to,
            since,
            failed_calls: calls,
            class: self.last_error.filter(|_| to != Answering::Yes),
        })
    }

    /// An answer from `op`: it proves the remote reachable, whatever the operation, and our
    /// credentials good unless it is the card's (A2A serves the card to anyone: a rotated token
    /// still reads it); an operation's own errors end only with its own success.
    fn answered(&mut self, op: &'static str) {
        let before = self.failing.len();
        self.failing.remove(op);
        let proves_credentials = op != CARD;
        self.failing.retain(|_, s| match s.condition {
            RemoteCondition::Unusable => true,
            RemoteCondition::AuthRequired => !proves_credentials,
            _ => false,
        });
        self.recovered = self.failing.len() < before;
    }

    /// A failure of `op`, counted in its streak (a streak that fails another way starts again).
    fn failed(
        &mut self,
        op: &'static str,
        condition: RemoteCondition,
        class: &'static str,
        at: u64,
    ) {
        self.last_error = Some(class);
        // Refused credentials or an error are answers too: the remote is reached.
        if condition != RemoteCondition::Unreachable {
            self.failing
                .retain(|_, s| s.condition != RemoteCondition::Unreachable);
        }
        let fresh = Streak {
            condition,
            calls: 0,
            since: at,
        };
        let streak = self.failing.entry(op).or_insert(fresh);
        if streak.condition != condition {
            *streak = fresh;
        }
        streak.calls = streak.calls.saturating_add(1);
    }

    /// How the remote answers now, given the last call failed as `failure` says: as its worst
    /// long-enough streak says (no answer at all first), answering once nothing fails, and
    /// `None` while it fails but not yet for long enough (as it was).
    fn judged(
        &mut self,
        failure: Option<RemoteCondition>,
        at: u64,
        threshold: u32,
    ) -> Option<(Answering, u64, u32)> {
        let rank = |c: RemoteCondition| match c {
            RemoteCondition::Unreachable => 0,
            RemoteCondition::AuthRequired => 1,
            _ => 2,
        };
        let worst = self
            .failing
            .values()
            .filter(|s| s.calls >= threshold.max(1))
            .min_by_key(|s| (rank(s.condition), s.since))
            .copied();
        if worst.is_none() && self.failing.is_empty() {
            self.last_error = None;
        }
        let reached = !self
            .failing
            .values()
            .any(|s| s.condition == RemoteCondition::Unreachable);
        match (worst, failure) {
            (Some(s), _) => Some((Answering::No(s.condition), s.since, s.calls)),
            (None, _) if self.failing.is_empty() => Some((Answering::Yes, at, 0)),
            // Said to be unreachable, and now answering, with an error or a refusal: what it
            // answers with is what it is now (it was reached), without waiting for the count.
            (None, Some(condition))
                if reached && self.now == Answering::No(RemoteCondition::Unreachable) =>
            {
                Some((Answering::No(condition), at, 1))
            }
            (None, _) => None,
        }
    }
}

/// What `health` shows of the remote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemoteView {
    pub state: Discovery,
    /// How the remote answers now (every call counts, not only discovery).
    pub answering: AnsweringView,
    /// Where the configured token travels (never the token): a 401's advice follows it.
    pub auth: super::AuthMode,
    /// The safe class of the last failed discovery or refresh.
    pub last_error: Option<Cow<'static, str>>,
    pub attempts: u64,
    pub compatibility: Option<Compatibility>,
    pub card_sha256: Option<String>,
    /// Unix seconds the card in use was fetched.
    pub card_retrieved_at: Option<u64>,
    pub dialect: Option<super::Dialect>,
    /// The protocol version the card itself states (a 0.2.5 card is spoken to as 0.3).
    pub card_protocol_version: Option<String>,
    /// How the remote's times without a zone are read, and whether it wrote any.
    pub timestamps: TimestampsView,
    pub mutation_enabled: bool,
    pub mutation_reason: String,
    /// What this supervisor is to the remote now, in words: an observer only (and why), a
    /// controller once qualified, or a controller.
    pub mode: String,
    /// Why mutation is disabled after a card change (what changed).
    pub quarantine: Option<String>,
    /// Card hashes seen after the first, with when.
    pub card_changes: Vec<(u64, String)>,
    pub operations: std::collections::BTreeMap<Method, OpStatus>,
    /// What the supervisor can do with the remote now (`observe`, `claim`, `renew`, `release`,
    /// `submit`, `intervene`, `cancel`, `readback`).
    pub can: Vec<Cow<'static, str>>,
    /// What `qualify` found for this remote and its current card (`passed`, `failed`, `none`).
    pub qualification: Qualification,
    /// `ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION`: claims and new writes wait for `passed`.
    pub qualification_required: bool,
}

/// The live remote: an `A2aClient` once discovered, swapped on each refresh.
pub struct LiveRemote {
    http: HttpConfig,
    /// `ARGUS_SUPERVISOR_EXPECTED_CARD_SHA256`: any other card is quarantined.
    expected_sha256: Option<String>,
    client: RwLock<Option<Arc<A2aClient>>>,
    view: Mutex<RemoteView>,
    /// Told once when the remote becomes quarantined (the daemon releases leases and notifies).
    quarantined_tx: Mutex<Option<mpsc::UnboundedSender<String>>>,
    /// Where `qualify` keeps its records for this remote (`None`: no state root to read).
    book: Option<Book>,
    /// Whether claims and new writes wait for a passing record.
    require_qualification: bool,
    /// Every call to the remote, counted across the clients a card change replaces.
    calls: Arc<super::CallCounts>,
    /// How the remote answers, from every call's outcome.
    answering: Mutex<Track>,
    /// Calls failing the same way in a row before the remote is said to fail so.
    outage_threshold: u32,
    /// Told each change of how the remote answers.
    answering_tx: Mutex<Option<mpsc::UnboundedSender<AnsweringChange>>>,
    /// Notified when an answer ends a failing streak (the remote answers again, said or not).
    answered: tokio::sync::Notify,
}

impl LiveRemote {
    pub fn new(http: HttpConfig, expected_sha256: Option<String>) -> Self {
        let auth = http.auth_mode();
        let naive_read_as = crate::time::offset_name(http.naive_time_offset_secs);
        LiveRemote {
            http,
            expected_sha256: expected_sha256.map(|s| s.trim().to_ascii_lowercase()),
            client: RwLock::new(None),
            view: Mutex::new(RemoteView {
                state: Discovery::Undiscovered,
                answering: AnsweringView {
                    status: Answering::Yes,
                    since: None,
                    failed_calls: 0,
                    last_error: None,
                },
                auth,
                last_error: None,
                attempts: 0,
                compatibility: None,
                card_sha256: None,
                card_retrieved_at: None,
                dialect: None,
                card_protocol_version: None,
                timestamps: TimestampsView {
                    naive_read_as,
                    naive_seen: false,
                },
                mutation_enabled: false,
                mutation_reason: "not discovered yet".into(),
                mode: String::new(),
                quarantine: None,
                card_changes: vec![],
                operations: Default::default(),
                can: vec![],
                qualification: Qualification::unknown(),
                qualification_required: false,
            }),
            quarantined_tx: Mutex::new(None),
            book: None,
            require_qualification: false,
            calls: Arc::default(),
            answering: Mutex::new(Track {
                now: Answering::Yes,
                since: None,
                failing: BTreeMap::new(),
                last_error: None,
                recovered: false,
            }),
            outage_threshold: 3,
            answering_tx: Mutex::new(None),
            answered: tokio::sync::Notify::new(),
        }
    }

    /// Calls failing the same way in a row before the remote is said to fail so (the machines'
    /// `unavailable_threshold`, so the remote and its campaigns agree).
    pub fn with_outage_threshold(mut self, calls: u32) -> Self {
        self.outage_threshold = calls.max(1);
        self
    }

    /// Where to say each change of how the remote answers.
    pub fn on_answering(&self, tx: mpsc::UnboundedSender<AnsweringChange>) {
        *self.answering_tx.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
    }

    /// Wait until an answer ends a failing streak: the remote answers again, whether or not
    /// enough calls had failed for an outage to be said (a campaign's own backoff may have
    /// grown meanwhile).
    pub async fn answered_again(&self) {
        self.answered.notified().await;
    }

    /// How the remote answers now.
    pub fn answering(&self) -> AnsweringView {
        let t = self.answering.lock().unwrap_or_else(|p| p.into_inner());
        AnsweringView {
            status: t.now,
            since: t.since,
            failed_calls: t.failing.values().map(|s| s.calls).max().unwrap_or(0),
            last_error: t.last_error.map(Cow::Borrowed),
        }
    }

    /// Note one call's outcome (`op`: which operation); a change of how the remote answers is
    /// told once.
    fn noted<T>(&self, op: &'static str, result: RemoteResult<T>) -> RemoteResult<T> {
        self.note(op, result.as_ref().err());
        result
    }

    /// Note one call's outcome by its error, if any.
    fn note(&self, op: &'static str, error: Option<&RemoteError>) {
        let failure = match error {
            None => None,
            // Refused here before sending: it says nothing of the remote.
            Some(e) if e.never_left() => return,
            Some(e) => e.remote_failure().map(|c| (c, e.class())),
        };
        let (change, recovered) = {
            let mut track = self.answering.lock().unwrap_or_else(|p| p.into_inner());
            let change = track.note(op, failure, now_secs(), self.outage_threshold);
            (change, std::mem::take(&mut track.recovered))
        };
        if recovered {
            self.answered.notify_one();
        }
        if let Some(change) = change {
            match change.to {
                Answering::Yes => {
                    tracing::info!(was = change.from.name(), "the remote answers again")
                }
                to => tracing::warn!(
                    status = to.name(),
                    class = change.class,
                    calls = change.failed_calls,
                    "the remote is failing"
                ),
            }
            if let Some(tx) = &*self.answering_tx.lock().unwrap_or_else(|p| p.into_inner()) {
                let _ = tx.send(change);
            }
        }
    }

    /// The remote's call counts (for `metrics`).
    pub fn calls(&self) -> Arc<super::CallCounts> {
        self.calls.clone()
    }

    /// Read qualification records from `book`, and with `required`, refuse claims and new writes
    /// here (`unqualified_remote`) unless the current card has a passing one.
    pub fn with_qualification(mut self, book: Book, required: bool) -> Self {
        self.book = Some(book);
        self.require_qualification = required;
        self
    }

    /// The qualification of the card with this hash, from the record `qualify` kept.
    fn qualification(&self, card_sha256: &str) -> Qualification {
        match &self.book {
            Some(book) => book.status(card_sha256),
            None => Qualification::unknown(),
        }
    }

    /// Where to say, once, that the remote was quarantined (and why).
    pub fn on_quarantine(&self, tx: mpsc::UnboundedSender<String>) {
        *self
            .quarantined_tx
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(tx);
    }

    pub fn view(&self) -> RemoteView {
        let mut v = self.view.lock().unwrap_or_else(|p| p.into_inner()).clone();
        v.answering = self.answering();
        v.qualification_required = self.require_qualification;
        v.mode = self.mode(&v);
        if let Some(c) = self.current() {
            v.timestamps.naive_seen = c.naive_times_seen();
            v.qualification = self.qualification(&c.card().sha256);
            v.operations = c.operations();
            v.can = if v.quarantine.is_some() {
                c.can()
                    .into_iter()
                    .filter(|a| *a == "observe")
                    .map(Cow::Borrowed)
                    .collect()
            } else {
                c.can().into_iter().map(Cow::Borrowed).collect()
            };
            v.compatibility = Some(if v.quarantine.is_some() {
                Compatibility::QuarantinedPendingReview
            } else {
                c.compatibility()
            });
        }
        v
    }

    /// What this supervisor is to the remote, from its card as read (said the same before and
    /// after `qualify`: the card alone decides whether it is an observer only).
    fn mode(&self, v: &RemoteView) -> String {
        let Some(c) = self.current() else {
            return "not known yet: the agent card has not been read".into();
        };
        if let Some(q) = &v.quarantine {
            return format!("observer only until an operator reviews the card's change ({q}): tasks are read, nothing is written");
        }
        let mutation = c.mutation();
        if !mutation.enabled {
            return format!(
                "observer only: OpenTraining offers no campaign control ({}); tasks are read, nothing is written",
                mutation.reason
            );
        }
        let q = self.qualification(&c.card().sha256);
        if self.require_qualification && q.status != QualificationStatus::Passed {
            return format!(
                "controller once qualified: claims and writes wait for `argus-supervisor qualify` to pass for this card ({})",
                q.detail
            );
        }
        "controller: claims and writes go under a lease the remote enforces".into()
    }

    fn current(&self) -> Option<Arc<A2aClient>> {
        self.client
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Discover (or re-read) the card. The first success makes the remote usable; a later card that
    /// differs is judged, and may quarantine the remote.
    pub async fn refresh(&self) -> Result<(), RemoteError> {
        let discovered = self.noted(
            CARD,
            A2aClient::discover_counting(&self.http, self.calls.clone()).await,
        );
        let fresh = match discovered {
            Ok(c) => c,
            Err(e) => {
                let mut v = self.view.lock().unwrap_or_else(|p| p.into_inner());
                v.attempts += 1;
                v.last_error = Some(Cow::Borrowed(e.class()));
                return Err(e);
            }
        };
        let old = self.current();
        let quarantine = self.judge(old.as_deref(), &fresh);
        let newly_quarantined;
        {
            let mut v = self.view.lock().unwrap_or_else(|p| p.into_inner());
            v.attempts += 1;
            v.last_error = None;
            if old
                .as_ref()
                .is_some_and(|o| o.card().sha256 != fresh.card().sha256)
            {
                v.card_changes
                    .push((now_secs(), fresh.card().sha256.clone()));
                tracing::warn!(card_sha256 = %fresh.card().sha256, "the remote's agent card changed");
            }
            // Once quarantined, only an operator's review (a restart) lifts it.
            newly_quarantined = quarantine.is_some() && v.quarantine.is_none();
            if let Some(q) = &quarantine {
                v.quarantine.get_or_insert(q.clone());
            }
            let mutation = fresh.mutation();
            v.state = if v.quarantine.is_some() {
                Discovery::QuarantinedPendingReview
            } else {
                Discovery::Discovered
            };
            v.card_sha256 = Some(fresh.card().sha256.clone());
            v.card_retrieved_at = Some(fresh.card().retrieved_at);
            v.dialect = Some(fresh.dialect());
            v.card_protocol_version = fresh.card().protocol_version.clone();
            v.mutation_enabled = mutation.enabled && v.quarantine.is_none();
            v.mutation_reason = match &v.quarantine {
                Some(q) => format!("quarantined pending review: {q}"),
                None => mutation.reason.to_string(),
            };
        }
        // An unchanged card keeps the client in use: what it learned of each operation (a -32601)
        // stays learned.
        if old
            .as_ref()
            .is_none_or(|o| o.card().sha256 != fresh.card().sha256)
        {
            *self.client.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(fresh));
        }
        if newly_quarantined {
            if let Some(q) = quarantine {
                tracing::error!(reason = %q, "CRITICAL: remote quarantined pending review; mutation disabled");
                if let Some(tx) = &*self
                    .quarantined_tx
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                {
                    let _ = tx.send(q);
                }
            }
        }
        Ok(())
    }

    /// Why a discovered card must be quarantined: it is not the pinned one, or it changed from
    /// the one in use in a way that is not allowed.
    fn judge(&self, old: Option<&A2aClient>, fresh: &A2aClient) -> Option<String> {
        let mut quarantine = None;
        if let Some(pin) = &self.expected_sha256 {
            if fresh.card().sha256 != *pin {
                quarantine = Some(format!(
                "the agent card's hash {} is not the pinned ARGUS_SUPERVISOR_EXPECTED_CARD_SHA256",
                fresh.card().sha256
            ));
            }
        }
        if let Some(old) = old {
            if old.card().sha256 != fresh.card().sha256 && quarantine.is_none() {
                quarantine = judge_change(old, fresh);
            }
        }
        quarantine
    }

    /// The client, for a read.
    fn reader(&self) -> RemoteResult<Arc<A2aClient>> {
        self.current().ok_or(RemoteError::Unavailable)
    }

    /// Refused locally once the remote is quarantined pending review.
    fn not_quarantined(&self) -> RemoteResult<()> {
        let quarantined = self
            .view
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .quarantine
            .is_some();
        if quarantined {
            return Err(RemoteError::CardNotQualified(
                "remote quarantined pending review",
            ));
        }
        Ok(())
    }

    /// The client, for new work (a claim, a submit, an intervention, a cancel): the card is read
    /// again first — no cache: writes are rare and each is worth one small GET, so a card that
    /// dropped the extension, an enforcement flag or an operation a moment ago never receives
    /// the write. Refused locally when the card cannot be re-read, is quarantined, or does not
    /// enable campaign control; each operation then checks that the card offers it.
    async fn writer(&self) -> RemoteResult<Arc<A2aClient>> {
        if self.current().is_some() {
            if let Err(e) = self.refresh().await {
                return Err(card_reread_refusal(e));
            }
        }
        let c = self.reader()?;
        self.not_quarantined()?;
        if !c.mutation().enabled {
            return Err(RemoteError::CapabilityUnavailable("campaign control"));
        }
        if self.require_qualification
            && self.qualification(&c.card().sha256).status != QualificationStatus::Passed
        {
            return Err(RemoteError::Unqualified);
        }
        Ok(c)
    }
}

/// Why a write is refused when the card could not be re-read before it (nothing of the write was
/// sent either way). An outage — no connection, a timeout, a dropped connection, a 5xx or 429 — is
/// the remote being unavailable, said as such: the card is not judged on an answer that never
/// came, and the same write goes once the remote is back. Refused credentials are the remote's
/// refusal. Only an answer that is not a usable card (not JSON, too large, a redirect, a 4xx)
/// makes the card not qualify.
fn card_reread_refusal(e: RemoteError) -> RemoteError {
    match e {
        RemoteError::Tls(_) | RemoteError::AuthFailed => e,
        _ if e.is_no_answer() => RemoteError::Unavailable,
        _ => RemoteError::CardNotQualified("the agent card could not be re-read before the write"),
    }
}

/// What a new card takes away that the old one had: the extension, an enforcement flag, or an
/// operation. `None` when the change is benign (a new version, a new description).
fn judge_change(old: &A2aClient, new: &A2aClient) -> Option<String> {
    let (Some(o), n) = (&old.card().extension, &new.card().extension) else {
        return None;
    };
    let Some(n) = n else {
        return Some("the campaign-control extension is no longer advertised".into());
    };
    if !(n.lease_epoch_enforced && n.policy_enforced) {
        return Some("lease or policy enforcement is no longer advertised".into());
    }
    let removed: Vec<String> = o
        .operations
        .iter()
        .filter(|(op, method)| n.operations.get(op) != Some(method))
        .map(|(op, _)| format!("{op:?}"))
        .collect();
    (!removed.is_empty()).then(|| format!("operations changed or removed: {}", removed.join(", ")))
}

impl Transport for LiveRemote {
    /// Through the card read now, under the gate the request needs: new work waits for a
    /// card read again and qualified; keeping a lease held, for a remote not quarantined; a read
    /// or a release, for a card at all. What became of it is noted (how the remote answers).
    async fn call(&self, request: Request) -> Response {
        let client = match request.gate() {
            Gate::NewWork => self.writer().await,
            Gate::Keep => self.not_quarantined().and_then(|()| self.reader()),
            Gate::Read => self.reader(),
        };
        let name = request.name();
        let response = match client {
            Ok(c) => c.call(request).await,
            Err(e) => request.refused(e),
        };
        self.note(name, response.error());
        response
    }
    fn streams(&self) -> bool {
        self.current().is_some_and(|c| c.streams())
    }
    /// What the card offers now, and why no new work may go at all where none may: before the
    /// first discovery, while quarantined, or (where qualification is required) without a
    /// passing record for the current card.
    fn ability(&self) -> crate::control::RemoteAbility {
        let Some(c) = self.current() else {
            // Its card unread, what it offers is not known: nothing new goes until it is.
            return crate::control::RemoteAbility {
                can: argus_machines::RemoteCan::EVERYTHING,
                writes_refused: Some(RemoteError::Unavailable),
            };
        };
        let writes_refused = if let Err(e) = self.not_quarantined() {
            Some(e)
        } else if self.answering().status == Answering::No(RemoteCondition::Unreachable) {
            // What `health` says: no write is tried while the remote answers nothing.
            Some(RemoteError::Unavailable)
        } else if self.require_qualification
            && c.mutation().enabled
            && self.qualification(&c.card().sha256).status != QualificationStatus::Passed
        {
            Some(RemoteError::Unqualified)
        } else {
            None
        };
        crate::control::RemoteAbility {
            can: c.remote_can(),
            writes_refused,
        }
    }
    /// Read the card again (a failed read leaves the last card in use, and is noted as any
    /// call is). A quarantine stays until an operator's review: a re-read does not lift it.
    async fn reread_card(&self) {
        if let Err(e) = self.refresh().await {
            tracing::debug!(
                class = e.class(),
                "the card could not be read again before a verb"
            );
        }
    }
    async fn subscribe(&self, task: &TaskId, bounds: StreamBounds) -> RemoteResult<Updates> {
        self.reader()?.subscribe(task, bounds).await
    }
}

#[cfg(test)]
mod tests;
