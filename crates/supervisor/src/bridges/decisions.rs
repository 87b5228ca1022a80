//! Decisions relayed by Argus: `decisions/<decision_id>.json` files in its project's work directory.
//!
//! Argus is the campaign supervisor, but its decisions are model output: this module reads them as
//! untrusted data, validates each against the schema and the mission authority (maximum attempts,
//! the constraints envelope), and records each as consumed exactly once in a ledger before anyone
//! acts on it. Anything touching publication, destructive Git, credentials, force push or merge —
//! and anything malformed — becomes Needs you, never an action. It never acts itself: authorised
//! rulings are handed to the runtime, which executes them only through a `Controller`.

use crate::security::Untrusted;
use crate::store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Largest decision file read.
pub const MAX_DECISION_BYTES: u64 = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Submit,
    Intervene,
    Cancel,
    Retry,
    Finish,
    Escalate,
}

/// The file's schema.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    pub decision_id: String,
    pub kind: DecisionKind,
    #[serde(default)]
    pub objective: Option<String>,
    pub reason: String,
    #[serde(default)]
    pub attempt: Option<u32>,
}

/// What the runtime may do with a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "ruling")]
pub enum Ruling {
    /// Start an attempt (the first, or the next one after a failed attempt).
    Submit {
        text: String,
        retry: bool,
    },
    Intervene {
        text: String,
    },
    Cancel,
    /// A completion candidate for local validation.
    Finish,
    /// Nothing to execute: a person must decide.
    NeedsYou {
        why: String,
    },
    /// Nothing to execute: the decision is about an attempt that has already started (Argus ran
    /// the same wake twice — its daemon restarted mid-decision, or a wake was sent again after a
    /// crash). Recorded and said, never executed: one decision, one write.
    Stale {
        why: String,
    },
}

/// Words that always escalate: the mission may never do these through a decision.
const FORBIDDEN: [&str; 11] = [
    "merge",
    "force push",
    "force-push",
    "--force",
    "publish",
    "publication",
    "credential",
    "reset --hard",
    "delete branch",
    "rm -rf",
    "rewrite history",
];

/// The mission authority a decision is checked against.
#[derive(Debug, Clone, Copy)]
pub struct MissionBudget {
    pub max_attempts: u32,
    pub attempts_so_far: u32,
}

fn forbidden(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    FORBIDDEN.iter().copied().find(|w| lower.contains(w))
}

/// Judge one decision.
pub fn rule(d: &Decision, authority: MissionBudget) -> Ruling {
    let text = d.objective.as_deref().unwrap_or("");
    if let Some(word) = forbidden(text).or_else(|| forbidden(&d.reason)) {
        return Ruling::NeedsYou {
            why: format!("Argus asked for something outside the mission's authority ({word}); escalated, not executed."),
        };
    }
    let bounded = |t: &str| Untrusted::new(t, 4096).as_str().to_string();
    match d.kind {
        DecisionKind::Submit | DecisionKind::Retry => {
            if let Some(n) = d.attempt.filter(|n| *n <= authority.attempts_so_far) {
                return Ruling::Stale {
                    why: format!(
                        "Argus's decision {} asks for attempt {n}, which has already started; not executed again.",
                        d.decision_id
                    ),
                };
            }
            if authority.attempts_so_far >= authority.max_attempts {
                return Ruling::NeedsYou {
                    why: format!(
                        "Argus asked for attempt {} but the mission allows {}.",
                        authority.attempts_so_far + 1,
                        authority.max_attempts
                    ),
                };
            }
            if text.trim().is_empty() {
                return Ruling::NeedsYou {
                    why: "Argus asked for an attempt without an objective.".into(),
                };
            }
            Ruling::Submit {
                text: bounded(text),
                retry: d.kind == DecisionKind::Retry,
            }
        }
        DecisionKind::Intervene if text.trim().is_empty() => Ruling::NeedsYou {
            why: "Argus asked for an intervention without its text.".into(),
        },
        DecisionKind::Intervene => Ruling::Intervene {
            text: bounded(text),
        },
        DecisionKind::Cancel => Ruling::Cancel,
        DecisionKind::Finish => Ruling::Finish,
        DecisionKind::Escalate => Ruling::NeedsYou {
            why: format!("Argus escalated: {}", bounded(&d.reason)),
        },
    }
}

/// One consumed decision, as the ledger records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consumed {
    pub decision_id: String,
    pub ruling: String,
}

/// The reason a decision gives (bounded; Argus's words, shown to a person as what it decided on).
pub fn reason_of(dir: &Path, decision_id: &str) -> Option<String> {
    let path = dir.join(format!("{decision_id}.json"));
    if std::fs::metadata(&path).ok()?.len() > MAX_DECISION_BYTES {
        return None;
    }
    let d: Decision = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    Some(d.reason).filter(|r| !r.trim().is_empty())
}

