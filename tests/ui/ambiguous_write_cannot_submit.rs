use argus_supervisor_lib::control::*;

async fn attempt(pending: AmbiguousWrite, clock: SystemClock) {
    let request = SubmitRequest { text: "x".into(), project: None };
    let _ = pending.submit(&Disconnected, &clock, WriteIntent::fresh(), &request).await;
}

fn main() {}
