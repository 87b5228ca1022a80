use argus_supervisor::control::*;

fn forge(lease: Lease) -> Controller {
    Controller { lease }
}

fn main() {}
