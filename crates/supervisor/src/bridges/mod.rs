//! Bridges to the two advisors around the supervisor.
//!
//! - [`foreman`]: advisory only, by construction; its output is a `Hint` that converts to no action.
//! - [`argus`]: the MCP client to Argus's `argus-plugin-server` (child process, stdio, minimal
//!   environment) — project create/re-attach, event messages, status (Needs you, completion
//!   candidate, reviewer verdicts).
//! - [`decisions`]: Argus's decision files, validated against the mission authority and consumed
//!   exactly once.
//! - [`link`]: the wake policy's Argus end — wakes delivered over MCP, Foreman consulted on the
//!   events that are not decision boundaries, authorised decisions executed through the campaign's
//!   machine, Argus outages surfaced once and retried with backoff.

pub mod argus;
pub(crate) mod decisions;
pub mod foreman;
pub mod link;
