//! The core alone: no disk, no clock, no network. A test plays the driver: it performs nothing,
//! reports what it is told to, and checks what the core asked for, in order.

use super::*;
use crate::control::{Reading, RemoteError, Request, Response};
use crate::runtime::ledger::JournalEntry;
use crate::runtime::reduce::AnswerTo;
use crate::runtime::reply::Outcome;
use crate::runtime::reply::RefusedBy;
use crate::runtime::{OperatorCommand, QuestionSource};
use argus_machines::{ControllerId, Observation, ReadbackAnswer, RemoteState, TaskId};

const NOW: u64 = 1_000_000;

fn core() -> Core {
    core_on(RuntimeConfig::new(ControllerId::new("us")), false)
}

/// A core with `config`, on a remote whose card says it streams when `streams`.
fn core_on(config: RuntimeConfig, streams: bool) -> Core {
    let machine = CampaignMachine::new("c1", ControllerId::new("us"), config.policy());
    let doc = CampaignDoc::new(&machine, "train", NOW);
    let (stats, now) = (Arc::new(Stats::default()), Instant::now());
    let env = Env::new(Arc::new(config), stats, now, Box::new(move || streams));
    Core::new(machine, doc, Arc::new(env)).0
}

fn reading(state: RemoteState) -> Reading {
    Reading {
        observation: Observation {
            revision: Some(1),
            ..Observation::new(TaskId::new("t1"), state)
        },
        changed_at: Some(NOW_MS),
    }
}

/// When the remote says its task changed, in the readings above (Unix ms).
const NOW_MS: u64 = NOW * 1000;

/// What the driver was asked to do, in order, as words a test can compare.
#[derive(Default, Debug)]
struct Seen {
    steps: Vec<String>,
    reply: Option<Reply>,
}

/// Pump the core as the driver does: persist succeeds unless `disk_fails`; each poll answers
/// `answer`, an evidence read finds none; an answer to keep is kept for Argus; the event log is
/// empty. Any other call fails the test (see [`pump_with`]).
fn pump(core: &mut Core, input: Input, answer: &Reading, disk_fails: bool) -> Seen {
    pump_answering(core, input, NOW, answer, disk_fails)
}

/// A heartbeat at `now`, pumped as [`pump`] does.
fn tick(core: &mut Core, now: u64, answer: &Reading) -> Seen {
    pump_answering(core, Input::Due(Due::Tick), now, answer, false)
}

fn pump_answering(
    core: &mut Core,
    input: Input,
    now: u64,
    answer: &Reading,
    disk_fails: bool,
) -> Seen {
    pump_at(core, input, now, disk_fails, &mut |request| match request {
        Request::Status(_) => Response::Reading(Ok(answer.clone())),
        other => panic!("the core asked for a {} no test here answers", other.name()),
    })
}

/// The clock the core is given at `unix`.
fn at(unix: u64) -> Now {
    Now {
        unix,
        at: Instant::now(),
    }
}

/// [`pump`], the remote's part played by `respond`: what it answers to each request (a poll's
/// reading, a claim's grant, a write's acknowledgement or silence). An evidence read finds none
/// unless `respond` says otherwise.
fn pump_with(
    core: &mut Core,
    input: Input,
    disk_fails: bool,
    respond: &mut dyn FnMut(&Request) -> Response,
) -> Seen {
    pump_at(core, input, NOW, disk_fails, respond)
}

/// [`pump_with`] at `now`.
fn pump_at(
    core: &mut Core,
    input: Input,
    now: u64,
    disk_fails: bool,
    respond: &mut dyn FnMut(&Request) -> Response,
) -> Seen {
    pump_now(core, input, at(now), (disk_fails, Ok(())), respond)
}

