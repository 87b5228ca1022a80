//! The one test support layer every test binary shares (each includes it with `#[path]`):
//! - [`procs`]: the shipped binary and the simulator as processes (ports, kill-on-drop, audits);
//! - [`rig`]: the in-process rig (the simulator over loopback HTTP, a state root, a client, the fast
//!   configuration) and waiting on a runtime's state;
//! - [`fake`]: an in-memory fencing remote and a manual clock, for the authority tests.
#![allow(dead_code, unused_imports)]

pub mod fake;
pub mod procs;
pub mod rig;
