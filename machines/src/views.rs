//! Diagrams a reviewer can read: an overview of the superstates, one detail view per concern, the
//! authority view, and the complete edge table, all from the same explored graph.
//!
//! Every explored edge is either drawn in exactly one detail view or covered by an "any open
//! state" edge of the overview; [`coverage`] proves it. Labels in the detail views are short:
//! compact event names, then a legend code per kind of action (see [`LEGEND`]). Pure string
//! building, sorted, deterministic.

use crate::graph::{Edge, Graph};
use crate::names::{StateName, Superstate};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The detail views, one per concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Concern {
    /// Inside `Observing`: reading, claiming.
    Observing,
    /// Inside `Controlling`: entering by a grant, writing, leaving by a release.
    Controlling,
    /// `AmbiguousWrite`, `ControlLost`, `Confirming`: readback and re-claim.
    Recovery,
    /// How an attempt and a campaign end: `RemoteTerminalLocalPending`, `Incompatible`, `Paused`,
    /// `Closed`.
    Ending,
}

impl Concern {
    /// Every concern, in file order.
    pub const ALL: [Concern; 4] = [
        Concern::Observing,
        Concern::Controlling,
        Concern::Recovery,
        Concern::Ending,
    ];

    /// The view's file name.
    pub fn file(self) -> &'static str {
        match self {
            Concern::Observing => "observing.mmd",
            Concern::Controlling => "controlling.mmd",
            Concern::Recovery => "recovery.mmd",
            Concern::Ending => "ending.mmd",
        }
    }

    /// The view's title.
    pub fn title(self) -> &'static str {
        match self {
            Concern::Observing => "Inside Observing: reading and claiming",
            Concern::Controlling => "Inside Controlling: the lease, writes, release",
            Concern::Recovery => {
                "Failure and recovery: ambiguity, readback, lost control, re-claim"
            }
            Concern::Ending => "How an attempt and a campaign end",
        }
    }
}

/// Limits that keep each picture readable (checked by the tests).
pub const MAX_OVERVIEW_EDGES: usize = 20;
/// Edges a detail view may draw before it is split.
pub const MAX_DETAIL_EDGES: usize = 30;
/// The longest edge label drawn.
pub const MAX_LABEL: usize = 40;

/// The action legend codes used in detail-view labels.
pub const LEGEND: [(&str, &str); 7] = [
    (
        "W",
        "a write under the lease (submit, cancel, intervene, renew, release)",
    ),
    ("C", "a claim (asks the remote for the lease)"),
    ("R", "readback (`campaign/request_status`)"),
    (
        "P",
        "a read (poll the task, `read_control`, fetch evidence)",
    ),
    ("S", "surfaced: a significant event for people and Argus"),
    ("A", "Argus woken at a decision boundary"),
    ("Q", "quarantined remote data"),
];

/// The overview's node for a state: its superstate, or itself.
pub fn group(s: StateName) -> &'static str {
    match s.superstate() {
        Some(Superstate::Observing) => "Observing",
        Some(Superstate::Controlling) => "Controlling",
        Some(Superstate::Closed) => "Closed",
        None => s.name(),
    }
}

/// The kind of an event, in a word or two (the overview's labels).
pub fn event_kind(event: &str) -> &'static str {
    match event {
        e if e.starts_with("observed(") => "remote",
        "poll_failed" => "read failed",
        "lease_granted" | "lease_refused" | "control_read" => "lease",
        e if e.starts_with("write_") => "write answer",
        e if e.starts_with("readback_") => "readback",
        e if e.starts_with("validated_") => "verdict",
        "tick" => "timer",
        "op_abandon" => "abandon",
        "op_pause" => "pause",
        _ => "operator",
    }
}

