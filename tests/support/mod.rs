//! The one test support layer every test binary shares (each includes it with `#[path]`):
//! - [`procs`]: the shipped binary and the simulator as processes (ports, kill-on-drop, audits);
//! - [`rig`]: the in-process rig (the simulator over loopback HTTP, a state root, a client, the fast
//!   configuration) and waiting on a runtime's state;
//! - [`fake`]: an in-memory fencing remote, for the authority tests;
//! - [`clock`]: the one test clock;
//! - [`proxy`]: a relay in front of a real server, taken down and brought back (outages);
//! - [`agent_zero`]: the real Agent Zero serving A2A (today's OpenTraining), with its model double.
#![allow(dead_code, unused_imports)]

/// The environment the Argus child is given in the tests that set `ARGUS_TEST_MODEL_KEY` in
/// `ARGUS_SUPERVISOR_ARGUS_ENV`: these names and no others (sorted).
pub const ARGUS_CHILD_ENV: [&str; 10] = [
    "ARGUS_SKILL_AUTO_INIT_WIKI",
    "ARGUS_SKILL_CROSS_PROJECT_PROPAGATION",
    "ARGUS_SKILL_HOME",
    "ARGUS_SKILL_RUNNER_BACKEND",
    "ARGUS_SKILL_SELF_MAINTENANCE",
    "ARGUS_SKILL_WIKI",
    "ARGUS_TEST_MODEL_KEY",
    "HOME",
    "PATH",
    "TMPDIR",
];

pub mod agent_zero;
pub mod fake;
pub mod procs;
pub mod proxy;
pub mod rig;