/// [`pump_with`] on the clock `now`; a subscription the core asks for is answered `opens`.
fn pump_now(
    core: &mut Core,
    input: Input,
    now: Now,
    (disk_fails, opens): (bool, Result<(), RemoteError>),
    respond: &mut dyn FnMut(&Request) -> Response,
) -> Seen {
    core.handle(input, now);
    let mut seen = Seen::default();
    while let Some(effect) = core.poll_effect(now) {
        match effect {
            Effect::ReadLog => core.advance(Performed::Log(vec![]), now),
            Effect::Persist { .. } => {
                seen.steps.push("persist".into());
                core.advance(Performed::Persisted(!disk_fails), now);
            }
            Effect::Record(entry) => {
                seen.steps.push(match &entry {
                    JournalEntry::Document(_) => "document".into(),
                    JournalEntry::Publish(_) => "publish".into(),
                    JournalEntry::LeaseRecord(_) => "lease".into(),
                    JournalEntry::Event(l) => format!("event {}", l.event.class()),
                    JournalEntry::Feed(message) => format!("feed {:?}", message.kind),
                });
                core.advance(Performed::Recorded(Entered::Written), now);
            }
            Effect::Noticed(noticed) => {
                seen.steps.push(format!("noticed {:?}", noticed.changed_at));
            }
            Effect::Wake(wake) => seen.steps.push(match wake {
                Wake::Significant(s) => format!("significant {}", s.class()),
                Wake::Argus { reason, .. } => format!("wake {reason:?}"),
            }),
            Effect::Reply(reply) => seen.reply = Some(reply),
            Effect::Closed => {}
            Effect::Subscribe(task) => {
                seen.steps.push(format!("subscribe {task}"));
                core.advance(Performed::Subscribed(opens.clone()), now);
            }
            Effect::Unsubscribe => seen.steps.push("unsubscribe".into()),
            Effect::Crash => panic!("no crash here"),
            Effect::KeepAnswer(text) => {
                seen.steps.push(format!("keep {text}"));
                core.advance(Performed::Kept(Ok(AnswerTo::Argus)), now);
            }
            Effect::Call(request) => {
                seen.steps.push(match &request {
                    Request::Status(_) => "poll".into(),
                    other => other.name().into(),
                });
                let response = match &request {
                    // An ended attempt's evidence: the remote gave none.
                    Request::Evidence(task) => {
                        Response::Evidence(Ok(crate::control::memory::no_evidence(task.clone())))
                    }
                    other => respond(other),
                };
                core.advance(Performed::Called(Box::new(response)), now);
            }
        }
    }
    seen
}

fn observe() -> Input {
    Input::Command {
        command: OperatorCommand {
            command: Command::Observe {
                task: Some(TaskId::new("t1")),
            },
            intents: vec![],
            text: None,
        },
        actor: Actor::Operator,
        remote: RemoteAbility::everything(),
    }
}

fn command_reply(seen: &Seen) -> &CommandReply {
    match &seen.reply {
        Some(Reply::Command(r)) => r,
        other => panic!("expected a command's reply, got {other:?}"),
    }
}

#[test]
fn an_observe_is_persisted_before_its_poll_and_a_question_is_logged_before_anyone_is_woken() {
    let mut core = core();
    let asks = reading(RemoteState::InputRequired);
    let seen = pump(&mut core, observe(), &asks, false);
    let steps: Vec<&str> = seen.steps.iter().map(String::as_str).collect();
    let poll = steps.iter().position(|s| *s == "poll").expect("a poll");
    assert!(
        steps[..poll].contains(&"persist"),
        "write-ahead before the read: {steps:?}"
    );
    let logged = steps
        .iter()
        .position(|s| s.starts_with("event"))
        .expect("the question is logged");
    let told = steps
        .iter()
        .position(|s| s.starts_with("significant") || s.starts_with("wake"))
        .expect("the wake sink is told");
    assert!(logged < told, "logged before told: {steps:?}");
    assert_eq!(command_reply(&seen).outcome(), Outcome::Done);
    assert_eq!(
        core.ledger.doc().question_source,
        Some(QuestionSource::Remote)
    );
    // An unchanged reading at the next tick writes nothing and wakes nobody.
    let seen = tick(&mut core, NOW + 120, &asks);
    assert_eq!(seen.steps, ["poll"], "{:?}", seen.steps);
}

