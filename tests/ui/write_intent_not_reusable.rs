use argus_supervisor_lib::control::*;

fn resend(controller: Controller) {
    let write = Mutation::Submit(SubmitRequest { text: "x".into(), project: None });
    let intent = WriteIntent::fresh();
    let again = intent.clone();
    let _ = controller.ask_write(intent, write, 0);
    let _ = again;
}

fn main() {}
