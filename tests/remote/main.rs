//! The remote side: the simulator's own contract, its leases, and the A2A client against it.

#[path = "../support/mod.rs"]
mod support;

mod a2a_client;
mod sim;
mod sim_leases;
