use argus_supervisor_lib::control::*;

// Nor can a `Validated` be written by hand.
fn verdict() -> Validated {
    Validated { task: TaskId::new("t"), verdict: Verdict::Accepted }
}

fn main() {}
