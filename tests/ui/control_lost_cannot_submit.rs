use argus_supervisor_lib::control::*;

fn attempt(lost: ControlLost) {
    let write = Mutation::Submit(SubmitRequest { text: "x".into(), project: None });
    let _ = lost.ask_write(WriteIntent::fresh(), write, 0);
}

fn main() {}