/// A compact event name for detail-view labels.
fn short_event(event: &str) -> String {
    if let Some(state) = event
        .strip_prefix("observed(")
        .and_then(|s| s.strip_suffix(')'))
    {
        return state.to_string();
    }
    match event {
        "lease_granted" => "grant",
        "lease_refused" => "refused",
        "control_read" => "read_control",
        "write_acked" => "ack",
        "write_refused" => "w-refused",
        "write_fenced" => "fenced",
        "write_timed_out" => "timeout",
        "readback_applied" => "applied",
        "readback_not_applied" => "not-applied",
        "readback_unavailable" => "no-readback",
        "validated_accepted" => "accept",
        "validated_rejected" => "reject",
        "validated_next_attempt" => "next",
        "poll_failed" => "read-failed",
        other => other.strip_prefix("op_").unwrap_or(other),
    }
    .to_string()
}

/// The legend code of an action label.
fn action_code(action: &str) -> &'static str {
    match action.split('(').next().unwrap_or(action) {
        "Submit" | "Cancel" | "Intervene" | "Renew" | "Release" => "W",
        "Claim" => "C",
        "Readback" => "R",
        "Poll" | "ReadControl" | "FetchEvidence" => "P",
        "Surface" => "S",
        "WakeArgus" => "A",
        "Quarantine" => "Q",
        _ => "?",
    }
}

fn cut(label: String) -> String {
    if label.chars().count() <= MAX_LABEL {
        return label;
    }
    let mut s: String = label.chars().take(MAX_LABEL - 1).collect();
    s.push('…');
    s
}

/// Where an edge is drawn: an "any open state" edge of the overview, or one detail view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Home {
    /// Any open state.
    AnyOpen,
    /// A detail view's state.
    Detail(Concern),
}

/// Event kinds that reach the same target from (nearly) every open superstate: drawn once.
fn any_open(graph: &Graph) -> BTreeMap<(&'static str, &'static str), BTreeSet<&'static str>> {
    let open: BTreeSet<&'static str> = graph
        .states
        .iter()
        .filter(|s| !s.is_closed())
        .map(|s| group(*s))
        .collect();
    let mut sources: BTreeMap<(&'static str, &'static str), BTreeSet<&'static str>> =
        BTreeMap::new();
    for e in &graph.edges {
        let k = event_kind(&e.event);
        if matches!(k, "abandon" | "pause") {
            sources
                .entry((k, group(e.to)))
                .or_default()
                .insert(group(e.from));
        }
    }
    // Keep the kinds that come from most open superstates; report the exceptions.
    sources
        .into_iter()
        .filter(|(_, from)| from.len() * 2 > open.len())
        .map(|(key, from)| {
            let missing = open
                .iter()
                .filter(|g| !from.contains(*g) && **g != key.1)
                .copied()
                .collect();
            (key, missing)
        })
        .collect()
}

/// The one home of an explored edge.
pub fn home(graph: &Graph, e: &Edge) -> Home {
    if any_open(graph).contains_key(&(event_kind(&e.event), group(e.to))) {
        return Home::AnyOpen;
    }
    let recovery = |s: StateName| {
        matches!(
            s,
            StateName::AmbiguousWrite | StateName::ControlLost | StateName::Confirming
        )
    };
    let ending = |s: StateName| {
        s.is_closed()
            || matches!(
                s,
                StateName::RemoteTerminalLocalPending | StateName::Incompatible | StateName::Paused
            )
    };
    if recovery(e.from) || recovery(e.to) || e.event.starts_with("readback_") {
        Home::Detail(Concern::Recovery)
    } else if ending(e.from) || ending(e.to) {
        Home::Detail(Concern::Ending)
    } else if e.from.is_controlling() || e.to.is_controlling() {
        Home::Detail(Concern::Controlling)
    } else {
        Home::Detail(Concern::Observing)
    }
}

/// One drawn edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    /// The drawn source node.
    pub from: String,
    /// The drawn target node.
    pub to: String,
    /// The label.
    pub label: String,
    /// It needs the lease.
    pub writes: bool,
}

/// A rendered view and what a reviewer (or a test) measures of it.
#[derive(Debug, Clone)]
pub struct View {
    /// The file it is written to.
    pub file: &'static str,
    /// Its title.
    pub title: String,
    /// Its Mermaid text.
    pub mermaid: String,
    /// The edges drawn.
    pub edges: Vec<Drawn>,
}

