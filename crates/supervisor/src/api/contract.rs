//! The API's contract in one place: every shape a request sends and an answer carries, typed. The
//! routes serialise these, and the typed client ([`super::client`]) below the CLI, `qualify` and
//! the demo reads them back whole; the panel's page reads the same JSON. Each type lives beside
//! what makes it (a view beside its composition, an answer beside its mapping from the runtime);
//! this module is where a client finds them all.
//!
//! - Request: [`ActionInput`], the body of every action route (`POST campaigns/{id}/{verb}`).
//! - Answer: [`ActionReply`] (with [`ErrorShown`]), the one shape of every action's answer and of
//!   every refusal the API decides itself ([`ApiError`]).
//! - Views: [`CampaignList`], [`CampaignView`], [`EventLog`], [`Feed`], [`RemoteFeed`],
//!   [`ArchiveList`], [`HumanMessage`] (a feed line, also each server-sent event of a stream).
//! - Health: [`Health`] (with the token), [`HealthBrief`] (without), [`Liveness`].

pub use super::health::{
    Health, HealthBrief, HealthStatus, Heartbeat, Liveness, Reason, ReasonClass, RemoteShown,
    Secrets, SimulatedRemote,
};
pub use super::reply::{ActionReply, ApiError, ErrorShown, ReplyCode};
pub use super::verbs::ActionInput;
pub use super::view::{CampaignLine, CampaignList, CampaignView};
pub use crate::runtime::messages::{Feed, HumanMessage, RemoteFeed};
pub use crate::runtime::reduce::EventLog;
pub use crate::store::retention::ArchiveList;