/// Read the decisions not yet consumed, judge them, and record each in the ledger (so each is
/// consumed exactly once, even across restarts) before returning it. Sorted by file name.
pub fn take_new(
    store: &Store,
    dir: &Path,
    ledger: &Path,
    authority: MissionBudget,
) -> Result<Vec<(String, Ruling)>, StoreError> {
    let (done, _) = store.read_lines::<Consumed>(ledger)?;
    let seen: std::collections::HashSet<String> = done.into_iter().map(|c| c.decision_id).collect();
    let mut files: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| crate::store::is_json_file(p))
            .collect(),
        Err(_) => return Ok(vec![]),
    };
    files.sort();
    let mut out = vec![];
    let mut authority = authority;
    for path in files {
        let Some(stem) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if seen.contains(&stem) || crate::store::validate_campaign_id(&stem).is_err() {
            continue;
        }
        let ruling = match std::fs::metadata(&path) {
            Ok(m) if m.len() > MAX_DECISION_BYTES => Ruling::NeedsYou {
                why: "A decision file was too large to read.".into(),
            },
            _ => match std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Decision>(&b).ok())
            {
                Some(d) if d.decision_id == stem => rule(&d, authority),
                Some(_) => Ruling::NeedsYou {
                    why: "A decision's id does not match its file name.".into(),
                },
                None => Ruling::NeedsYou {
                    why: "A decision file was not valid.".into(),
                },
            },
        };
        let name = match &ruling {
            Ruling::Submit { retry: true, .. } => "retry",
            Ruling::Submit { .. } => "submit",
            Ruling::Intervene { .. } => "intervene",
            Ruling::Cancel => "cancel",
            Ruling::Finish => "finish",
            Ruling::NeedsYou { .. } => "needs_you",
            Ruling::Stale { .. } => "stale",
        };
        store.append_line(
            ledger,
            &Consumed {
                decision_id: stem.clone(),
                ruling: name.into(),
            },
        )?;
        if matches!(ruling, Ruling::Submit { .. }) {
            authority.attempts_so_far += 1;
        }
        out.push((stem, ruling));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (Store, std::path::PathBuf, std::path::PathBuf) {
        let root = std::env::temp_dir().join(format!("argus-decisions-{}", uuid::Uuid::new_v4()));
        let store = Store::open(&root).expect("store");
        let dir = root.join("work/decisions");
        std::fs::create_dir_all(&dir).expect("dir");
        (store, dir, root.join("state/decisions-c1.jsonl"))
    }

    fn write(dir: &Path, id: &str, body: serde_json::Value) {
        std::fs::write(dir.join(format!("{id}.json")), body.to_string()).expect("write");
    }

    const ONE_LEFT: MissionBudget = MissionBudget {
        max_attempts: 3,
        attempts_so_far: 2,
    };

    #[test]
    fn a_retry_is_authorised_once_and_consumed_exactly_once() {
        let (store, dir, ledger) = setup();
        write(
            &dir,
            "d1",
            serde_json::json!({"decision_id": "d1", "kind": "retry", "objective": "Fix the column drop and rerun.", "reason": "text-only dataset"}),
        );
        let first = take_new(&store, &dir, &ledger, ONE_LEFT).expect("take");
        assert_eq!(
            first,
            vec![(
                "d1".to_string(),
                Ruling::Submit {
                    text: "Fix the column drop and rerun.".into(),
                    retry: true
                }
            )]
        );
        assert!(
            take_new(&store, &dir, &ledger, ONE_LEFT)
                .expect("take")
                .is_empty(),
            "consumed exactly once"
        );
    }

    #[test]
    fn a_merge_or_anything_outside_authority_escalates() {
        let (store, dir, ledger) = setup();
        write(
            &dir,
            "a",
            serde_json::json!({"decision_id": "a", "kind": "submit", "objective": "Merge the branch into main", "reason": "done"}),
        );
        write(
            &dir,
            "b",
            serde_json::json!({"decision_id": "b", "kind": "intervene", "objective": "use dataset A", "reason": "then git push --force"}),
        );
        write(
            &dir,
            "c",
            serde_json::json!({"decision_id": "c", "kind": "retry", "objective": "again", "reason": "x"}),
        );
        write(
            &dir,
            "d",
            serde_json::json!({"decision_id": "d", "kind": "retry", "objective": "and again", "reason": "x"}),
        );
        write(
            &dir,
            "e",
            serde_json::json!({"decision_id": "e", "kind": "deploy", "reason": "x"}),
        );
        write(
            &dir,
            "f",
            serde_json::json!({"decision_id": "not-f", "kind": "cancel", "reason": "x"}),
        );
        std::fs::write(dir.join("g.json"), b"{not json").expect("write");
        std::fs::write(dir.join("h.json"), vec![b' '; 20_000]).expect("write");
        let got = take_new(&store, &dir, &ledger, ONE_LEFT).expect("take");
        let rulings: Vec<&str> = got
            .iter()
            .map(|(_, r)| match r {
                Ruling::NeedsYou { .. } => "needs_you",
                Ruling::Submit { .. } => "submit",
                _ => "other",
            })
            .collect();
        // a: merge, b: force push, c: the last allowed attempt, d: over the limit, e-h: invalid.
        assert_eq!(
            rulings,
            [
                "needs_you",
                "needs_you",
                "submit",
                "needs_you",
                "needs_you",
                "needs_you",
                "needs_you",
                "needs_you"
            ]
        );
    }
}