impl View {
    /// The view as Graphviz DOT (the panel shows its SVG): each node is named as in the Mermaid
    /// text, so its SVG `<title>` is that name; lease-holding states are shaded, closed ones grey,
    /// edges that write red.
    pub fn dot(&self) -> String {
        let mut nodes: BTreeSet<&str> = BTreeSet::new();
        for e in &self.edges {
            nodes.insert(&e.from);
            nodes.insert(&e.to);
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "// Generated by `argus-supervisor diagrams`: {}",
            self.title
        );
        let _ = writeln!(out, "digraph view {{");
        let _ = writeln!(out, "  rankdir=LR; bgcolor=\"transparent\";");
        let _ = writeln!(
            out,
            "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontsize=12];"
        );
        let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];");
        for n in nodes {
            let state = StateName::ALL.iter().find(|s| s.name() == n);
            let lease = n == "Controlling" || state.is_some_and(|s| s.is_controlling());
            let closed = n == "Closed" || state.is_some_and(|s| s.is_closed());
            let fill = match (lease, closed) {
                (true, _) => "#fde2c8",
                (_, true) => "#dddddd",
                _ => "#ffffff",
            };
            let label = if n == "AnyOpen" { "any open state" } else { n };
            let _ = writeln!(out, "  \"{n}\" [label=\"{label}\", fillcolor=\"{fill}\"];");
        }
        for e in &self.edges {
            let color = if e.writes { "#c0392b" } else { "#555555" };
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [label=\"{}\", color=\"{color}\", fontcolor=\"{color}\"];",
                e.from,
                e.to,
                e.label.replace('"', "'")
            );
        }
        let _ = writeln!(out, "}}");
        out
    }

    /// The longest label drawn (checked against `MAX_LABEL`).
    pub fn longest_label(&self) -> usize {
        self.edges
            .iter()
            .map(|e| e.label.chars().count())
            .max()
            .unwrap_or(0)
    }
}

fn header(out: &mut String, title: &str) {
    let _ = writeln!(
        out,
        "%% Generated by `argus-supervisor diagrams` from the explored campaign machine. Do not edit."
    );
    let _ = writeln!(out, "%% {title}");
    let _ = writeln!(out, "stateDiagram-v2");
    let _ = writeln!(out, "    direction LR");
}

fn styles(out: &mut String, lease: &[&str], terminal: &[&str], path: &Path) {
    let _ = writeln!(out, "    classDef lease fill:#fde2c8,stroke:#b35900");
    let _ = writeln!(out, "    classDef terminal fill:#dddddd,stroke:#555555");
    let _ = writeln!(out, "    classDef visited stroke:#1f6feb,stroke-width:3px");
    let _ = writeln!(
        out,
        "    classDef current fill:#1f6feb,color:#ffffff,stroke:#0b3d91,stroke-width:3px"
    );
    for s in lease {
        let _ = writeln!(out, "    class {s} lease");
    }
    for s in terminal {
        let _ = writeln!(out, "    class {s} terminal");
    }
    for s in &path.visited {
        if Some(s) != path.current.as_ref() {
            let _ = writeln!(out, "    class {s} visited");
        }
    }
    if let Some(c) = &path.current {
        let _ = writeln!(out, "    class {c} current");
    }
}

/// A campaign's path, projected on a view's nodes: the nodes it went through, and where it is.
#[derive(Debug, Clone, Default)]
pub struct Path {
    /// States visited, outlined.
    pub visited: Vec<String>,
    /// The current state, filled.
    pub current: Option<String>,
}

impl Path {
    fn on(states: &[StateName], node: impl Fn(StateName) -> Option<String>) -> Path {
        let mut visited: Vec<String> = vec![];
        for s in states {
            if let Some(n) = node(*s) {
                if !visited.contains(&n) {
                    visited.push(n);
                }
            }
        }
        Path {
            current: states.last().and_then(|s| node(*s)),
            visited,
        }
    }
}

