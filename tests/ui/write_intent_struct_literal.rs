use argus_supervisor_lib::control::*;

// Nor by building one by hand.
fn intent() -> WriteIntent {
    WriteIntent { request_id: RequestId::new("r-1") }
}

fn main() {}
