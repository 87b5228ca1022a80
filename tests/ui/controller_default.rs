use argus_supervisor_lib::control::*;

fn forge() -> Controller {
    Controller::default()
}

fn main() {}
