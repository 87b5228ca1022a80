//! The machine's explored behaviour, pinned. Every transition the explorer checks becomes one line
//! — the record before, the event, the record after, the actions emitted, all in their `Debug`
//! form — and the sorted, de-duplicated lines must equal `tests/golden/behaviour.txt`. The
//! invariant checker says what may never happen; this says what does happen, so a change to any
//! guard, arm or action (a mutant, a slip in a refactor) fails here even where no invariant
//! breaks. An intended change is re-blessed and read in review:
//!
//!   ARGUS_BLESS=1 cargo test -p argus-machines --test behaviour
//!
//! The first line counts them, so a reviewer sees the size of a change before reading the diff.

use argus_machines::explore::explore;
use argus_machines::{Action, CampaignRecord};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/behaviour.txt")
}

/// FNV-1a, 64 bits: a stable fingerprint of a transition's full `Debug` form.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// One line per transition: readable labels, and the fingerprint of everything (both records in
/// full, the event and the actions with their payloads), so any change shows.
fn line(
    from: &CampaignRecord,
    event: &str,
    full_event: &str,
    to: &CampaignRecord,
    actions: &[Action],
) -> String {
    let labels: Vec<String> = actions.iter().map(Action::label).collect();
    let full = format!("{from:?} {full_event} {to:?} {actions:?}");
    format!(
        "{} --{event}--> {} [{}] {:016x}",
        from.state.persisted(),
        to.state.persisted(),
        labels.join(", "),
        fnv(&full)
    )
}

fn lines() -> BTreeSet<String> {
    let x = explore();
    let mut out = BTreeSet::new();
    for t in &x.transitions {
        out.insert(line(
            &t.from,
            &t.event.label(),
            &format!("{:?}", t.event),
            &t.to,
            &t.actions,
        ));
    }
    for (before, after, entry) in &x.restores {
        out.insert(line(before, "restore", "restore", after, entry));
    }
    out
}

#[test]
fn the_explored_behaviour_is_what_was_reviewed() {
    let now: Vec<String> = lines().into_iter().collect();
    let text = format!(
        "{} transitions and restores\n{}\n",
        now.len(),
        now.join("\n")
    );
    let path = golden();
    if std::env::var_os("ARGUS_BLESS").is_some() {
        std::fs::write(&path, &text).expect("write the golden behaviour");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if want == text {
        return;
    }
    let want_set: BTreeSet<&str> = want.lines().skip(1).collect();
    let now_set: BTreeSet<&str> = now.iter().map(String::as_str).collect();
    let gone: Vec<&&str> = want_set.difference(&now_set).take(3).collect();
    let new: Vec<&&str> = now_set.difference(&want_set).take(3).collect();
    panic!(
        "the machine's explored behaviour changed ({} lines now, {} pinned).\n\
         first pinned transitions no longer seen:\n{gone:#?}\n\
         first transitions not pinned:\n{new:#?}\n\
         If the change is intended, re-bless with ARGUS_BLESS=1 and review the diff.",
        now_set.len(),
        want_set.len()
    );
}

/// The drawn graph abstracts states to their names: a step that only changes what a state holds
/// (a failure counted, a lease renewed) is a self-loop, and self-loops are not drawn.
#[test]
fn the_drawn_graph_has_no_self_loops() {
    let x = explore();
    let loops: Vec<_> = x.graph.edges.iter().filter(|e| e.from == e.to).collect();
    assert!(loops.is_empty(), "{loops:?}");
}