#[test]
fn a_change_the_remote_made_is_noticed_once_after_its_records_with_the_remotes_time() {
    let mut core = core();
    let seen = pump(&mut core, observe(), &reading(RemoteState::Working), false);
    let noticed: Vec<&String> = seen
        .steps
        .iter()
        .filter(|s| s.starts_with("noticed"))
        .collect();
    assert!(noticed.len() <= 1, "{:?}", seen.steps);
    // The remote asks, at its own time: one notice, measured once the event's record is written
    // (before the wake: the driver measures it as the records land).
    let asks = Reading {
        observation: Observation {
            revision: Some(2),
            ..reading(RemoteState::InputRequired).observation
        },
        changed_at: Some(NOW_MS + 4_250),
    };
    let seen = tick(&mut core, NOW + 120, &asks);
    let at = |what: &str| seen.steps.iter().position(|s| s.starts_with(what));
    let noticed = seen
        .steps
        .iter()
        .filter(|s| s.starts_with("noticed"))
        .count();
    assert_eq!(noticed, 1, "{:?}", seen.steps);
    assert_eq!(
        seen.steps[at("noticed").unwrap_or(0)],
        format!("noticed Some({})", NOW_MS + 4_250)
    );
    assert!(at("event") < at("noticed") && at("noticed") < at("significant"));
    // Read again, unchanged: nothing new, nothing noticed.
    let seen = tick(&mut core, NOW + 240, &asks);
    assert_eq!(seen.steps, ["poll"], "{:?}", seen.steps);
    // A change the remote gave no time for is noticed all the same, untimed.
    let untimed = Reading {
        observation: Observation {
            revision: Some(3),
            ..reading(RemoteState::Working).observation
        },
        changed_at: None,
    };
    let seen = tick(&mut core, NOW + 360, &untimed);
    assert!(
        seen.steps.contains(&"noticed None".to_string()),
        "{:?}",
        seen.steps
    );
}

#[test]
fn a_step_that_cannot_be_persisted_is_undone_and_nothing_it_decided_is_sent() {
    let mut core = core();
    let before = core.machine.record();
    let seen = pump(&mut core, observe(), &reading(RemoteState::Working), true);
    assert_eq!(
        seen.steps,
        ["persist"],
        "no poll, no record: {:?}",
        seen.steps
    );
    let r = command_reply(&seen);
    assert!(r.storage_failed && !r.accepted);
    assert_eq!(core.machine.record(), before, "the machine went back");
}

#[test]
fn a_claim_without_its_commands_intent_is_never_sent() {
    let mut core = core();
    pump(&mut core, observe(), &reading(RemoteState::Working), false);
    let claim = Input::Command {
        command: OperatorCommand {
            command: Command::Claim {
                request_id: argus_machines::RequestId::new("not-minted-here"),
            },
            intents: vec![],
            text: None,
        },
        actor: Actor::Operator,
        remote: RemoteAbility::everything(),
    };
    // `pump` panics if a claim call is asked for.
    let seen = pump(&mut core, claim, &reading(RemoteState::Working), false);
    let r = command_reply(&seen);
    assert_eq!(r.outcome(), Outcome::Refused);
    assert_eq!(r.refusal, Some(RefusalCode::ForbiddenInState));
}

