//! The explored machine as data: concrete transitions and the abstract graph drawn from them.
//! Exploration produces it; the invariant checker and the renderers read it.

use crate::model::*;
use crate::names::StateName;
use crate::record::CampaignRecord;
use std::collections::BTreeSet;

/// One concrete step: the record before, the event, the record after, the actions emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub from: CampaignRecord,
    pub event: Event,
    pub to: CampaignRecord,
    pub actions: Vec<Action>,
}

/// An abstract edge of the drawn graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: StateName,
    pub to: StateName,
    pub event: String,
    pub actions: BTreeSet<String>,
    /// The edge emits a call that needs the lease (submit, cancel, intervene, renew, release).
    pub writes: bool,
}

#[derive(Debug, Clone)]
pub struct Graph {
    pub initial: StateName,
    pub states: BTreeSet<StateName>,
    /// State-changing edges, merged per (from, to, event).
    pub edges: BTreeSet<Edge>,
}
