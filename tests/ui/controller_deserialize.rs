use argus_supervisor_lib::control::*;

fn forge(json: &str) -> Controller {
    serde_json::from_str::<Controller>(json).expect("forged")
}

fn main() {}
