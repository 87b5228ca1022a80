use argus_supervisor_lib::control::*;

async fn twice(controller: Controller, clock: SystemClock) {
    let request = SubmitRequest { text: "x".into(), project: None };
    let _ = controller.submit(&Disconnected, &clock, WriteIntent::fresh(), &request).await;
    let _ = controller.submit(&Disconnected, &clock, WriteIntent::fresh(), &request).await;
}

fn main() {}
