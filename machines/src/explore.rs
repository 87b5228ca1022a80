//! Exhaustive exploration of the campaign machine: the single source of the diagrams and of the
//! forbidden-transition suite.
//!
//! Two sweeps feed one list of concrete [`Transition`]s:
//! 1. every state, restored with representative data, × every event of the alphabet;
//! 2. a breadth-first search from the initial state over the same alphabet (this is what proves that
//!    every state is reachable).
//!
//! The abstract [`Graph`] (state names, event labels, action labels) is derived from those transitions
//! and is what the renderers draw. Everything is sorted, so output is deterministic.

use crate::campaign::{Campaign, Memory, State};
use crate::invariants::{check_graph, check_restore, check_transition, Violation, Witnessed};
use crate::machine::CampaignMachine;
use crate::model::*;
use crate::names::StateName;
use crate::record::{CampaignRecord, StateRecord};
use crate::verbs::Verb;
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

pub use crate::graph::{Edge, Graph, Transition};
pub use inputs::{
    alphabet, policy, representative_states, CAMPAIGN, EPOCH, EXPIRES, NOW, OTHER, US,
};

mod inputs;

/// The result of exploring the machine.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// The policy the machine was explored with.
    pub policy: Policy,
    /// Sweep 1's transitions, plus the first witness of every abstract edge the search found.
    pub transitions: Vec<Transition>,
    /// How many concrete transitions were checked against the invariants (both sweeps).
    pub checked: usize,
    /// Per-transition invariant violations found during the walk (empty for a correct machine).
    pub violations: Vec<Violation>,
    /// Every restore of a representative record: (the record, the restored record, entry actions).
    pub restores: Vec<(CampaignRecord, CampaignRecord, Vec<Action>)>,
    /// Leaf states reached from the initial state by the breadth-first search.
    pub reachable: BTreeSet<StateName>,
    /// Distinct concrete configurations visited by the search.
    pub configurations: usize,
    /// The abstract graph drawn from the transitions.
    pub graph: Graph,
}

/// Cap on the breadth-first search (it converges far below this; the cap only bounds a mutant).
const MAX_CONFIGURATIONS: usize = 200_000;

fn machine_at(state: State, memory: Memory) -> CampaignMachine {
    let mut campaign = Campaign::new(ControllerId::new(US), policy());
    campaign.memory = memory;
    CampaignMachine::at(CAMPAIGN.to_string(), campaign, state).0
}

/// A deliberate defect planted in the machine, to prove the checker catches it without trusting the
/// machine's own memory. Each deletes one line of `campaign.rs` in effect: after every step the
/// named part of the campaign memory is put back to what it was before the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regression {
    /// `self.memory.highest_epoch = lease.epoch;` deleted: the fencing floor never rises.
    ForgetFloor,
    /// The line that records a finished task deleted: finished attempts are forgotten.
    ForgetFinished,
}

fn step(
    machine: &CampaignMachine,
    event: &Event,
    regression: Option<Regression>,
) -> (CampaignMachine, Transition) {
    let mut next = machine.clone();
    let from = machine.record();
    let s = next.step(event);
    if let Some(r) = regression {
        let mut memory = next.memory().clone();
        match r {
            Regression::ForgetFloor => memory.highest_epoch = from.memory.highest_epoch,
            Regression::ForgetFinished => memory.finished.clone_from(&from.memory.finished),
        }
        next = next.with_memory(memory);
    }
    let t = Transition {
        from,
        event: event.clone(),
        to: next.record(),
        actions: s.actions,
    };
    (next, t)
}

/// The visited-set key of the search. The cursor of the last reading and the attempt counter are
/// left out: they multiply configurations without adding states, and sweep 1 already pairs every
/// state with readings that are stale, unchanged and new. Every transition taken is still checked.
/// The checker's own witness is part of the key: the same machine configuration reached with a
/// different history is checked again.
fn key(m: &CampaignMachine, seen: &Witnessed) -> (CampaignRecord, Witnessed) {
    let mut r = m.record();
    r.memory.attempts = r.memory.attempts.min(1);
    r.memory.last_seen = None;
    r.memory.finished.sort();
    // Past the threshold another failed read changes nothing but the count (capped, so the
    // record stays small); only how they fail still matters.
    r.memory.read_failures = r
        .memory
        .read_failures
        .min(policy().unavailable_threshold + 1);
    if let StateRecord::RemoteUnavailable { failures, .. }
    | StateRecord::AuthRefused { failures, .. }
    | StateRecord::RemoteError { failures, .. }
    | StateRecord::TaskNotFound { failures, .. } = &mut r.state
    {
        *failures = (*failures).min(policy().unavailable_threshold + 1);
    }
    (r, seen.clone())
}

/// Explore the campaign machine.
pub fn explore() -> Exploration {
    explore_with(None)
}

