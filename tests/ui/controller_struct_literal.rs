use argus_supervisor_lib::control::*;

fn forge(lease: Lease) -> Controller {
    Controller { lease }
}

fn main() {}
