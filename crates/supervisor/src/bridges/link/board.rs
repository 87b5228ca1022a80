//! Each campaign's Argus record: owned by the link, written to `argus/<campaign-id>.json`, and
//! published from memory to readers (the API's campaign view).

use crate::bridges::argus::ReviewStatus;
use crate::store::{CampaignId, Document, Store};
use std::collections::BTreeMap;

/// One campaign's Argus state, owned by the link: written by it to `argus/<campaign-id>.json`
/// (so a restart neither creates a second project nor asks a question again, and an answer kept
/// for Argus survives) and published from memory to readers (the API's campaign view).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgusRecord {
    pub campaign_id: CampaignId,
    /// The campaign's Argus project, once created.
    #[serde(default)]
    pub project_id: Option<String>,
    /// Argus questions already surfaced as Needs you.
    #[serde(default)]
    pub asked: Vec<String>,
    /// The Argus Reviewer's newest verdict told (`done`, `continue`, `blocked`, …).
    #[serde(default)]
    pub reviewer_verdict: Option<ReviewStatus>,
    /// When the mission of that verdict settled (unix ms): each newer verdict is told once.
    #[serde(default)]
    pub reviewer_verdict_at: Option<u64>,
    /// Argus's latest status for this campaign, summarised (`active`, `done`, ...).
    #[serde(default)]
    pub status: Option<String>,
    /// An operator's answer to a pending question, kept until Argus has been given it.
    #[serde(default)]
    pub pending_answer: Option<String>,
    /// Since when (unix seconds) the project's daemon has said it is stalled; the campaign is
    /// told once per stall, and again only after a stall that ended.
    #[serde(default)]
    pub stalled_since: Option<u64>,
    /// The campaign was told that Argus takes none of its wakes (decisions fall to the operator):
    /// kept across a restart, so an outage is told once and its end once.
    #[serde(default)]
    pub wakes_refused_told: bool,
    /// The newest entries of the project's journal: untrusted, kept here for the campaign view
    /// and sent nowhere.
    #[serde(default)]
    pub journal: Vec<crate::bridges::argus::JournalNote>,
    /// The campaign was told its Argus daemon stopped with a decision unfinished (told once; its
    /// return once).
    #[serde(default)]
    pub daemon_lost_told: bool,
    /// Wakes composed but not yet taken by Argus, oldest first (bounded): kept here so a restart
    /// delivers them rather than losing them. A wake Argus took just before a crash is sent again
    /// with the same text, which Argus answers as a duplicate within its window; a decision from a
    /// second run of it is stale and never executed (`decisions::rule`).
    #[serde(default)]
    pub undelivered: Vec<String>,
    /// The last wake Argus took: sent again when its daemon stopped before settling it (a
    /// message is what starts Argus's daemon; within Argus's window it is a duplicate that starts
    /// no new work).
    #[serde(default)]
    pub last_delivered: Option<String>,
    /// When the last wake Argus took was sent (unix milliseconds): a Reviewer's `done` confirms
    /// an attempt's end only from a mission Argus took after that end.
    #[serde(default)]
    pub delivered_at_ms: Option<u64>,
    /// When Argus last took a message of ours, a wake or an operator's answer (unix
    /// milliseconds, when it was sent): its daemon is stopped as idle only once a mission settled
    /// after it.
    #[serde(default)]
    pub taken_at_ms: Option<u64>,
    /// Wakes composed for this campaign: each wake's number, in its text.
    #[serde(default)]
    pub wakes: u64,
}

impl ArgusRecord {
    /// The record of a campaign Argus has not seen yet.
    pub fn new(campaign_id: CampaignId) -> ArgusRecord {
        ArgusRecord {
            campaign_id,
            project_id: None,
            asked: vec![],
            reviewer_verdict: None,
            reviewer_verdict_at: None,
            status: None,
            pending_answer: None,
            stalled_since: None,
            wakes_refused_told: false,
            journal: vec![],
            daemon_lost_told: false,
            undelivered: vec![],
            last_delivered: None,
            delivered_at_ms: None,
            taken_at_ms: None,
            wakes: 0,
        }
    }
}

