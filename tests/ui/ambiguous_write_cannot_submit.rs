use argus_supervisor_lib::control::*;

fn attempt(pending: AmbiguousWrite) {
    let write = Mutation::Submit(SubmitRequest { text: "x".into(), project: None });
    let _ = pending.ask_write(WriteIntent::fresh(), write, 0);
}

fn main() {}
