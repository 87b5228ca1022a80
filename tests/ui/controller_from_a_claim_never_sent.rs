use argus_supervisor_lib::control::*;

// Only a token's `ask_*` makes a `Waiting`: no caller settles a claim it never sent into a
// `Controller`.
fn mint(observer: Observer, lease: Lease) -> Settled {
    let waiting = Waiting::Claim(observer, RequestId::new("r"));
    waiting.settle(Response::Lease(Ok(lease)), 0)
}

fn main() {}