#[test]
fn an_answer_is_routed_by_who_asked() {
    // Nobody asked.
    let mut core = core();
    let quiet = reading(RemoteState::Working);
    let answer = || Input::Answer {
        intervention: OperatorCommand::intervene("use the smaller batch".into()),
        remote: RemoteAbility::everything(),
    };
    let seen = pump(&mut core, answer(), &quiet, false);
    assert!(matches!(
        seen.reply,
        Some(Reply::Answer(AnswerReply::NothingPending(_)))
    ));
    // Argus asked: the answer is kept for it first, then the question is answered.
    let ask = Input::Notice {
        kind: MessageKind::NeedsYou,
        text: "Which dataset?".into(),
    };
    pump(&mut core, ask, &quiet, false);
    let seen = pump(&mut core, answer(), &quiet, false);
    assert_eq!(seen.steps[0], "keep use the smaller batch");
    assert!(seen.steps.contains(&"document".to_string()));
    assert!(matches!(
        seen.reply,
        Some(Reply::Answer(AnswerReply::Kept(AnswerTo::Argus)))
    ));
    assert_eq!(core.ledger.doc().pending_question, None);
    // The remote asks: the answer is an intervention, which an observer cannot send.
    let mut core = self::core();
    let asks = reading(RemoteState::InputRequired);
    pump(&mut core, observe(), &asks, false);
    let seen = pump(&mut core, answer(), &asks, false);
    assert!(
        !seen.steps.iter().any(|s| s.starts_with("keep")),
        "{:?}",
        seen.steps
    );
    match seen.reply {
        Some(Reply::Answer(AnswerReply::Intervened(r))) => {
            assert_eq!(r.outcome(), Outcome::ForbiddenInState)
        }
        other => panic!("expected an intervention's reply, got {other:?}"),
    }
    assert!(core.ledger.doc().pending_question.is_some(), "still asked");
}

#[test]
fn a_failed_read_is_a_condition_for_the_machine_never_a_write() {
    let mut core = core();
    pump(&mut core, observe(), &reading(RemoteState::Working), false);
    core.handle(Input::Due(Due::Tick), at(NOW + 120));
    let mut made = vec![];
    while let Some(effect) = core.poll_effect(at(NOW)) {
        match effect {
            Effect::Persist { .. } => core.advance(Performed::Persisted(true), at(NOW)),
            Effect::Call(request) => {
                made.push(matches!(request, Request::Status(_)));
                let failed = Response::Reading(Err(RemoteError::TaskNotFound));
                core.advance(Performed::Called(Box::new(failed)), at(NOW));
            }
            _ => {}
        }
    }
    assert_eq!(made, [true], "one poll, nothing else");
}

/// What an observer-only remote allows: reads.
fn observer_only() -> RemoteAbility {
    RemoteAbility {
        can: argus_machines::RemoteCan::OBSERVE_ONLY,
        writes_refused: None,
    }
}

#[test]
fn a_verb_the_remote_cannot_carry_out_is_refused_before_the_machine_and_changes_nothing() {
    // On an observer-only remote: next-attempt (a claim, then a submit) from a finished attempt,
    // and a claim of a running one, are the state's to take, not the remote's.
    let request = argus_machines::RequestId::new;
    for (state, command, taken_instead) in [
        (
            RemoteState::Completed,
            Command::NextAttempt {
                claim_request: request("c"),
                submit_request: request("s"),
            },
            argus_machines::Verb::Accept,
        ),
        (
            RemoteState::Working,
            Command::Claim {
                request_id: request("c2"),
            },
            argus_machines::Verb::Pause,
        ),
    ] {
        let mut core = core();
        pump(&mut core, observe(), &reading(state), false);
        let (before, doc_before) = (core.machine.record(), core.ledger.doc().clone());
        let input = Input::Command {
            command: OperatorCommand {
                command,
                intents: vec![WriteIntent::fresh()],
                text: Some("again".into()),
            },
            actor: Actor::Operator,
            remote: observer_only(),
        };
        // `pump` panics on a claim or a write; nothing is persisted or recorded either.
        let seen = pump(&mut core, input, &reading(state), false);
        assert!(seen.steps.is_empty(), "{:?}", seen.steps);
        let r = command_reply(&seen);
        assert_eq!(r.outcome(), Outcome::Refused);
        assert_eq!(r.refusal, Some(RefusalCode::ObserverOnly));
        assert_eq!(r.refusal.map(RefusalCode::by), Some(RefusedBy::Supervisor));
        // What is still possible is said, and needs nothing but reads.
        assert!(r.allowed.contains(&taken_instead), "{:?}", r.allowed);
        assert!(r
            .allowed
            .iter()
            .all(|v| v.needs() == argus_machines::RemoteCan::OBSERVE_ONLY));
        assert_eq!(core.machine.record(), before);
        assert_eq!(*core.ledger.doc(), doc_before);
    }
    // A remote that takes no new work now (quarantined): refused with that reason.
    let mut core = core();
    pump(&mut core, observe(), &reading(RemoteState::Working), false);
    let input = Input::Command {
        command: OperatorCommand {
            command: Command::Claim {
                request_id: request("c3"),
            },
            intents: vec![],
            text: None,
        },
        actor: Actor::Operator,
        remote: RemoteAbility {
            can: argus_machines::RemoteCan::EVERYTHING,
            writes_refused: Some(RemoteError::CardNotQualified("quarantined")),
        },
    };
    let seen = pump(&mut core, input, &reading(RemoteState::Working), false);
    assert!(seen.steps.is_empty(), "{:?}", seen.steps);
    assert_eq!(
        command_reply(&seen).refusal,
        Some(RefusalCode::CardNotQualified)
    );
}

