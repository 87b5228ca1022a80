//! Recovery of one campaign from its file in `campaigns/`, by the campaign's own driver before its
//! first step (a start only lists the directory: it reads no campaign file, so 100,000 of them
//! are back in service in the time it takes to list them and spawn their drivers).
//!
//! Owns: the decision, for one file, between driving the campaign it holds, driving a blank
//! detached observer with a question (a corrupt document or record), and setting the file aside.
//! Must never: drive a document under an id it does not name, give a restored campaign authority
//! (the machine's restore confirms a lease before any write), or stop the daemon over one file.

use super::core::Crashed;
use super::core::{on_slot, seed, CrashPoint, Input, Reply};
use super::driver::Driver;
use super::inbox::Envelope;
use super::journal::Snapshot;
use super::shared::Shared;
use super::{resolving, CampaignDoc};
use crate::control::Transport;
use crate::store::{CampaignId, StoreError};
use crate::time::now_secs;
use argus_machines::{Action, CampaignMachine};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// A campaign recovery will drive: its restored machine, its document, the restored state's
/// entry actions.
pub(crate) type Recovered = (CampaignMachine, CampaignDoc, Vec<Action>);

/// Read one file of `campaigns/` and decide what becomes of it. Its name is the campaign's
/// identity: a document that names another campaign (a `.bak` copy, a renamed file) or is not a
/// quarantined and reported, never driven (`None`). A corrupt or unreadable document (a directory
/// where the file should be), or a record the machine refuses, is moved aside and the campaign
/// comes back as a blank detached observer with a question: one rule for every damaged document.
pub(crate) fn read_campaign(sh: &Shared, id: &CampaignId, path: &Path) -> Option<Recovered> {
    let shown = shown(path);
    match sh.store.read_doc::<CampaignDoc>(path) {
        Ok(Some(doc))
            if doc.campaign_id != id.as_str() || doc.machine.campaign_id != id.as_str() =>
        {
            set_aside(
                sh,
                path,
                &shown,
                "the document names another campaign (a copy?); only campaigns/<id>.json for its own id is driven",
            );
            None
        }
        Ok(Some(mut doc)) => match CampaignMachine::restore(&doc.machine, sh.config.policy()) {
            Ok((machine, entry)) => {
                // A write or claim in flight at the crash: its grace counts from when its intent
                // was persisted (the document's last write), not from now.
                if resolving(&machine) && doc.ambiguous_since.is_none() {
                    doc.ambiguous_since = Some(doc.updated_at);
                }
                Some((machine, doc, entry))
            }
            Err(e) => {
                match sh.store.move_aside(path) {
                    Ok(moved) => sh.report(id, &format!("campaign record refused ({e}); {moved}")),
                    Err(m) => sh.report(
                        id,
                        &format!("campaign record refused ({e}); cannot move it aside ({m})"),
                    ),
                }
                Some(blank(
                    sh,
                    id,
                    &doc.objective,
                    format!("The stored state was invalid ({e}) and was moved aside; review before acting."),
                ))
            }
        },
        // Removed since the directory was listed: nothing to drive.
        Ok(None) => None,
        Err(StoreError::Corrupt { moved_to, .. }) => {
            sh.report(
                id,
                &format!("corrupt campaign document moved to {}", moved_to.display()),
            );
            Some(blank(
                sh,
                id,
                "",
                format!(
                    "The stored state was corrupt and was moved to {}; review before acting.",
                    moved_to.display()
                ),
            ))
        }
        // Unreadable (a directory where the file should be, a permission, a bad sector): the
        // same rule as a corrupt document — the file's name is the campaign's, its state is lost,
        // so it is moved aside and the campaign comes back as a blank observer with a question.
        Err(e) => match sh.store.move_aside(path) {
            Ok(moved) => {
                sh.report(id, &format!("unreadable campaign document ({e}); {moved}"));
                Some(blank(
                    sh,
                    id,
                    "",
                    format!("The stored state could not be read ({e}) and was set aside ({moved}); review before acting."),
                ))
            }
            // Still in the way: a blank could not be kept there either, so nothing is driven.
            Err(m) => {
                sh.report(
                    &shown,
                    &format!("unreadable ({e}); cannot move it aside ({m}); skipped"),
                );
                None
            }
        },
    }
}

/// A file's name as reports show it.
pub(crate) fn shown(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Move a file of `campaigns/` that cannot be driven into `quarantine/`, and say so.
pub(crate) fn set_aside(sh: &Shared, path: &Path, shown: &str, why: &str) {
    match sh.store.move_aside(path) {
        Ok(moved) => sh.report(shown, &format!("{why}; {moved}")),
        Err(e) => sh.report(
            shown,
            &format!("{why}; cannot move it aside ({e}); skipped"),
        ),
    }
}

/// A corrupt campaign comes back as a detached observer with a question: never with authority.
fn blank(sh: &Shared, id: &CampaignId, objective: &str, question: String) -> Recovered {
    let machine = CampaignMachine::new(
        id.as_str(),
        sh.config.controller_id.clone(),
        sh.config.policy(),
    );
    let now = now_secs();
    let doc = CampaignDoc {
        pending_question: Some(question),
        question_source: Some(super::QuestionSource::Supervisor),
        question_asked_at: Some(now),
        ..CampaignDoc::new(&machine, objective, now)
    };
    let _ = sh.store.write_doc(&sh.store.campaign_path(id), &doc);
    (machine, doc, vec![])
}

/// The driver of a campaign found in `campaigns/` at a start, before its document is read.
///
/// A start only lists the directory and spawns these: each reads its own document (and decides
/// what becomes of it: `recover.rs`), then its event log, before the campaign's first step, at a
/// fixed offset into the first heartbeat (from the campaign's id; campaigns spread evenly), or at
/// the first input it is given, whichever comes first. At that offset the first step is taken at
/// once: the restored state's entry actions (a lease to confirm, a write to read back, a task to
/// poll) or, with none, the first tick. So a restart of many campaigns reads, confirms and polls
/// spread over the first heartbeat, never all at once. A shutdown that releases nothing, given
/// before, stops the driver without reading anything. A document set aside leaves the snapshot
/// [`Published::Gone`] and stops the driver: the campaign is not driven.
pub(crate) async fn recovered<T: Transport + 'static>(
    shared: Arc<Shared>,
    remote: Arc<T>,
    id: crate::store::CampaignId,
    path: std::path::PathBuf,
    snapshot: Snapshot,
    mut rx: mpsc::Receiver<Box<Envelope>>,
    crash: Option<CrashPoint>,
) -> Result<(), Crashed> {
    let share = (seed(id.as_str()) >> 11) as f64 / (1u64 << 53) as f64;
    let heartbeat = shared.config.heartbeat;
    let at = on_slot(
        shared.core_env.slots_from,
        Instant::now() + heartbeat.mul_f64(share),
        heartbeat,
    );
    let input = tokio::select! {
        input = rx.recv() => match input {
            None => return Ok(()),
            Some(input) if matches!(input.input, Input::Shutdown { release: false }) => {
                input.replier.send(Reply::Done);
                return Ok(());
            }
            Some(input) => Some(input),
        },
        _ = tokio::time::sleep_until(at) => None,
    };
    let Some((machine, doc, entry)) = read_campaign(&shared, &id, &path) else {
        snapshot.gone();
        return Ok(());
    };
    // Taken at its offset, the first step is due now; taken early by an input, at the offset.
    let first = if input.is_some() { at } else { Instant::now() };
    let (driver, _) = Driver::new(shared, remote, id, (machine, doc), Some(snapshot), crash);
    driver.run(entry, rx, Some(first), input).await
}
