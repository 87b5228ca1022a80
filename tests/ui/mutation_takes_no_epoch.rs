use argus_supervisor_lib::control::*;

fn with_epoch(controller: Controller) {
    let write = Mutation::Submit(SubmitRequest { text: "x".into(), project: None });
    let _ = controller.ask_write(WriteIntent::fresh(), write, 0, 7);
}

fn main() {}
