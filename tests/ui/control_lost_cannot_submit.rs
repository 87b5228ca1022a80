use argus_supervisor_lib::control::*;

async fn attempt(lost: ControlLost, clock: SystemClock) {
    let request = SubmitRequest { text: "x".into(), project: None };
    let _ = lost.submit(&Disconnected, &clock, WriteIntent::fresh(), &request).await;
}

fn main() {}
