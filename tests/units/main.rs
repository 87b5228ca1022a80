//! Units without a remote process: authority tokens on a fake remote, the bridges, the diagrams.

#[path = "../support/mod.rs"]
mod support;

mod argus_bridge;
mod contract;
mod control;
mod diagrams;
mod foreman;
mod layers;
mod names;
mod qualification;
mod refusals;
mod shape;
mod size;
mod source;
mod strings;
