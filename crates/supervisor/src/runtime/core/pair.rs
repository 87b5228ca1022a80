//! The core and a remote in memory, as quinn's `Pair`: every call the core asks for is sent to a
//! remote that keeps leases as the contract says (fencing epochs, one answer per request id),
//! through the driver's own `send`, on a clock the test moves. No socket, no disk, no sleep:
//! the core's lease and write paths, driven and checked by what reached the remote.

use super::*;
use crate::control::memory::{ManualClock, MemoryRemote};
use crate::runtime::reduce::AnswerTo;
use crate::runtime::reply::{Outcome, RefusedBy};
use crate::runtime::OperatorCommand;
use argus_machines::{CampaignRecord, ControllerId, RemoteState, StateName};
use std::collections::BTreeSet;

const START: u64 = 1_000_000;

/// The remote in memory, on a clock the test moves.
type Remote = MemoryRemote<ManualClock>;

/// Every kind of call a core asks for.
const EVERY_KIND: [&str; 13] = [
    "adopt",
    "cancel",
    "claim",
    "confirm",
    "evidence",
    "intervene",
    "poll",
    "readback",
    "release",
    "renew",
    "request_status",
    "still_ours",
    "submit",
];

/// A core and the remote in memory.
struct Pair {
    core: Core,
    remote: Remote,
    clock: ManualClock,
    /// The kinds of call the core asked for.
    kinds: BTreeSet<&'static str>,
    /// The machine's record at each write-ahead: what a crash would leave on disk.
    persisted: Vec<CampaignRecord>,
    rt: tokio::runtime::Runtime,
}

impl Pair {
    fn new() -> Pair {
        let config = RuntimeConfig::new(ControllerId::new("us"));
        let machine = CampaignMachine::new("c1", ControllerId::new("us"), config.policy());
        let clock = ManualClock::at(START);
        Pair::around(
            machine,
            vec![],
            (Remote::new(clock.clone()), clock),
            BTreeSet::new(),
        )
    }

    /// A core around `machine` (restored with `entry` to perform first), on `remote`.
    fn around(
        machine: CampaignMachine,
        entry: Vec<Action>,
        (remote, clock): (Remote, ManualClock),
        kinds: BTreeSet<&'static str>,
    ) -> Pair {
        let config = RuntimeConfig::new(ControllerId::new("us"));
        let doc = CampaignDoc::new(&machine, "train", START);
        let (stats, now) = (Arc::new(Stats::default()), Instant::now());
        let env = Env::new(Arc::new(config), stats, now, Box::new(|| false));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap_or_else(|e| panic!("a runtime: {e}"));
        let mut pair = Pair {
            core: Core::new(machine, doc, Arc::new(env)).0,
            remote,
            clock,
            kinds,
            persisted: vec![],
            rt,
        };
        if !entry.is_empty() {
            let now = pair.now();
            pair.core.start(entry, Some(now.at), now);
            pair.step(Input::Due(Due::Tick));
        }
        pair
    }

    /// The process stops dead after the `n`th write-ahead and starts again from what it left.
    fn restart_from(self, n: usize) -> Pair {
        let record = self.persisted[n].clone();
        let policy = RuntimeConfig::new(ControllerId::new("us")).policy();
        let (machine, entry) =
            CampaignMachine::restore(&record, policy).unwrap_or_else(|e| panic!("restore: {e:?}"));
        Pair::around(machine, entry, (self.remote, self.clock), self.kinds)
    }

    /// The clock the core is given: the remote's, read now.
    fn now(&self) -> Now {
        Now::read(&self.remote)
    }

    fn later(&self, seconds: u64) {
        self.clock.advance(seconds);
    }

    fn state(&self) -> StateName {
        self.core.machine.state_name()
    }

