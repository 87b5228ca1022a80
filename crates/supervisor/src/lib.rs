//! argus-supervisor: the effectful shell around the pure campaign machine (`argus-machines`).
//!
//! The machines crate decides; this crate acts: the authority tokens ([`control`]), the A2A client
//! ([`a2a`]), durable state ([`store`]), the runtime that drives the machines ([`runtime`]), the
//! HTTP API ([`api`], with the operator verbs: one module each, in one table, dispatched by the
//! API's action routes and the CLI) and daemon ([`daemon`]), the bridges to Argus and Foreman
//! ([`bridges`]), and the commands built on them ([`cli`], [`diagrams`]). The simulated remote (`argus-sim`),
//! the bench (`argus-bench`) and the demo (the binary) live outside it.

pub mod a2a;
pub mod api;
pub mod backoff;
pub mod bridges;
pub mod cli;
pub mod control;
pub mod daemon;
pub mod deployment;
pub mod diagrams;
pub(crate) mod metrics;
pub mod protocol;
pub mod qualification;
pub mod qualify;
pub mod runtime;
pub mod security;
pub mod settings;
pub mod store;
pub mod time;
pub(crate) mod ui;
