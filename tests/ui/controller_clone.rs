use argus_supervisor::control::*;

fn duplicate(controller: &Controller) -> Controller {
    controller.clone()
}

fn main() {}
