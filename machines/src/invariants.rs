//! The forbidden-transition checker: the eight invariants of docs/architecture.md, stated over concrete transitions
//! and over the explored graph.
//!
//! The checker is independent of the machine's code: it looks only at records, events and actions.
//! That is what lets a test feed it hand-built bad transitions and prove each rule can fail.

use crate::graph::{Graph, Transition};
use crate::model::*;
use crate::names::StateName;
use crate::record::{CampaignRecord, StateRecord};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

/// One broken rule. `invariant` is its number in docs/architecture.md; 0 is a structural rule (reachability etc.).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The invariant of docs/architecture.md broken (0 for a graph-level finding).
    pub invariant: u8,
    /// What was seen, in words.
    pub message: String,
    /// The concrete transition that broke the rule, when there is one.
    pub witness: Option<Box<Transition>>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invariant {}: {}", self.invariant, self.message)
    }
}

fn v(invariant: u8, t: &Transition, what: &str) -> Violation {
    Violation {
        invariant,
        message: format!(
            "{} --{}--> {}: {what}",
            t.from.state.state_name().name(),
            t.event.label(),
            t.to.state.state_name().name()
        ),
        witness: Some(Box::new(t.clone())),
    }
}

/// What the checker has seen for itself along the path it checked: the highest epoch any grant it
/// checked put into Controlling, and the tasks it saw finish. Never read from the machine's memory,
/// so a machine that forgets its fencing floor or a finished attempt is still caught.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Witnessed {
    /// The highest epoch the machine ever entered Controlling under.
    pub highest_granted: u64,
    /// Tasks the machine moved to `RemoteTerminalLocalPending` for.
    pub finished: BTreeSet<TaskId>,
}

impl Witnessed {
    /// Start from hand-built state (sweep 1's representative records): the test's own input.
    pub fn assumed(highest_granted: u64, finished: impl IntoIterator<Item = TaskId>) -> Self {
        Witnessed {
            highest_granted,
            finished: finished.into_iter().collect(),
        }
    }

    /// Learn from a transition that has been checked.
    pub fn learn(&mut self, t: &Transition) {
        if t.to.state.is_controlling() {
            if let Some(l) = t.to.state.lease() {
                self.highest_granted = self.highest_granted.max(l.epoch);
            }
        }
        if t.to.state == StateName::RemoteTerminalLocalPending {
            if let Some(task) = t.to.state.task() {
                self.finished.insert(task.clone());
            }
        }
    }
}

/// Lease trouble that must end control from every `Controlling` substate (invariant 6).
pub fn is_lease_trouble(from: &CampaignRecord, event: &Event, policy: &Policy) -> bool {
    let Some(held) = from.state.lease().filter(|_| from.state.is_controlling()) else {
        return false;
    };
    match event {
        Event::LeaseRefused { .. } => true,
        Event::Written {
            outcome: WriteOutcome::Fenced,
            ..
        } => true,
        Event::Tick { now } => now.saturating_add(policy.expiry_margin) >= held.expires_at,
        Event::LeaseGranted { lease, now } => {
            lease.controller_id != held.controller_id
                || lease.epoch != held.epoch
                || lease.expires_at <= now.saturating_add(policy.expiry_margin)
        }
        Event::ControlRead { lease, .. } => lease
            .as_ref()
            .is_none_or(|l| l.controller_id != held.controller_id || l.epoch != held.epoch),
        _ => false,
    }
}

/// Per-transition rules: invariants 1, 2, 3 (direct edge), 4, 5, 6, 7. `seen` is what the checker
/// witnessed before this transition (see [`Witnessed`]); the caller learns `t` after checking it.
pub fn check_transition(t: &Transition, policy: &Policy, seen: &Witnessed) -> Vec<Violation> {
    let mut out = vec![];
    leased_calls(t, &mut out);
    controlling_entered(t, policy, seen, &mut out);
    let (from, to) = (&t.from, &t.to);
    // 3. ControlLost never steps straight into Controlling (graph rule covers longer paths).
    if from.state == StateName::ControlLost && to.state.is_controlling() {
        out.push(v(3, t, "ControlLost reached Controlling without a claim"));
    }
    ambiguous_write(t, &mut out);
    timed_out_write(t, &mut out);
    // 6. Lease trouble ends control from every Controlling substate.
    if is_lease_trouble(from, &t.event, policy) {
        let abandon = matches!(t.event, Event::Operator(Command::Abandon));
        if to.state != StateName::ControlLost && !abandon {
            out.push(v(6, t, "lease trouble did not lead to ControlLost"));
        }
    }
    closed_and_stale(t, seen, &mut out);
    out
}

