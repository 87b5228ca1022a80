use argus_supervisor_lib::control::*;

async fn resend(controller: Controller, clock: SystemClock) {
    let request = SubmitRequest { text: "x".into(), project: None };
    let intent = WriteIntent::fresh();
    let again = intent.clone();
    let _ = controller.submit(&Disconnected, &clock, intent, &request).await;
    let _ = again;
}

fn main() {}
