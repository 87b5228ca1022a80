//! A recovered campaign's driver: it reads its own document, then starts at its offset into the
//! first heartbeat.

use super::super::core::{on_slot, seed, CrashPoint, Input, Reply};
use super::super::shared::Shared;
use super::{Crashed, Driver, Envelope, Snapshot};
use crate::control::Transport;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

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
    let Some((machine, doc, entry)) = super::super::recover::read_campaign(&shared, &id, &path)
    else {
        snapshot.gone();
        return Ok(());
    };
    // Taken at its offset, the first step is due now; taken early by an input, at the offset.
    let first = if input.is_some() { at } else { Instant::now() };
    let (driver, _) = Driver::new(shared, remote, id, machine, doc, Some(snapshot), crash);
    driver.run(entry, rx, Some(first), input).await
}