    /// Hand the core one input and perform what it asks, as the driver does (every write-ahead
    /// succeeds); its reply.
    fn step(&mut self, input: Input) -> Option<Reply> {
        self.core.handle(input, self.now());
        let mut reply = None;
        while let Some(effect) = self.core.poll_effect(self.now()) {
            let now = self.now();
            match effect {
                Effect::ReadLog => self.core.advance(Performed::Log(vec![]), now),
                Effect::Persist { .. } => {
                    self.persisted.push(self.core.machine.record());
                    self.core.advance(Performed::Persisted(true), now);
                }
                Effect::Reply(r) => reply = Some(r),
                Effect::KeepAnswer(_) => {
                    self.core.advance(Performed::Kept(Ok(AnswerTo::Argus)), now);
                }
                Effect::Call(request) => {
                    let waiting = self.core.busy.as_ref().and_then(|b| b.waiting.as_ref());
                    self.kinds.insert(waiting.map_or("none", Waiting::name));
                    let sent = crate::control::send(&self.remote, &self.remote, request);
                    let response = self.rt.block_on(sent);
                    self.core
                        .advance(Performed::Called(Box::new(response)), now);
                }
                Effect::Subscribe(_) | Effect::Crash => {
                    panic!("no stream and no crash here")
                }
                Effect::Record(_) => {
                    let written = Performed::Recorded(super::Entered::Written);
                    self.core.advance(written, now);
                }
                Effect::Noticed(_) | Effect::Wake(_) | Effect::Closed | Effect::Unsubscribe => {}
            }
        }
        reply
    }

    fn command(&mut self, c: OperatorCommand) -> CommandReply {
        let input = Input::Command {
            command: c,
            actor: Actor::Operator,
            remote: RemoteAbility::everything(),
        };
        match self.step(input) {
            Some(Reply::Command(r)) => r,
            other => panic!("expected a command's reply, got {other:?}"),
        }
    }

    fn tick(&mut self) {
        self.step(Input::Due(Due::Tick));
    }
}

/// Claim, submit, intervene, renew and release: each goes out once, under the epoch the
/// remote granted, and the lease is renewed before it ends.
fn claim_write_renew_release(pair: &mut Pair) {
    assert_eq!(
        pair.command(OperatorCommand::claim()).outcome(),
        Outcome::Done
    );
    assert_eq!(pair.state(), StateName::Ready);
    let r = pair.command(OperatorCommand::submit(Some("attempt 1".into())));
    assert_eq!(r.outcome(), Outcome::Done, "{r:?}");
    assert_eq!(pair.state(), StateName::Running);
    let r = pair.command(OperatorCommand::intervene("smaller batch".into()));
    assert_eq!(r.outcome(), Outcome::Done, "{r:?}");
    // The heartbeat asks whether the lease is still ours, and renews it in its window.
    pair.later(120);
    pair.tick();
    pair.later(400);
    pair.tick();
    let r = pair.command(OperatorCommand::release());
    assert_eq!(r.outcome(), Outcome::Done, "{:?} {r:?}", pair.state());
    assert!(!pair.state().is_controlling(), "{:?}", pair.state());
    let writes: Vec<String> = (pair.remote.arrived().into_iter())
        .filter(|a| a.contains("epoch"))
        .collect();
    assert_eq!(
        writes,
        [
            "submit epoch 1",
            "intervene epoch 1",
            "renew epoch 1",
            "release epoch 1"
        ]
    );
}

#[test]
fn a_claim_renewal_and_every_write_go_out_once_under_the_epoch_the_remote_granted() {
    claim_write_renew_release(&mut Pair::new());
}

/// A submit whose answer is lost is read back, never sent again; the task it made is bound, and
/// cancelled under the same lease.
fn a_lost_answer_is_read_back(pair: &mut Pair) {
    pair.command(OperatorCommand::claim());
    pair.remote.with(|h| h.lose_next_answer = true);
    let r = pair.command(OperatorCommand::submit(Some("attempt 1".into())));
    assert_eq!(r.outcome(), Outcome::Ambiguous, "{r:?}");
    assert_eq!(pair.state(), StateName::AmbiguousWrite);
    // After the grace, the heartbeat reads it back.
    pair.later(120);
    pair.tick();
    assert_eq!(pair.state(), StateName::Running, "{:?}", pair.state());
    let submits = (pair.remote.arrived().iter())
        .filter(|a| a.starts_with("submit"))
        .count();
    assert_eq!(submits, 1, "{:?}", pair.remote.arrived());
    assert_eq!(pair.remote.with(|h| h.tasks.len()), 1);
    // The task it made is the one a cancel then stops.
    let r = pair.command(OperatorCommand::cancel("enough".into()));
    assert_eq!(r.outcome(), Outcome::Done, "{r:?}");
    assert!(pair
        .remote
        .arrived()
        .contains(&"cancel epoch 1".to_string()));
}

