use argus_supervisor_lib::control::*;

fn duplicate(controller: &Controller) -> Controller {
    controller.clone()
}

fn main() {}
