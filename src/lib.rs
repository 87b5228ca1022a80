//! argus-supervisor: the effectful shell around the pure campaign machine (`argus-machines`).
//!
//! The machines crate decides; this crate acts. Today it holds the authority layer ([`control`]:
//! the typestate tokens and the transport they write through) and the diagram generator
//! ([`diagrams`]). The A2A client, the simulated remote, the runtime, the bridges and the API are
//! built on these (see the open issues).

pub mod a2a;
pub mod bench;
pub mod control;
pub mod diagrams;
pub mod runtime;
pub mod security;
pub mod sim;
pub mod store;
