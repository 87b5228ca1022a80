//! The one test support layer every test binary shares (each includes it with `#[path]`):
//! - [`procs`]: the shipped binary and the simulator as processes (ports, kill-on-drop, audits);
//! - [`rig`]: the in-process rig (the simulator over loopback HTTP, a state root, a client, the fast
//!   configuration) and waiting on a runtime's state;
//! - [`fake`]: an in-memory fencing remote, for the authority tests;
//! - [`clock`]: the one test clock.
#![allow(dead_code, unused_imports)]

pub mod clock;
pub mod fake;
pub mod procs;
pub mod rig;