/// An operator's command, as the API hands it to the core.
fn operator(c: crate::runtime::OperatorCommand) -> Input {
    Input::Command {
        command: c,
        actor: Actor::Operator,
        remote: RemoteAbility::everything(),
    }
}

/// Our lease, as the remote grants it at `epoch`, for the policy's default term.
fn granted(epoch: u64) -> argus_machines::Lease {
    argus_machines::Lease {
        controller_id: ControllerId::new("us"),
        epoch,
        expires_at: NOW + 600,
    }
}

/// Another controller's lease, granted after ours.
fn theirs() -> argus_machines::Lease {
    argus_machines::Lease {
        controller_id: ControllerId::new("someone-else"),
        ..granted(2)
    }
}

/// The remote's part, played by a table: a claim is granted at epoch 1, the lease read names
/// us, a renewal extends it, a release is taken; a write is answered by `write`. Every request is
/// written down, by name.
fn remote<'a>(
    sent: &'a mut Vec<&'static str>,
    write: &'a mut dyn FnMut() -> Response,
) -> impl FnMut(&Request) -> Response + 'a {
    move |request| {
        sent.push(request.name());
        match request {
            Request::Claim(_) => Response::Lease(Ok(granted(1))),
            Request::ReadControl(_) => Response::Control(Ok(Some(granted(1)))),
            Request::Renew { .. } => Response::Lease(Ok(argus_machines::Lease {
                expires_at: NOW + 1200,
                ..granted(1)
            })),
            Request::Release(_) => Response::Released(Ok(())),
            Request::Write { .. } => write(),
            Request::Status(_) => Response::Reading(Ok(reading(RemoteState::Working))),
            Request::Evidence(_) | Request::RequestStatus { .. } => {
                panic!("{} is answered by the test itself", request.name())
            }
        }
    }
}

