use argus_supervisor_lib::control::*;
use argus_machines::ControllerId;

async fn side_door(id: ControllerId, request_id: RequestId) {
    let call = WriteId::new("c1", &id, 7, &request_id);
    let request = SubmitRequest { text: "x".into(), project: None };
    let _ = Disconnected.submit(call, &request).await;
}

fn main() {}
