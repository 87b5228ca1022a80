use argus_supervisor_lib::a2a::A2aClient;
use argus_supervisor_lib::control::*;

// A write's stamp is consumed by the write that sends it: the same decision cannot go twice.
async fn twice(client: &A2aClient, stamp: Stamp) {
    let request = SubmitRequest { text: "x".into(), project: None };
    let _ = client.submit(stamp, &request).await;
    let _ = client.submit(stamp, &request).await;
}

fn main() {}
