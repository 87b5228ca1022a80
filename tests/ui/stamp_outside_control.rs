use argus_supervisor_lib::control::*;

// A write's identity is made only by a `Controller`: no caller can choose its epoch.
fn forge(request_id: RequestId) -> Request {
    let stamp = Stamp {
        campaign_id: "c1".into(),
        controller_id: ControllerId::new("us"),
        epoch: 7,
        request_id,
        term: None,
    };
    Request::Release(stamp)
}

fn main() {}
