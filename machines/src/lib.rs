//! `argus-machines`: the pure half of argus-supervisor. It decides; it never acts.
//!
//! The campaign machine takes an [`Event`] (a remote observation, a lease answer, a write outcome, an
//! operator command, a clock tick carrying `now`) and returns a [`Step`]: the new state and the
//! [`Action`]s the shell must perform after persisting it. This crate has no I/O, no clock, no
//! randomness and no async runtime, which is what makes [`explore`] able to enumerate every edge,
//! the diagrams reproducible, and the forbidden-transition suite ([`invariants`]) exhaustive.
//!
//! The public surface is small on purpose: the vocabulary ([`model`]), the machine
//! ([`CampaignMachine`], [`StateName`]), its persisted form ([`CampaignRecord`]), the explored graph
//! and its renderings, and the invariant checker.

#![warn(missing_docs, unreachable_pub)]

mod campaign;
pub mod explore;
pub mod graph;
pub mod invariants;
mod machine;
pub mod model;
mod names;
mod record;
pub mod render;
mod verbs;
pub mod views;

pub use campaign::Memory;
pub use machine::{admission, allowed_actions, CampaignMachine, Deadline, Step, Undo};
pub use model::*;
pub use names::{StateName, Superstate};
pub use record::{CampaignRecord, RecordError, RecordV1, StateRecord, SCHEMA_VERSION};
pub use verbs::{Admission, RemoteCan, Takes, Verb, VerbRow};
