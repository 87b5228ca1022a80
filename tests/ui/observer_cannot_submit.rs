use argus_supervisor_lib::control::*;

async fn attempt(observer: Observer, clock: SystemClock) {
    let request = SubmitRequest { text: "x".into(), project: None };
    let _ = observer.submit(&Disconnected, &clock, WriteIntent::fresh(), &request).await;
}

fn main() {}
