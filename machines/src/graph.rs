//! The explored machine as data: concrete transitions and the abstract graph drawn from them.
//! Exploration produces it; the invariant checker and the renderers read it.

use crate::model::*;
use crate::names::StateName;
use crate::record::CampaignRecord;
use std::collections::BTreeSet;

/// One concrete step: the record before, the event, the record after, the actions emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The record before the event.
    pub from: CampaignRecord,
    /// The event stepped.
    pub event: Event,
    /// The record after the event.
    pub to: CampaignRecord,
    /// The actions the step emitted.
    pub actions: Vec<Action>,
}

/// An abstract edge of the drawn graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The state the edge leaves.
    pub from: StateName,
    /// The state the edge enters.
    pub to: StateName,
    /// The event's label.
    pub event: String,
    /// The labels of the actions emitted on the edge.
    pub actions: BTreeSet<String>,
    /// The edge emits a call that needs the lease (submit, cancel, intervene, renew, release).
    pub writes: bool,
}

/// The drawn graph: states and the state-changing edges between them.
#[derive(Debug, Clone)]
pub struct Graph {
    /// The state a new campaign starts in.
    pub initial: StateName,
    /// Every state drawn.
    pub states: BTreeSet<StateName>,
    /// State-changing edges, merged per (from, to, event).
    pub edges: BTreeSet<Edge>,
}
