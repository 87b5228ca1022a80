use argus_supervisor::control::*;

fn forge() -> Controller {
    Controller::default()
}

fn main() {}
