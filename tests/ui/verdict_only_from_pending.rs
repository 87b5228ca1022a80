use argus_supervisor_lib::control::*;

// A local verdict can be made only by `RemoteTerminalLocalPending::validate`: an observer (or a
// controller) has no way to produce a `Validated`.
fn verdict(observer: Observer) -> Validated {
    let (_, v) = observer.validate(Verdict::Accepted);
    v
}

fn main() {}
