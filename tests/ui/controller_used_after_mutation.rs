use argus_supervisor_lib::control::*;

fn twice(controller: Controller) {
    let write = || Mutation::Submit(SubmitRequest { text: "x".into(), project: None });
    let _ = controller.ask_write(WriteIntent::fresh(), write(), 0);
    let _ = controller.ask_write(WriteIntent::fresh(), write(), 0);
}

fn main() {}
