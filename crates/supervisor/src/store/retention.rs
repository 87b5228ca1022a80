//! Closed campaigns out of the live set: where an archived one lives, its export (its document,
//! events and feed in one JSON document, live or archived), and which closed campaigns retention
//! archives. The move itself is the runtime's (`Runtime::archive`: its driver stops first).

use super::{CampaignId, Store};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::Path;

/// The lines of a JSONL log that parse (a torn last line is left out, as recovery does).
fn lines(path: &Path) -> Vec<Value> {
    std::fs::read(path)
        .map(|b| {
            b.split(|c| *c == b'\n')
                .filter_map(|l| serde_json::from_slice(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn doc(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// One campaign whole: `{"campaign_id", "archived", "campaign": its document, "events",
/// "feed"}`, from the live set or the archive; `None` when neither has it.
pub fn export(store: &Store, id: &CampaignId) -> Option<Value> {
    let (archived, campaign, events, feed) = match doc(&store.campaign_path(id)) {
        Some(d) => (false, d, store.events_path(id), store.messages_path(id)),
        None => {
            let dir = store.archive_path(id);
            (
                true,
                doc(&dir.join("campaign.json"))?,
                dir.join("events.jsonl"),
                dir.join("messages.jsonl"),
            )
        }
    };
    Some(json!({
        "campaign_id": id.as_str(),
        "archived": archived,
        "campaign": campaign,
        "events": lines(&events),
        "feed": lines(&feed),
        "untrusted_fields": ["campaign.objective", "campaign.remote", "campaign.latest_evidence", "events[].detail", "feed[].text"],
    }))
}

/// The archived campaigns: id, objective, final state, last update (unix seconds).
pub fn archived(store: &Store) -> ArchiveList {
    let mut archived: Vec<ArchivedLine> = std::fs::read_dir(store.root().join("archive"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let d = doc(&e.path().join("campaign.json"))?;
            let text = |v: &Value| v.as_str().map(str::to_string);
            Some(ArchivedLine {
                campaign_id: text(&d["campaign_id"]),
                objective: text(&d["objective"]),
                state: text(&d["machine"]["state"]["name"]),
                updated_at: d["updated_at"].as_u64(),
            })
        })
        .collect();
    archived.sort_by(|a, b| a.campaign_id.cmp(&b.campaign_id));
    ArchiveList { archived }
}

/// `GET archive`: the campaigns taken out of the live set, by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveList {
    pub archived: Vec<ArchivedLine>,
}

/// An archived campaign as its document says (a field it lacks is null: an archive may hold a
/// document of an older version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedLine {
    pub campaign_id: Option<String>,
    pub objective: Option<String>,
    pub state: Option<String>,
    /// Unix seconds.
    pub updated_at: Option<u64>,
}

/// Of `(id, closed, updated_at)`, the closed ones last changed more than `days` ago (`0`: none).
pub fn due(campaigns: &[(String, bool, u64)], now: u64, days: u64) -> Vec<String> {
    if days == 0 {
        return vec![];
    }
    let before = now.saturating_sub(days.saturating_mul(86_400));
    campaigns
        .iter()
        .filter(|(_, closed, at)| *closed && *at < before)
        .map(|(id, _, _)| id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn retention_takes_only_closed_campaigns_older_than_its_days() {
        let day = 86_400;
        let c = |id: &str, closed, at| (id.to_string(), closed, at);
        let all = [
            c("old-closed", true, 0),
            c("old-open", false, 0),
            c("new-closed", true, 40 * day),
        ];
        assert_eq!(
            super::due(&all, 45 * day, 30),
            vec!["old-closed".to_string()]
        );
        assert!(super::due(&all, 45 * day, 0).is_empty());
    }
}
