//! Bridges to the two advisors around the supervisor.
//!
//! - [`foreman`]: advisory only, by construction; its output is a `Hint` that converts to no action.
//! - [`argus`]: the MCP client to Argus's `argus-plugin-server` (child process, stdio, minimal
//!   environment) — project create/re-attach, event messages, status (Needs you, completion
//!   candidate, reviewer verdicts).
//! - [`decisions`]: Argus's decision files, validated against the mission authority and consumed
//!   exactly once.
//!
//! Not yet wired into the runtime (an open issue): waking Argus through the MCP client, executing
//! authorised decisions through the campaign's machine, and Argus-unavailable handling. Until then
//! wakes go to the counting stand-in in `runtime::reduce`.

pub mod argus;
pub mod decisions;
pub mod foreman;