#[test]
fn the_core_claims_and_writes_under_the_grant_it_read_itself_with_no_transport() {
    use crate::runtime::OperatorCommand as Op;
    let mut core = core();
    let mut sent = vec![];
    let mut acked = || Response::Written(Ok(Some(TaskId::new("t1"))));
    let seen = pump_with(
        &mut core,
        operator(Op::claim()),
        false,
        &mut remote(&mut sent, &mut acked),
    );
    assert_eq!(command_reply(&seen).outcome(), Outcome::Done, "{seen:?}");
    // The claim's intent is on disk before the claim goes out.
    let at = |what: &str| seen.steps.iter().position(|s| s == what);
    assert!(at("persist") < at("claim_control"), "{:?}", seen.steps);
    assert_eq!(core.machine.held_lease(), Some(&granted(1)));
    // Its submit goes out once, under the epoch the core read from the grant.
    let seen = pump_with(
        &mut core,
        operator(Op::submit(Some("attempt 1".into()))),
        false,
        &mut remote(&mut sent, &mut acked),
    );
    assert_eq!(command_reply(&seen).outcome(), Outcome::Done, "{seen:?}");
    assert_eq!(core.machine.state_name(), StateName::Running);
    // (Then the task it made is read.)
    assert_eq!(sent, ["claim_control", "submit", "status"]);
    // A grant not ours is refused as the machine judges it, and nothing is written under it.
    let mut core = self::core();
    let mut not_ours = |request: &Request| match request {
        Request::Claim(_) => Response::Lease(Ok(theirs())),
        other => panic!("{} after a refused claim", other.name()),
    };
    let seen = pump_with(&mut core, operator(Op::claim()), false, &mut not_ours);
    assert_ne!(command_reply(&seen).outcome(), Outcome::Done, "{seen:?}");
    assert!(!core.machine.state_name().is_controlling());
}

#[test]
fn a_write_answered_with_silence_is_read_back_after_its_grace_never_sent_again() {
    use crate::runtime::OperatorCommand as Op;
    let mut core = core();
    let mut sent = vec![];
    let mut silent = || Response::Written(Err(RemoteError::TimeoutAfterSend));
    let mut respond = remote(&mut sent, &mut silent);
    pump_with(&mut core, operator(Op::claim()), false, &mut respond);
    let seen = pump_with(
        &mut core,
        operator(Op::submit(Some("attempt 1".into()))),
        false,
        &mut respond,
    );
    assert_eq!(
        command_reply(&seen).outcome(),
        Outcome::Ambiguous,
        "{seen:?}"
    );
    assert_eq!(core.machine.state_name(), StateName::AmbiguousWrite);
    // Within the grace the heartbeat reads the task, never the write.
    let mut within = |r: &Request| match r {
        Request::RequestStatus { .. } | Request::Write { .. } => panic!("{} too early", r.name()),
        _ => respond(r),
    };
    pump_at(
        &mut core,
        Input::Due(Due::Tick),
        NOW + 30,
        false,
        &mut within,
    );
    // After it: read back (applied, with its task), never resent.
    let later = NOW + 200;
    let mut answered = |r: &Request| match r {
        Request::RequestStatus { .. } => Response::Readback(Ok(ReadbackAnswer::Applied {
            task: Some(TaskId::new("t1")),
        })),
        Request::Write { .. } => panic!("the write was sent again"),
        _ => respond(r),
    };
    let seen = pump_at(
        &mut core,
        Input::Due(Due::Tick),
        later,
        false,
        &mut answered,
    );
    assert!(
        seen.steps.contains(&"request_status".to_string()),
        "{seen:?}"
    );
    assert_ne!(core.machine.state_name(), StateName::AmbiguousWrite);
    drop(respond);
    assert_eq!(
        sent.iter().filter(|s| **s == "submit").count(),
        1,
        "{sent:?}"
    );
}