/// Rule 1. Lease-needing calls only from Controlling, carrying that state's epoch.
fn leased_calls(t: &Transition, out: &mut Vec<Violation>) {
    let (from, to) = (&t.from, &t.to);
    // The one exception: a claim granted with a submit queued (`next-attempt`) sends it on the
    // grant's own transition, under the granted epoch (rule 2 checks the grant itself).
    let granted_now = from.state == StateName::Claiming
        && from.state.claim_then_submit().is_some()
        && to.state.is_controlling()
        && matches!(
            t.event,
            Event::LeaseGranted { .. } | Event::ControlRead { .. }
        );
    for a in &t.actions {
        if let Some(epoch) = a.needs_lease() {
            match (from.state.lease(), to.state.lease()) {
                (Some(l), _) if from.state.is_controlling() && l.epoch == epoch => {}
                (_, Some(l))
                    if granted_now
                        && l.epoch == epoch
                        && matches!(a, Action::Submit { request_id, .. } if Some(request_id) == from.state.claim_then_submit()) =>
                    {}
                _ => out.push(v(
                    1,
                    t,
                    &format!("{} emitted without the source state's lease", a.label()),
                )),
            }
        }
    }
}

/// Rule 2. Controlling entered only on a grant for our controller id, not below the fencing floor.
fn controlling_entered(
    t: &Transition,
    policy: &Policy,
    seen: &Witnessed,
    out: &mut Vec<Violation>,
) {
    let (from, to) = (&t.from, &t.to);
    if !from.state.is_controlling() && to.state.is_controlling() {
        // A confirmation must carry the epoch held before; a grant may raise it.
        let granted = match &t.event {
            Event::LeaseGranted { lease, now } if from.state == StateName::Claiming => {
                Some((lease, *now))
            }
            Event::ControlRead {
                lease: Some(lease),
                now,
            } if from.state == StateName::Claiming && from.state.claim_unresolved() => {
                Some((lease, *now))
            }
            Event::ControlRead {
                lease: Some(lease),
                now,
            } if from.state == StateName::Confirming
                && from
                    .state
                    .lease()
                    .is_some_and(|held| held.epoch == lease.epoch) =>
            {
                Some((lease, *now))
            }
            _ => None,
        };
        match granted {
            Some((l, now))
                if l.controller_id == from.controller_id
                    && l.epoch >= seen.highest_granted
                    && l.expires_at > now.saturating_add(policy.expiry_margin)
                    && to.state.lease() == Some(l) => {}
            _ => out.push(v(2, t, "entered Controlling without a valid grant for us")),
        }
    }
}

/// Rule 4. AmbiguousWrite never writes or claims, and leaves only on a readback answer or abandon.
fn ambiguous_write(t: &Transition, out: &mut Vec<Violation>) {
    let (from, to) = (&t.from, &t.to);
    if from.state == StateName::AmbiguousWrite {
        if t.actions
            .iter()
            .any(|a| a.needs_lease().is_some() || matches!(a, Action::Claim { .. }))
        {
            out.push(v(4, t, "AmbiguousWrite emitted a write or claim"));
        }
        if to.state != StateName::AmbiguousWrite {
            let rid = from.state.intent().map(|i| &i.request_id);
            let ok = match &t.event {
                Event::ReadBack {
                    request_id,
                    answer: ReadbackAnswer::Applied { .. } | ReadbackAnswer::NotApplied,
                } => Some(request_id) == rid,
                Event::Operator(Command::Abandon) => to.state == StateName::ClosedAbandoned,
                // The operator's confirmation, accepted only once readback proved impossible.
                Event::Operator(Command::Resolve { .. }) => matches!(
                    from.state,
                    StateRecord::AmbiguousWrite {
                        escalated: true,
                        ..
                    }
                ),
                _ => false,
            };
            if !ok {
                out.push(v(4, t, "AmbiguousWrite left without a readback answer"));
            }
        }
    }
}

