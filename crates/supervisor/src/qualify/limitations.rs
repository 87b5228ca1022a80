//! §25's "known limitations", kept with the code they are about: a change that lifts one removes
//! its line here, and the report says what is left.

/// What this build does not do, or has not been shown to do, as of now.
pub const KNOWN: [&str; 6] = [
    "A remote without the campaign-control extension (Agent Zero's own A2A server, today's OpenTraining, among them) is supervised read-only: no lease can be held there, so nothing is submitted, intervened on or cancelled (`observer_only`). The mutating path is proven against the simulated remote (crates/sim), which no real server matches yet.",
    "The models behind Argus, Foreman and Agent Zero are scripted doubles in every test (their runtimes are real): what a real model decides is not tested.",
    "Both images are built and run in CI on bases made locally (Debian from mmdebstrap; the OpenOperator base from the vendored tree at 3fa8481b), with buildah and podman (runc, cgroupfs, host network): the production bases cannot be pulled there, and the HF Space itself is never built or deployed from CI.",
    "Agent Zero keeps its A2A tasks in memory: a restart of the remote forgets every task and lease, and a watched task is then lost (`observing.task_not_found`, told once); nothing is submitted again on its own.",
    "Notifications in OpenOperator cover needs-you, attempt outcomes, mission complete, critical failures and the remote answering again; other feed lines (a reattachment after a restart among them) are seen in the feed only.",
    "`bench --check` runs in CI at 2,000 campaigns; at 500 campaigns the flat-out per-poll cost is measured at 2.5–2.8× its floor on a 2-core machine, above its own 2.5× target.",
];
