use argus_supervisor_lib::control::*;

fn attempt(observer: Observer) {
    let write = Mutation::Submit(SubmitRequest { text: "x".into(), project: None });
    let _ = observer.ask_write(WriteIntent::fresh(), write, 0);
}

fn main() {}
