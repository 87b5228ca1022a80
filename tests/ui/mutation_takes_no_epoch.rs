use argus_supervisor_lib::control::*;

async fn with_epoch(controller: Controller, clock: SystemClock) {
    let request = SubmitRequest { text: "x".into(), project: None };
    let _ = controller.submit(&Disconnected, &clock, WriteIntent::fresh(), &request, 7).await;
}

fn main() {}
