//! argus-supervisor: the effectful shell around the pure campaign machine (`argus-machines`).
pub mod control;
pub mod diagrams;
