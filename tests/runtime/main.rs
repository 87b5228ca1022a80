//! The runtime on the in-process simulator: steps, crashes and recovery, the API, the Argus link.

#[path = "../support/mod.rs"]
mod support;

mod api;
mod argus_link;
mod durability;
mod runtime;