/// Version 1 (a binding: `campaign_id`, `project_id`, `asked`) reads as it is: what version 2
/// added is optional.
impl Document for ArgusRecord {
    fn upgrade(
        _: &Store,
        from: u32,
        _: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        match from {
            1 => Ok(()),
            v => Err(format!(
                "Argus record schema version {v} is not read by this build"
            )),
        }
    }
}

/// Every campaign's [`ArgusRecord`]: the link's published state. A change is persisted before it
/// is published, so a reader never sees what a restart would lose.
pub struct ArgusBoard {
    /// The store that persists the records atomically (`None`: kept in memory only, for tests).
    store: Option<Store>,
    records: std::sync::RwLock<BTreeMap<String, ArgusRecord>>,
}

impl ArgusBoard {
    /// A board kept in memory only.
    pub fn in_memory() -> ArgusBoard {
        ArgusBoard {
            store: None,
            records: Default::default(),
        }
    }

    /// A board persisted under the state root's `argus/`, with every record found there reloaded
    /// (one that cannot be read is moved aside by the store and reported).
    pub fn open(store: Store) -> ArgusBoard {
        let dir = store.root().join("argus");
        let mut records = BTreeMap::new();
        let _ = std::fs::create_dir_all(&dir);
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = e.path();
            if !crate::store::is_json_file(&path) {
                continue;
            }
            match store.read_doc::<ArgusRecord>(&path) {
                // Only `argus/<id>.json` for its own id: a copy under another name is not adopted.
                Ok(Some(r)) if path == store.argus_path(&r.campaign_id) => {
                    records.insert(r.campaign_id.to_string(), r);
                }
                Ok(_) => {}
                Err(err) => {
                    tracing::error!(record = %path.display(), error = %err, "an Argus record could not be read; moved aside")
                }
            }
        }
        ArgusBoard {
            store: Some(store),
            records: std::sync::RwLock::new(records),
        }
    }

    /// The campaign's record, as last persisted.
    pub fn get(&self, campaign_id: &str) -> Option<ArgusRecord> {
        self.records
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(campaign_id)
            .cloned()
    }

    /// The campaigns whose Argus daemon says it is stalled.
    pub fn stalled(&self) -> Vec<String> {
        self.campaigns(|r| r.stalled_since.is_some())
    }

    /// The campaigns with wakes Argus has not taken yet.
    pub fn waiting(&self) -> Vec<String> {
        self.campaigns(|r| !r.undelivered.is_empty())
    }

    /// The campaigns bound to an Argus project.
    pub fn bound(&self) -> Vec<String> {
        self.campaigns(|r| r.project_id.is_some())
    }

    fn campaigns(&self, which: impl Fn(&ArgusRecord) -> bool) -> Vec<String> {
        self.records
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|r| which(r))
            .map(|r| r.campaign_id.to_string())
            .collect()
    }

    /// Change a campaign's record: persisted first, then published. `Ok(false)` when nothing
    /// changed (nothing is written); an error leaves the published record as it was.
    pub fn update(
        &self,
        campaign_id: &str,
        change: impl FnOnce(&mut ArgusRecord),
    ) -> Result<bool, crate::store::StoreError> {
        // One writer at a time, so two changes cannot race to the file.
        let mut records = self.records.write().unwrap_or_else(|p| p.into_inner());
        let id = crate::store::validate_campaign_id(campaign_id)?;
        let mut record = records
            .get(campaign_id)
            .cloned()
            .unwrap_or_else(|| ArgusRecord::new(id.clone()));
        let before = record.clone();
        change(&mut record);
        if record == before && records.contains_key(campaign_id) {
            return Ok(false);
        }
        if let Some(store) = &self.store {
            // A blocking write on the link's task: the link waits on Argus far longer than this.
            store.write_doc(&store.argus_path(&id), &record)?;
        }
        records.insert(campaign_id.to_string(), record);
        Ok(true)
    }
}
