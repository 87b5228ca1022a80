use argus_supervisor_lib::control::*;

// Request ids are minted only inside `control`: a raw id cannot become a write intent.
fn intent() -> WriteIntent {
    WriteIntent::persisted(RequestId::new("r-1"))
}

fn main() {}