#[test]
fn a_write_whose_answer_is_lost_is_read_back_and_never_sent_twice() {
    a_lost_answer_is_read_back(&mut Pair::new());
}

/// Another controller takes the lease: the heartbeat's check finds it, control is lost, and no
/// write goes out under the old epoch (refused here, said so).
fn a_lease_taken_over_is_lost(pair: &mut Pair) {
    pair.command(OperatorCommand::claim());
    pair.remote.take_over("someone-else");
    pair.later(120);
    pair.tick();
    assert!(!pair.state().is_controlling(), "{:?}", pair.state());
    let arrived = pair.remote.arrived().len();
    let r = pair.command(OperatorCommand::submit(Some("attempt 1".into())));
    assert_eq!(r.outcome(), Outcome::ForbiddenInState, "{r:?}");
    assert_eq!(
        r.refusal_code().map(RefusalCode::by),
        Some(RefusedBy::Supervisor)
    );
    assert_eq!(
        pair.remote.arrived().len(),
        arrived,
        "nothing reached the remote"
    );
}

#[test]
fn a_lease_taken_over_is_lost_and_no_write_goes_out_under_the_old_epoch() {
    a_lease_taken_over_is_lost(&mut Pair::new());
}

/// A process stopped after a claim's write-ahead (the claim applied, its answer never read)
/// reads the request back and adopts the grant; one stopped while controlling confirms its lease.
fn a_restart_resolves_what_it_left(pair: Pair) -> Pair {
    let mut pair = pair;
    // A new campaign is detached already (observe without a task asks nothing of it).
    let before = pair.persisted.len();
    pair.command(OperatorCommand::claim());
    // The claim's write-ahead was the first after the observe.
    let mut pair = pair.restart_from(before);
    assert_eq!(pair.state(), StateName::Ready, "{:?}", pair.state());
    assert_eq!(pair.remote.with(|h| h.epoch), 1, "claimed once");
    // Stopped while controlling: confirmed on the way back.
    let last = pair.persisted.len() - 1;
    pair.tick();
    let mut pair = pair.restart_from(last);
    pair.tick();
    assert_eq!(pair.state(), StateName::Ready, "{:?}", pair.state());
    assert_eq!(pair.remote.with(|h| h.epoch), 1, "no second claim");
    pair
}

#[test]
fn a_restart_reads_back_a_claim_it_left_and_confirms_a_lease_it_held() {
    a_restart_resolves_what_it_left(Pair::new());
}

/// A finished attempt's evidence is read through the token the attempt left.
fn an_ended_attempt_is_read(pair: &mut Pair) {
    pair.command(OperatorCommand::claim());
    pair.command(OperatorCommand::submit(Some("attempt 1".into())));
    pair.remote.set("task-1", RemoteState::Completed);
    pair.later(120);
    pair.tick();
    assert!(
        pair.kinds.contains("evidence"),
        "{:?} in {:?}",
        pair.kinds,
        pair.state()
    );
}

#[test]
fn the_cores_own_tests_ask_for_every_kind_of_call() {
    let mut seen = BTreeSet::new();
    let mut pair = Pair::new();
    claim_write_renew_release(&mut pair);
    seen.extend(pair.kinds.iter().copied());
    let mut pair = Pair::new();
    a_lost_answer_is_read_back(&mut pair);
    seen.extend(pair.kinds.iter().copied());
    let mut pair = Pair::new();
    a_lease_taken_over_is_lost(&mut pair);
    seen.extend(pair.kinds.iter().copied());
    seen.extend(
        a_restart_resolves_what_it_left(Pair::new())
            .kinds
            .iter()
            .copied(),
    );
    let mut pair = Pair::new();
    an_ended_attempt_is_read(&mut pair);
    seen.extend(pair.kinds.iter().copied());
    let missing: Vec<&&str> = EVERY_KIND.iter().filter(|k| !seen.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "never asked for: {missing:?} (seen {seen:?})"
    );
}
