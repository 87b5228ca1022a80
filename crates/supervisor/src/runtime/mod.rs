//! The supervisor runtime: campaigns, their drivers and heartbeats, recovery from disk.
//!
//! The [`Runtime`] owns the set of supervised campaigns: one driver task each (see [`driver`]),
//! a shared limit on concurrent remote calls, the configuration the machines decide with, and
//! startup recovery. Recovery goes through `CampaignMachine::restore`: controllers come back
//! confirming with `read_control`, in-flight writes come back ambiguous and are read back, and
//! nothing is reacquired blindly. Nothing acts on a campaign except through its driver.
//!
//! One file per job: [`config`] (pacing), [`stats`] (counters), [`document`] (the persisted
//! campaign document and its upgrade), [`command`] (what an operator asks), [`reply`] (what a
//! campaign answers), [`shared`] (what every driver shares), [`handle`] (the runtime itself),
//! [`recover`] (reading a campaign back at a start, and starting its driver), [`driver`] (one
//! campaign's loop), [`inbox`] (what a driver is given), [`ledger`] (what to record after a step
//! or an input, decided without I/O) and [`journal`] (performing it, and the snapshot it
//! publishes), [`reduce`] and [`messages`] (significant events and the human feed).

pub(crate) mod command;
pub(crate) mod config;
mod core;
pub(crate) mod document;
pub(crate) mod driver;
pub(crate) mod handle;
pub(crate) mod inbox;
pub(crate) mod journal;
pub(crate) mod ledger;
pub mod messages;
mod recover;
pub mod reduce;
pub mod reply;
pub(crate) mod shared;
pub(crate) mod stats;

pub use command::{Actor, OperatorCommand};
pub use config::{PacingError, RuntimeConfig};
pub use core::CrashPoint;
pub(crate) use document::resolving;
pub use document::{
    upgrade_state_root, AnswerSummary, ArtifactSummary, AttemptRecord, CampaignDoc,
    EvidenceSummary, QuestionSource, MAX_ATTEMPT_RECORDS, MAX_PATH, MAX_RECENT_EVENTS,
    OBJECTIVE_MAX_BYTES,
};
pub use handle::{CampaignHandle, Runtime, RuntimeError};
pub use shared::FeedNews;
pub use stats::{NoticeMode, NoticeView, Stats};
