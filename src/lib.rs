//! argus-supervisor: the effectful shell around the pure campaign machine (`argus-machines`).
//!
//! The machines crate decides; this crate acts: the authority tokens ([`control`]), the A2A client
//! ([`a2a`]), durable state ([`store`]), the runtime that drives the machines ([`runtime`]), the
//! HTTP API ([`api`]) and daemon ([`daemon`]), the simulated remote ([`sim`]), and the commands
//! built on them ([`cli`], [`demo`], [`bench`], [`diagrams`]).

pub mod a2a;
pub mod api;
pub mod bench;
pub mod bridges;
pub mod cli;
pub mod control;
pub mod daemon;
pub mod demo;
pub mod diagrams;
pub mod protocol;
pub mod runtime;
pub mod security;
pub mod sim;
pub mod store;
pub mod time;
pub mod ui;
