//! Everything that starts the shipped binary as a user would: serve, the CLI, the demo, bench, TLS.

#[path = "../support/mod.rs"]
mod support;

mod agent_zero;
mod argus_decides;
mod contract;
mod edges;
mod first_hour;
mod foreman_gate;
mod long_life;
mod operable;
mod plain_a2a;
mod processes;
mod qualification;
mod readme_walk;
mod real_argus;
mod serve_loop;
mod streaming;
mod tls;