/// The overview: superstates only, one edge per ordered pair labelled with the kinds of event
/// that cause it, and abandon/pause drawn once from "any open state". `path` (a campaign's states
/// in order) is highlighted when given.
pub fn overview(graph: &Graph, path: &[StateName]) -> View {
    let any = any_open(graph);
    let mut pairs: BTreeMap<(&'static str, &'static str), (BTreeSet<&'static str>, bool)> =
        BTreeMap::new();
    for e in &graph.edges {
        let (f, t) = (group(e.from), group(e.to));
        if f == t || home(graph, e) == Home::AnyOpen {
            continue;
        }
        let entry = pairs.entry((f, t)).or_default();
        entry.0.insert(event_kind(&e.event));
        entry.1 |= e.writes;
    }
    let mut edges: Vec<Drawn> = pairs
        .into_iter()
        .map(|((f, t), (kinds, writes))| Drawn {
            from: f.to_string(),
            to: t.to_string(),
            label: kinds.into_iter().collect::<Vec<_>>().join(", "),
            writes,
        })
        .collect();
    for ((kind, to), missing) in &any {
        fn short(g: &str) -> &str {
            match g {
                "AmbiguousWrite" => "ambiguous",
                "RemoteTerminalLocalPending" => "terminal",
                "ControlLost" => "lost",
                other => other,
            }
        }
        let label = if missing.is_empty() {
            kind.to_string()
        } else {
            format!(
                "{kind} (not {})",
                missing
                    .iter()
                    .map(|g| short(g))
                    .collect::<Vec<_>>()
                    .join("/")
            )
        };
        edges.push(Drawn {
            from: "AnyOpen".into(),
            to: to.to_string(),
            label,
            writes: *kind == "abandon",
        });
    }
    let title = "Overview: the superstates and what moves a campaign between them";
    let mut out = String::new();
    header(&mut out, title);
    let _ = writeln!(out, "    [*] --> {}", group(graph.initial));
    let _ = writeln!(out, "    state \"any open state\" as AnyOpen");
    let nodes: BTreeSet<&'static str> = graph.states.iter().map(|s| group(*s)).collect();
    for n in &nodes {
        let _ = writeln!(out, "    {n}");
    }
    for e in &edges {
        let _ = writeln!(out, "    {} --> {} : {}", e.from, e.to, e.label);
    }
    let p = Path::on(path, |s| Some(group(s).to_string()));
    styles(&mut out, &["Controlling"], &["Closed"], &p);
    View {
        file: "overview.mmd",
        title: title.into(),
        mermaid: out,
        edges,
    }
}

fn detail_label(events: &BTreeSet<String>, actions: &BTreeSet<String>) -> String {
    let mut names: Vec<String> = events.iter().map(|e| short_event(e)).collect();
    names.sort();
    names.dedup();
    let codes: BTreeSet<&str> = actions.iter().map(|a| action_code(a)).collect();
    let events = names.join(",");
    if codes.is_empty() {
        cut(events)
    } else {
        let codes: String = codes.into_iter().collect();
        // The codes always show: the event list is what gets shortened.
        let room = MAX_LABEL.saturating_sub(codes.len() + 3);
        let events = if events.chars().count() > room {
            let mut s: String = events.chars().take(room.saturating_sub(1)).collect();
            s.push('…');
            s
        } else {
            events
        };
        format!("{events} / {codes}")
    }
}

/// The events, actions and write flag of the edges merged into one drawn edge.
type Merged = (BTreeSet<String>, BTreeSet<String>, bool);

/// One detail view: the edges whose home it is, merged per (from, to).
pub fn detail(graph: &Graph, concern: Concern, path: &[StateName]) -> View {
    let mut pairs: BTreeMap<(StateName, StateName), Merged> = BTreeMap::new();
    for e in &graph.edges {
        if home(graph, e) != Home::Detail(concern) {
            continue;
        }
        let entry = pairs.entry((e.from, e.to)).or_default();
        entry.0.insert(e.event.clone());
        entry.1.extend(e.actions.iter().cloned());
        entry.2 |= e.writes;
    }
    let nodes: BTreeSet<StateName> = pairs.keys().flat_map(|(f, t)| [*f, *t]).collect();
    let edges: Vec<Drawn> = pairs
        .iter()
        .map(|((f, t), (events, actions, writes))| Drawn {
            from: f.name().to_string(),
            to: t.name().to_string(),
            label: detail_label(events, actions),
            writes: *writes,
        })
        .collect();
    let mut out = String::new();
    header(&mut out, concern.title());
    if nodes.contains(&graph.initial) {
        let _ = writeln!(out, "    [*] --> {}", graph.initial.name());
    }
    let controlling: Vec<StateName> = nodes
        .iter()
        .copied()
        .filter(|s| s.is_controlling())
        .collect();
    if !controlling.is_empty() {
        let _ = writeln!(out, "    state Controlling {{");
        for s in &controlling {
            let _ = writeln!(out, "        {}", s.name());
        }
        let _ = writeln!(out, "    }}");
    }
    for s in nodes.iter().filter(|s| !s.is_controlling()) {
        let _ = writeln!(out, "    {}", s.name());
    }
    for e in &edges {
        let _ = writeln!(out, "    {} --> {} : {}", e.from, e.to, e.label);
    }
    let lease: Vec<&str> = controlling.iter().map(|s| s.name()).collect();
    let terminal: Vec<&str> = nodes
        .iter()
        .filter(|s| s.is_closed())
        .map(|s| s.name())
        .collect();
    let p = Path::on(path, |s| nodes.contains(&s).then(|| s.name().to_string()));
    styles(&mut out, &lease, &terminal, &p);
    View {
        file: concern.file(),
        title: concern.title().into(),
        mermaid: out,
        edges,
    }
}

/// The detail view a campaign's path mostly runs through (for drawing the path on it).
pub fn relevant(graph: &Graph, path: &[StateName]) -> Concern {
    Concern::ALL
        .iter()
        .copied()
        .max_by_key(|c| {
            let nodes: BTreeSet<StateName> = graph
                .edges
                .iter()
                .filter(|e| home(graph, e) == Home::Detail(*c))
                .flat_map(|e| [e.from, e.to])
                .collect();
            path.iter().filter(|s| nodes.contains(s)).count()
        })
        .unwrap_or(Concern::Controlling)
}

/// The authority view: lease-holding states shaded; every edge that emits a write drawn, and
/// nothing else, so "no write without a lease" shows at a glance.
pub fn authority(graph: &Graph) -> View {
    let mut pairs: BTreeMap<(StateName, StateName), (BTreeSet<String>, BTreeSet<String>)> =
        BTreeMap::new();
    for e in graph.edges.iter().filter(|e| e.writes) {
        let entry = pairs.entry((e.from, e.to)).or_default();
        entry.0.insert(e.event.clone());
        entry
            .1
            .extend(e.actions.iter().filter(|a| action_code(a) == "W").cloned());
    }
    let edges: Vec<Drawn> = pairs
        .iter()
        .map(|((f, t), (events, actions))| Drawn {
            from: f.name().to_string(),
            to: t.name().to_string(),
            label: cut(format!(
                "{} / {}",
                events
                    .iter()
                    .map(|e| short_event(e))
                    .collect::<Vec<_>>()
                    .join(","),
                actions.iter().cloned().collect::<Vec<_>>().join(" ")
            )),
            writes: true,
        })
        .collect();
    let title = "Authority: every edge that writes, and the states that hold a lease (shaded)";
    let mut out = String::new();
    header(&mut out, title);
    let _ = writeln!(out, "    state Controlling {{");
    for s in graph.states.iter().filter(|s| s.is_controlling()) {
        let _ = writeln!(out, "        {}", s.name());
    }
    let _ = writeln!(out, "    }}");
    for s in graph.states.iter().filter(|s| !s.is_controlling()) {
        let _ = writeln!(out, "    {}", s.name());
    }
    for e in &edges {
        let _ = writeln!(out, "    {} --> {} : {}", e.from, e.to, e.label);
    }
    let lease: Vec<&str> = graph
        .states
        .iter()
        .filter(|s| s.is_controlling())
        .map(|s| s.name())
        .collect();
    styles(&mut out, &lease, &[], &Path::default());
    View {
        file: "authority.mmd",
        title: title.into(),
        mermaid: out,
        edges,
    }
}

/// The invariants (numbered as in docs/architecture.md) that constrain an edge.
pub fn invariants(e: &Edge) -> Vec<u8> {
    let mut v = vec![];
    if e.writes {
        v.push(1);
    }
    if !e.from.is_controlling() && e.to.is_controlling() {
        v.push(2);
    }
    if e.from == StateName::ControlLost {
        v.push(3);
    }
    if e.from == StateName::AmbiguousWrite {
        v.push(4);
    }
    if e.event == "write_timed_out" {
        v.push(5);
    }
    if e.from.is_controlling()
        && matches!(
            e.event.as_str(),
            "lease_refused" | "write_fenced" | "lease_granted" | "control_read" | "tick"
        )
    {
        v.push(6);
    }
    if e.from.is_closed() || e.to.is_closed() || e.event.starts_with("observed(") {
        v.push(7);
    }
    v
}

/// The complete edge table (`transitions.md`): every explored transition, grouped by source state.
pub fn table(graph: &Graph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Every explored transition\n");
    let _ = writeln!(
        out,
        "Generated by `argus-supervisor diagrams` from the explored machine; never edit by hand. Each state-changing \
transition of the exploration is one row (self-loops — polls, renewals, ignored or stale readings — change no \
state and are not listed). `view` says where it is drawn; `any open state` means the overview's single edge for \
it. Invariants are numbered as in docs/architecture.md.\n"
    );
    let mut by_source: BTreeMap<StateName, Vec<&Edge>> = BTreeMap::new();
    for e in &graph.edges {
        by_source.entry(e.from).or_default().push(e);
    }
    for (from, edges) in by_source {
        let _ = writeln!(out, "## {} (`{}`)\n", from.name(), from.persisted());
        let _ = writeln!(out, "| event | target | actions | invariants | view |");
        let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
        for e in edges {
            let actions = if e.actions.is_empty() {
                "—".to_string()
            } else {
                e.actions.iter().cloned().collect::<Vec<_>>().join(", ")
            };
            let inv = invariants(e)
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let view = match home(graph, e) {
                Home::AnyOpen => "any open state".to_string(),
                Home::Detail(c) => format!("[{}]({})", c.file(), c.file()),
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                e.event,
                e.to.name(),
                actions,
                if inv.is_empty() { "—".into() } else { inv },
                view
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// Every explored edge has exactly one home, appears in the table, and is drawn there (in its
/// detail view's merged edge, or by the overview's "any open state" edge).
pub fn coverage(graph: &Graph) -> Result<usize, String> {
    let table = table(graph);
    let overview = overview(graph, &[]);
    let details: BTreeMap<Concern, View> = Concern::ALL
        .iter()
        .map(|c| (*c, detail(graph, *c, &[])))
        .collect();
    for e in &graph.edges {
        let row = format!("| `{}` | {} |", e.event, e.to.name());
        if !table.contains(&row) {
            return Err(format!(
                "{} --{}--> {} missing from the table",
                e.from.name(),
                e.event,
                e.to.name()
            ));
        }
        let drawn = match home(graph, e) {
            Home::AnyOpen => overview
                .edges
                .iter()
                .filter(|d| d.from == "AnyOpen" && d.to == group(e.to))
                .count(),
            Home::Detail(c) => Concern::ALL
                .iter()
                .map(|k| {
                    details[k]
                        .edges
                        .iter()
                        .filter(|d| d.from == e.from.name() && d.to == e.to.name())
                        .count()
                        * usize::from(*k == c)
                })
                .sum(),
        };
        if drawn != 1 {
            return Err(format!(
                "{} --{}--> {} is drawn {drawn} times",
                e.from.name(),
                e.event,
                e.to.name()
            ));
        }
    }
    Ok(graph.edges.len())
}