#[test]
fn a_lease_another_holds_now_is_lost_and_an_expired_one_sends_nothing() {
    use crate::runtime::OperatorCommand as Op;
    let mut core = core();
    let mut sent = vec![];
    let mut never = || -> Response { panic!("no write in this test") };
    pump_with(
        &mut core,
        operator(Op::claim()),
        false,
        &mut remote(&mut sent, &mut never),
    );
    // The heartbeat's renewal is answered with another holder: control is lost.
    let later = NOW + 400;
    let mut taken = |r: &Request| match r {
        Request::Renew { .. } => Response::Lease(Ok(theirs())),
        Request::ReadControl(_) => Response::Control(Ok(Some(theirs()))),
        Request::Status(_) => Response::Reading(Ok(reading(RemoteState::Working))),
        other => panic!("{} after the lease moved on", other.name()),
    };
    pump_at(&mut core, Input::Due(Due::Tick), later, false, &mut taken);
    assert!(
        !core.machine.state_name().is_controlling(),
        "{:?}",
        core.machine.state_name()
    );
    // A lease past its term (by the policy's margin) is never used: nothing is sent under it.
    let mut core = self::core();
    pump_with(
        &mut core,
        operator(Op::claim()),
        false,
        &mut remote(&mut sent, &mut never),
    );
    let expired = NOW + 600;
    let mut nothing = |r: &Request| match r {
        Request::Status(_) => Response::Reading(Ok(reading(RemoteState::Working))),
        Request::ReadControl(_) => Response::Control(Ok(Some(granted(1)))),
        other => panic!("{} under an expired lease", other.name()),
    };
    pump_at(
        &mut core,
        Input::Due(Due::Tick),
        expired,
        false,
        &mut nothing,
    );
    assert!(
        !core.machine.state_name().is_controlling(),
        "{:?}",
        core.machine.state_name()
    );
}

/// The stream's life, driven through the core alone: it asks for a subscription once its task is
/// live (a place under the cap taken), reads what a bell rang for, drops the stream when it ends
/// and falls back to hot polls within the shared budget, and asks again after its backoff.
#[test]
fn the_core_asks_for_its_stream_reads_its_bells_and_falls_back_to_polling_when_it_ends() {
    use crate::control::{StreamEnd, Update};
    use crate::runtime::OperatorCommand as Op;
    let config = RuntimeConfig {
        max_streams: 1,
        hot_poll: Some(std::time::Duration::from_secs(2)),
        hot_budget_rps: 1.0,
        ..RuntimeConfig::new(ControllerId::new("us"))
    };
    let mut core = core_on(config, true);
    let mut sent = vec![];
    let mut acked = || Response::Written(Ok(Some(TaskId::new("t1"))));
    let mut respond = remote(&mut sent, &mut acked);
    pump_with(&mut core, operator(Op::claim()), false, &mut respond);
    let submit = operator(Op::submit(Some("attempt 1".into())));
    let seen = pump_with(&mut core, submit, false, &mut respond);
    // The task is live: a stream is asked for, under the cap, and no hot poll is counted.
    assert_eq!(
        seen.steps.last().map(String::as_str),
        Some("subscribe t1"),
        "{seen:?}"
    );
    let env = core.env.clone();
    let open = || env.streams.open.load(Ordering::Relaxed);
    let live = || env.hot.live.load(Ordering::Relaxed);
    assert_eq!((open(), live()), (1, 0));
    // A bell rings for a read, which is made when it falls due, and nothing else.
    let bell = Input::Stream(Some(Ok(Update::Bell)));
    assert!(pump_with(&mut core, bell, false, &mut respond)
        .steps
        .is_empty());
    let (_, due) = core.poll_timeout().expect("a read is due");
    assert_eq!(due, Due::Bell);
    let seen = pump_with(&mut core, Input::Due(Due::Bell), false, &mut respond);
    assert_eq!(seen.steps, ["poll"], "{seen:?}");
    // The stream ends: it is dropped and its place given back; what changed meanwhile is read at
    // once, and the task is hot polled until the stream is asked for again.
    let end = Input::Stream(Some(Err(StreamEnd::Silent)));
    let seen = pump_with(&mut core, end, false, &mut respond);
    assert_eq!(seen.steps, ["unsubscribe"], "{seen:?}");
    assert_eq!((open(), live()), (0, 1));
    assert_eq!(core.poll_timeout().map(|(_, due)| due), Some(Due::Bell));
    pump_with(&mut core, Input::Due(Due::Bell), false, &mut respond);
    // A hot poll within the budget: the bucket holds one request; the next waits for it.
    let seen = pump_with(&mut core, Input::Due(Due::Glance), false, &mut respond);
    assert_eq!(seen.steps, ["poll"], "{seen:?}");
    let seen = pump_with(&mut core, Input::Due(Due::Glance), false, &mut respond);
    assert!(seen.steps.is_empty(), "{seen:?}");
    assert_eq!(env.stats.hot_deferred.load(Ordering::Relaxed), 1);
    // Before its backoff the stream is not asked for; after it, it is, and a refusal gives the
    // place back and backs off further.
    let soon = pump_with(&mut core, Input::Due(Due::Reopen), false, &mut respond);
    assert!(soon.steps.is_empty(), "{soon:?}");
    let later = Now {
        unix: NOW,
        at: Instant::now() + std::time::Duration::from_secs(2),
    };
    let refused = (false, Err(RemoteError::Unavailable));
    let seen = pump_now(
        &mut core,
        Input::Due(Due::Reopen),
        later,
        refused,
        &mut respond,
    );
    assert_eq!(seen.steps, ["subscribe t1"], "{seen:?}");
    assert_eq!((open(), live()), (0, 1));
    assert_eq!(env.stats.stream_open_failures.load(Ordering::Relaxed), 1);
    // The campaign's core dropped: it leaves the count of live campaigns.
    drop(core);
    assert_eq!(live(), 0);
}