/// Rule 5. A timed-out write always leads to AmbiguousWrite and is never retried.
fn timed_out_write(t: &Transition, out: &mut Vec<Violation>) {
    let (from, to) = (&t.from, &t.to);
    if let Event::Written {
        request_id,
        outcome: WriteOutcome::TimedOut,
    } = &t.event
    {
        let in_flight = from.state.has_write_in_flight()
            && from.state.intent().map(|i| &i.request_id) == Some(request_id);
        if in_flight && to.state != StateName::AmbiguousWrite {
            out.push(v(5, t, "a timed-out write did not become AmbiguousWrite"));
        }
        if t.actions.iter().any(Action::is_mutation) {
            out.push(v(5, t, "a timed-out write was retried"));
        }
    }
}

/// Rule 7: closed stays closed (a), a stale reading changes nothing (b), a finished attempt never
/// becomes active again (c).
fn closed_and_stale(t: &Transition, seen: &Witnessed, out: &mut Vec<Violation>) {
    let (from, to) = (&t.from, &t.to);
    if from.state.is_closed() {
        if to.state.state_name() != from.state.state_name() {
            out.push(v(7, t, "an edge left Closed"));
        }
        // Reading a finished task for late artifacts is allowed; nothing else.
        if t.actions
            .iter()
            .any(|a| !matches!(a, Action::Quarantine { .. } | Action::Poll { .. }))
        {
            out.push(v(
                7,
                t,
                "Closed emitted an action other than Quarantine or a read",
            ));
        }
    }
    // 7b. A reading older than the last one seen changes nothing.
    if let Event::Observed(o) = &t.event {
        let stale = from
            .memory
            .last_seen
            .as_ref()
            .is_some_and(|s| s.task == o.task && is_older(o, s));
        // Any answer ends an outage (the failure count and how it failed); nothing else may change.
        let mut reached = from.clone();
        reached.memory.read_failures = 0;
        reached.memory.read_condition = None;
        if stale
            && ((from != to && &reached != to)
                || t.actions
                    .iter()
                    .any(|a| !matches!(a, Action::Quarantine { .. })))
        {
            out.push(v(7, t, "a stale observation changed the campaign"));
        }
    }
    // 7c. A finished attempt never becomes active again.
    if let Some(task) = to.state.task() {
        let active = matches!(
            to.state.state_name(),
            StateName::Running
                | StateName::AwaitingInput
                | StateName::Cancelling
                | StateName::Intervening
        );
        if active && seen.finished.contains(task) {
            out.push(v(7, t, "a finished attempt became active again"));
        }
    }
}

fn is_older(o: &Observation, s: &Seen) -> bool {
    match (s.revision, o.revision) {
        (Some(mine), Some(theirs)) if mine != theirs => theirs < mine,
        _ => matches!((s.heartbeat_seq, o.heartbeat_seq), (Some(m), Some(t)) if t < m),
    }
}

/// Invariant 8: restore never yields Controlling; in-flight intents come back ambiguous; controllers
/// come back confirming; entry actions after a restore are reads only.
pub fn check_restore(
    before: &CampaignRecord,
    after: &CampaignRecord,
    entry: &[Action],
) -> Vec<Violation> {
    let mut out = vec![];
    let mut bad = |m: String| {
        out.push(Violation {
            invariant: 8,
            message: format!(
                "restore {} -> {}: {m}",
                before.state.state_name().name(),
                after.state.state_name().name()
            ),
            witness: None,
        })
    };
    if after.state.is_controlling() {
        bad("restored into Controlling".into());
    }
    if before.state.has_write_in_flight() && after.state != StateName::AmbiguousWrite {
        bad("an in-flight write did not come back as AmbiguousWrite".into());
    }
    if before.state.is_controlling()
        && !before.state.has_write_in_flight()
        && after.state != StateName::Confirming
    {
        bad("a controller did not come back as an observer confirming with read_control".into());
    }
    if before.state == StateName::Claiming
        && (after.state != StateName::Claiming
            || !after.state.claim_unresolved()
            || !entry.iter().any(|a| matches!(a, Action::Readback { .. })))
    {
        bad("a pending claim did not come back resolving by readback".into());
    }
    if before.state.is_controlling()
        && !entry.contains(&Action::ReadControl)
        && after.state == StateName::Confirming
    {
        bad("a restored controller did not ask read_control".into());
    }
    if entry.iter().any(|a| {
        !matches!(
            a,
            Action::Poll { .. }
                | Action::ReadControl
                | Action::Readback { .. }
                | Action::FetchEvidence { .. }
        )
    }) {
        bad("entry actions after restore are not idempotent reads".into());
    }
    out
}