/// Explore the machine, optionally with a planted [`Regression`] (tests prove the checker finds it).
pub fn explore_with(regression: Option<Regression>) -> Exploration {
    let events = alphabet();
    let policy = self::policy();
    let mut transitions = vec![];
    let mut violations = vec![];
    let mut checked = 0usize;
    let mut witnessed: BTreeSet<(StateName, StateName, String, Vec<String>)> = BTreeSet::new();

    // Sweep 1: every representative state × every event. The checker's witness is the
    // representative data this module built by hand, not anything the machine computed.
    let mut restores = vec![];
    for (state, memory) in representative_states() {
        let seen = Witnessed::assumed(memory.highest_epoch, memory.finished.iter().cloned());
        let m = machine_at(state, memory);
        for e in &events {
            let t = step(&m, e, regression).1;
            checked += 1;
            violations.extend(check_transition(&t, &policy, &seen));
            witnessed.insert(abstract_key(&t));
            transitions.push(t);
        }
        let rec = m.record();
        if let Ok((restored, entry)) = CampaignMachine::restore(&rec, policy) {
            restores.push((rec, restored.record(), entry));
        }
    }

    // Sweep 2: breadth-first search from the initial state, the checker learning along each path.
    let initial = CampaignMachine::new(CAMPAIGN, ControllerId::new(US), policy);
    let mut seen_configurations = HashSet::new();
    let mut reachable = BTreeSet::new();
    let mut queue = VecDeque::new();
    seen_configurations.insert(key(&initial, &Witnessed::default()));
    queue.push_back((initial, Witnessed::default()));
    while let Some((m, seen)) = queue.pop_front() {
        reachable.insert(m.state_name());
        for e in &events {
            let (next, t) = step(&m, e, regression);
            checked += 1;
            violations.extend(check_transition(&t, &policy, &seen));
            let mut learned = seen.clone();
            learned.learn(&t);
            if witnessed.insert(abstract_key(&t)) {
                transitions.push(t);
            }
            if seen_configurations.len() < MAX_CONFIGURATIONS
                && seen_configurations.insert(key(&next, &learned))
            {
                queue.push_back((next, learned));
            }
        }
    }

    let graph = graph_of(&transitions);
    Exploration {
        policy,
        transitions,
        checked,
        violations,
        restores,
        reachable,
        configurations: seen_configurations.len(),
        graph,
    }
}

/// What a campaign reaches against a remote that offers only `can`: a breadth-first search from
/// the initial state where the remote answers only what can be asked of it (readings and failed
/// reads always; lease and write answers only if it offers the lease), and an operator's verb is
/// stepped only when [`admission`](crate::admission) admits it — a verb refused before the
/// machine is asked is counted, and changes nothing. `check` is given every configuration
/// reached, with the verbs refused there as incapable.
pub fn explore_gated(
    can: crate::RemoteCan,
    mut check: impl FnMut(&CampaignMachine, &[Verb]),
) -> Gated {
    let policy = self::policy();
    let events: Vec<Event> = alphabet()
        .into_iter()
        .filter(|e| match e {
            Event::Observed(_) | Event::PollFailed(_) | Event::Tick { .. } => true,
            Event::Operator(_) | Event::Validated { .. } => true,
            // Answers to lease calls and writes: only from a remote that can be asked them.
            _ => can.claim,
        })
        .collect();
    let verb_of = |e: &Event| match e {
        Event::Operator(c) => Some(c.verb()),
        Event::Validated { verdict } => Some(verdict.verb()),
        _ => None,
    };
    let initial = CampaignMachine::new(CAMPAIGN, ControllerId::new(US), policy);
    let mut gated = Gated::default();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::new();
    seen.insert(key(&initial, &Witnessed::default()));
    queue.push_back(initial);
    while let Some(m) = queue.pop_front() {
        gated.reachable.insert(m.state_name());
        let record = m.record();
        let incapable: Vec<Verb> = Verb::ALL
            .into_iter()
            .filter(|v| crate::admission(&record, policy, *v, can) == crate::Admission::Incapable)
            .collect();
        check(&m, &incapable);
        for e in &events {
            if let Some(v) = verb_of(e) {
                if crate::admission(&record, policy, v, can) != crate::Admission::Admitted {
                    gated.refused += 1;
                    continue;
                }
            }
            let (next, t) = step(&m, e, None);
            if seen.len() < MAX_CONFIGURATIONS && seen.insert(key(&next, &Witnessed::default())) {
                queue.push_back(next);
            }
            gated.transitions.push(t);
        }
    }
    gated
}

/// What [`explore_gated`] found.
#[derive(Debug, Default)]
pub struct Gated {
    /// Leaf states reached.
    pub reachable: BTreeSet<StateName>,
    /// Every transition taken.
    pub transitions: Vec<Transition>,
    /// Verbs refused before the machine was asked (forbidden in the state, or incapable).
    pub refused: usize,
}

fn abstract_key(t: &Transition) -> (StateName, StateName, String, Vec<String>) {
    let actions = t.actions.iter().map(Action::label).collect();
    (
        t.from.state.state_name(),
        t.to.state.state_name(),
        t.event.label(),
        actions,
    )
}

/// Abstract the concrete transitions into the drawn graph.
pub fn graph_of(transitions: &[Transition]) -> Graph {
    let mut merged: BTreeMap<(StateName, StateName, String), (BTreeSet<String>, bool)> =
        BTreeMap::new();
    for t in transitions {
        if t.from.state.state_name() == t.to.state.state_name() {
            continue;
        }
        let entry = merged
            .entry((
                t.from.state.state_name(),
                t.to.state.state_name(),
                t.event.label(),
            ))
            .or_default();
        for a in &t.actions {
            entry.0.insert(a.label());
            entry.1 |= a.needs_lease().is_some();
        }
    }
    let edges = merged
        .into_iter()
        .map(|((from, to, event), (actions, writes))| Edge {
            from,
            to,
            event,
            actions,
            writes,
        })
        .collect();
    Graph {
        initial: StateName::Detached,
        states: StateName::ALL.into_iter().collect(),
        edges,
    }
}

/// Everything: every transition, every restore, and the graph. Empty means all rules hold.
pub fn check_all(x: &Exploration) -> Vec<Violation> {
    let mut out = x.violations.clone();
    for (before, after, entry) in &x.restores {
        out.extend(check_restore(before, after, entry));
    }
    out.extend(check_graph(
        &x.graph,
        &x.reachable,
        &x.transitions,
        &x.policy,
    ));
    out
}