/// `input` pumped with every record reported as `refuse` says (refused or written), the remote
/// answering every poll with `answer`; the feed lines given, in order.
fn feed_given(
    core: &mut Core,
    input: Input,
    answer: &Reading,
    refuse: fn(&JournalEntry) -> bool,
) -> Vec<String> {
    let now = at(NOW);
    core.handle(input, now);
    let mut feed = vec![];
    while let Some(effect) = core.poll_effect(now) {
        let report = match effect {
            Effect::ReadLog => Performed::Log(vec![]),
            Effect::Persist { .. } => Performed::Persisted(true),
            Effect::Record(entry) => {
                if let JournalEntry::Feed(m) = &entry {
                    feed.push(m.text.clone());
                }
                let refused = refuse(&entry);
                Performed::Recorded(if refused {
                    Entered::Refused
                } else {
                    Entered::Written
                })
            }
            Effect::Call(_) => Performed::Called(Box::new(Response::Reading(Ok(answer.clone())))),
            _ => continue,
        };
        core.advance(report, now);
    }
    feed
}

#[test]
fn a_feed_line_the_disk_refused_is_owed_and_given_first_and_counted_in_order() {
    let read = |revision, state, stage: &str| Reading {
        observation: Observation {
            revision: Some(revision),
            stage: Some(stage.into()),
            ..Observation::new(TaskId::new("t1"), state)
        },
        changed_at: Some(NOW_MS),
    };
    let mut core = core();
    let all_written = |_: &JournalEntry| false;
    let working = read(1, RemoteState::Working, "preprocessing");
    feed_given(&mut core, observe(), &working, all_written);
    assert_eq!(core.ledger.doc().feed_written, 0);
    // The stage changes; the disk refuses the feed.
    let training = read(2, RemoteState::Working, "training");
    let refused = feed_given(&mut core, Input::Due(Due::Tick), &training, |e| {
        matches!(e, JournalEntry::Feed(_))
    });
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(core.ledger.owes());
    assert_eq!(core.ledger.doc().feed_written, 0, "nothing counted");
    assert_eq!(core.ledger.owed().map(|m| &m.text), refused.first());
    // The next reading's line comes after the owed one, and each is counted once written.
    let completed = read(3, RemoteState::Completed, "evaluation");
    let next = feed_given(&mut core, Input::Due(Due::Tick), &completed, all_written);
    assert_eq!(
        next.first(),
        refused.first(),
        "the owed line first: {next:?}"
    );
    assert!(next.len() > 1, "then the new one: {next:?}");
    assert!(!core.ledger.owes());
    assert_eq!(core.ledger.doc().feed_written as usize, next.len());
}