/// Graph-level rules: reachability, a way out of every non-terminal state, no edge out of Closed,
/// invariant 3 over paths, and invariant 6 coverage for every Controlling substate.
pub fn check_graph(
    graph: &Graph,
    reachable: &BTreeSet<StateName>,
    transitions: &[Transition],
    policy: &Policy,
) -> Vec<Violation> {
    let mut out = vec![];

    for s in &graph.states {
        if !reachable.contains(s) {
            bad(
                &mut out,
                0,
                format!(
                    "{} is not reachable from {}",
                    s.name(),
                    graph.initial.name()
                ),
            );
        }
    }
    let mut next: BTreeMap<StateName, BTreeSet<StateName>> = BTreeMap::new();
    for e in &graph.edges {
        next.entry(e.from).or_default().insert(e.to);
    }
    for s in &graph.states {
        let exits = next
            .get(s)
            .map(|n| n.iter().any(|t| t != s))
            .unwrap_or(false);
        if s.is_closed() && exits {
            bad(&mut out, 7, format!("an edge leaves {}", s.name()));
        }
        if !s.is_closed() && !exits {
            bad(&mut out, 0, format!("{} has no way out", s.name()));
        }
    }
    out.extend(control_lost_paths(&next));
    out.extend(lease_trouble_covered(graph, transitions, policy));
    out
}

/// Rule 3 on the graph: from ControlLost, Controlling is reachable only through Claiming.
fn control_lost_paths(next: &BTreeMap<StateName, BTreeSet<StateName>>) -> Vec<Violation> {
    let mut out = vec![];
    let mut queue = VecDeque::from([StateName::ControlLost]);
    let mut seen = BTreeSet::from([StateName::ControlLost]);
    while let Some(s) = queue.pop_front() {
        for t in next.get(&s).into_iter().flatten() {
            if *t == StateName::Claiming || !seen.insert(*t) {
                continue;
            }
            if t.is_controlling() {
                bad(
                    &mut out,
                    3,
                    format!("ControlLost reaches {} without an operator claim", t.name()),
                );
            }
            queue.push_back(*t);
        }
    }
    out
}

/// Rule 6's coverage: every Controlling substate meets each kind of lease trouble and ends in
/// ControlLost.
fn lease_trouble_covered(
    graph: &Graph,
    transitions: &[Transition],
    policy: &Policy,
) -> Vec<Violation> {
    let mut out = vec![];
    let controlling: Vec<StateName> = graph
        .states
        .iter()
        .copied()
        .filter(|s| s.is_controlling())
        .collect();
    for s in controlling {
        for kind in Trouble::ALL {
            let covered = transitions.iter().any(|t| {
                t.from.state == s
                    && t.to.state == StateName::ControlLost
                    && is_lease_trouble(&t.from, &t.event, policy)
                    && Trouble::of(&t.event) == kind
            });
            if !covered {
                bad(
                    &mut out,
                    6,
                    format!(
                        "{} has no explored {} edge into ControlLost",
                        s.name(),
                        kind.name()
                    ),
                );
            }
        }
    }
    out
}

/// A graph-level violation (no single transition witnesses it).
fn bad(out: &mut Vec<Violation>, invariant: u8, message: String) {
    out.push(Violation {
        invariant,
        message,
        witness: None,
    });
}

/// A kind of lease trouble, as coverage counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trouble {
    Refused,
    Fenced,
    Expired,
    TakenOver,
}

impl Trouble {
    const ALL: [Trouble; 4] = [
        Trouble::Refused,
        Trouble::Fenced,
        Trouble::Expired,
        Trouble::TakenOver,
    ];

    fn of(e: &Event) -> Trouble {
        match e {
            Event::LeaseRefused { .. } => Trouble::Refused,
            Event::Written { .. } => Trouble::Fenced,
            Event::Tick { .. } => Trouble::Expired,
            _ => Trouble::TakenOver,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Trouble::Refused => "refused",
            Trouble::Fenced => "fenced",
            Trouble::Expired => "expired",
            Trouble::TakenOver => "taken_over",
        }
    }
}
