//! The ledger alone, without a disk: what each fact writes, in what order.
use super::*;
use crate::runtime::reply::{CommandReply, RefusalCode};
use crate::runtime::RuntimeConfig;
use argus_machines::{
    BlockReason, Command, ControllerId, Event, Lease, RemoteState, RequestId, TaskId,
};

const NOW: u64 = 1_000_000;

fn machine() -> CampaignMachine {
    let config = RuntimeConfig::new(ControllerId::new("us"));
    CampaignMachine::new("c1", ControllerId::new("us"), config.policy())
}

fn lease(expires_at: u64) -> Lease {
    Lease {
        controller_id: ControllerId::new("us"),
        epoch: 1,
        expires_at,
    }
}

/// A ledger around a fresh campaign's document, published.
fn ledger(m: &CampaignMachine) -> Ledger {
    let doc = Arc::new(CampaignDoc::new(m, "train", NOW));
    let mut l = Ledger::open(m, doc);
    assert_eq!(
        l.doc().machine,
        m.record(),
        "a fresh document holds the machine's record"
    );
    l.publish();
    l
}

/// The machine holding a lease until `NOW + 600`, ready.
fn controlling(m: &mut CampaignMachine) {
    m.step(&Event::Operator(Command::Claim {
        request_id: RequestId::new("r1"),
    }));
    let s = m.step(&Event::LeaseGranted {
        lease: lease(NOW + 600),
        now: NOW,
    });
    assert!(s.changed);
    assert_eq!(m.state_name(), StateName::Ready);
}

fn observation(task: &str) -> Observation {
    Observation::new(TaskId::new(task), RemoteState::Working)
}

#[test]
fn a_step_that_moves_writes_the_document_then_the_lease_record_and_extends_the_path() {
    let mut m = machine();
    let mut l = ledger(&m);
    controlling(&mut m);
    let p = l.step(&m, NOW);
    assert!(!p.renewal);
    assert_eq!(
        p.writes,
        vec![
            LocalWrite::Document,
            LocalWrite::LeaseRecord(Some(lease(NOW + 600)))
        ]
    );
    assert_eq!(l.doc().path.last(), Some(&StateName::Ready));
    assert_eq!(l.doc().updated_at, NOW);
    // The same lease again is no new lease record.
    let again = l.step(&m, NOW + 1);
    assert_eq!(again.writes, vec![LocalWrite::Document]);
}

#[test]
fn a_renewal_alone_is_published_and_goes_to_the_lease_record_never_the_document() {
    let mut m = machine();
    let mut l = ledger(&m);
    controlling(&mut m);
    l.step(&m, NOW);
    l.publish();
    // Into the renewal window: the machine asks to renew, and the remote grants a later expiry.
    m.step(&Event::Tick { now: NOW + 550 });
    let grant = m.step(&Event::LeaseGranted {
        lease: lease(NOW + 1_200),
        now: NOW + 550,
    });
    assert!(grant.changed);
    let p = l.step(&m, NOW + 550);
    assert!(p.renewal, "only the expiry moved");
    assert_eq!(
        p.writes,
        vec![
            LocalWrite::Publish,
            LocalWrite::LeaseRecord(Some(lease(NOW + 1_200)))
        ]
    );
    assert_eq!(l.doc().updated_at, NOW, "the document is as last written");
}

#[test]
fn a_renewal_after_an_unpublished_change_writes_the_document() {
    let mut m = machine();
    let mut l = ledger(&m);
    controlling(&mut m);
    l.step(&m, NOW);
    l.publish();
    l.observed(&observation("t1"), NOW);
    m.step(&Event::Tick { now: NOW + 550 });
    m.step(&Event::LeaseGranted {
        lease: lease(NOW + 1_200),
        now: NOW + 550,
    });
    let p = l.step(&m, NOW + 550);
    assert!(p.renewal);
    assert_eq!(p.writes.first(), Some(&LocalWrite::Document));
}

#[test]
fn a_significant_event_is_logged_once_with_its_feed_line_and_question() {
    let m = machine();
    let mut l = ledger(&m);
    let sig = Significant::Blocked {
        reason: BlockReason::NeedsInput,
    };
    let writes = l.surface(&m, &sig, NOW).expect("new");
    assert!(
        matches!(writes.first(), Some(LocalWrite::Event(line)) if line.event == sig && line.at == NOW)
    );
    assert!(matches!(
        writes.get(1),
        Some(LocalWrite::Feed { derived: true, message }) if message.kind == MessageKind::NeedsYou
    ));
    assert_eq!(writes.last(), Some(&LocalWrite::Document));
    assert_eq!(l.doc().question_source, Some(QuestionSource::Remote));
    assert!(l.doc().pending_question.is_some());
    assert_eq!(l.doc().latest_significant_event.as_ref(), Some(&sig));
    assert_eq!(
        l.surface(&m, &sig, NOW + 1),
        None,
        "a duplicate is no write"
    );
}

#[test]
fn an_answer_kept_clears_the_question_and_says_so_in_the_feed() {
    let m = machine();
    let mut l = ledger(&m);
    l.notice(&m, MessageKind::NeedsYou, "Which dataset?", NOW);
    assert_eq!(l.doc().question_source, Some(QuestionSource::Argus));
    let writes = l.answered(&m, "the second", NOW);
    assert!(matches!(
        writes.first(),
        Some(LocalWrite::Feed { derived: false, message }) if message.text == "Operator answered: the second"
    ));
    assert_eq!(writes.last(), Some(&LocalWrite::Document));
    assert_eq!(l.doc().pending_question, None);
}

#[test]
fn a_remote_question_stays_until_a_taken_command_leaves_awaiting_input() {
    let m = machine();
    let mut l = ledger(&m);
    let sig = Significant::Blocked {
        reason: BlockReason::NeedsInput,
    };
    l.surface(&m, &sig, NOW);
    assert_eq!(
        l.commanded(&m, false),
        vec![],
        "a refused command answers nothing"
    );
    assert_eq!(l.commanded(&m, true), vec![LocalWrite::Document]);
    assert_eq!(l.doc().pending_question, None);
    assert_eq!(l.doc().question_source, None);
}

#[test]
fn the_log_resumes_and_only_the_feed_lines_a_crash_left_unwritten_are_written() {
    let m = machine();
    let mut first = ledger(&m);
    let a = Significant::Blocked {
        reason: BlockReason::NeedsInput,
    };
    let b = Significant::Blocked {
        reason: BlockReason::EpochWentBackwards,
    };
    let mut log = vec![];
    for (sig, at) in [(&a, NOW), (&b, NOW + 1)] {
        for w in first.surface(&m, sig, at).expect("new") {
            if let LocalWrite::Event(line) = w {
                log.push(line);
            }
        }
    }
    let mut doc = CampaignDoc::new(&m, "train", NOW);
    doc.feed_written = 1;
    let mut l = Ledger::open(&m, Arc::new(doc));
    let backlog = l.resume(&log);
    assert_eq!(backlog.len(), 1, "{backlog:?}");
    assert!(matches!(
        &backlog[0],
        LocalWrite::Feed { derived: true, .. }
    ));
    l.fed();
    assert_eq!(l.doc().feed_written, 2);
    assert_eq!(
        l.surface(&m, &a, NOW + 2),
        None,
        "the log's identities are known"
    );
}

#[test]
fn a_refused_feed_line_is_owed_with_those_after_it_and_counted_in_order_once_paid() {
    let m = machine();
    let mut l = ledger(&m);
    let line = |text: &str| HumanMessage {
        at: NOW,
        kind: MessageKind::StageTransition,
        text: text.into(),
    };
    assert!(!l.owes());
    // The first is refused; the second must wait behind it, never be counted in its place.
    assert!(!l.owe(line("first")));
    assert!(l.owes());
    assert!(!l.owe(line("second")));
    assert_eq!(l.doc().feed_written, 0);
    assert_eq!(l.owed().map(|m| m.text.as_str()), Some("first"));
    l.paid();
    assert_eq!(l.owed().map(|m| m.text.as_str()), Some("second"));
    l.paid();
    assert_eq!((l.owed(), l.owes(), l.doc().feed_written), (None, false, 2));
    // Past the limit the ledger falls behind, says so once, and holds no more.
    for i in 0..OWED_MAX {
        assert!(!l.owe(line(&format!("{i}"))));
    }
    assert!(l.owe(line("one too many")));
    assert!(!l.owe(line("and another")));
    while l.owed().is_some() {
        l.paid();
    }
    assert!(l.owes(), "behind until the next start");
    assert_eq!(l.doc().feed_written as usize, 2 + OWED_MAX);
}

#[test]
fn a_document_not_written_keeps_no_state_the_disk_never_had() {
    let mut m = machine();
    let mut l = ledger(&m);
    controlling(&mut m);
    l.step(&m, NOW);
    assert_eq!(l.doc().path.last(), Some(&StateName::Ready));
    l.unwritten();
    assert_ne!(l.doc().path.last(), Some(&StateName::Ready));
}

#[test]
fn a_checkpoint_puts_back_the_document_and_the_lease_last_recorded() {
    let mut m = machine();
    let mut l = ledger(&m);
    let c = l.checkpoint();
    controlling(&mut m);
    l.step(&m, NOW);
    l.restore(c);
    assert_eq!(l.doc().machine, machine().record());
    let p = l.step(&m, NOW);
    assert!(p
        .writes
        .contains(&LocalWrite::LeaseRecord(Some(lease(NOW + 600)))));
}

#[test]
fn readings_keep_a_bounded_attempt_history() {
    let m = machine();
    let mut l = ledger(&m);
    for n in 0..(MAX_ATTEMPT_RECORDS + 3) {
        l.observed(&observation(&format!("t{n}")), NOW + n as u64);
    }
    assert_eq!(l.doc().attempt_history.len(), MAX_ATTEMPT_RECORDS);
    assert_eq!(l.doc().older_attempts, 3);
    assert_eq!(
        l.doc().remote.as_ref().map(|o| o.task.as_str()),
        Some("t22")
    );
}

#[test]
fn an_operators_refusal_stays_out_of_the_feed_and_argus_refusal_names_its_owner() {
    let m = machine();
    let l = ledger(&m);
    let reply = CommandReply {
        accepted: true,
        state: StateName::Detached,
        storage_failed: false,
        refusal: Some(RefusalCode::of(
            &crate::control::RemoteError::LeaseHeldByOther,
        )),
        lease: None,
        ambiguous: false,
        allowed: vec![],
        unconfirmed: None,
        holder: None,
    };
    let claim = Command::Claim {
        request_id: argus_machines::RequestId::new("r1"),
    };
    let submit = Command::Submit {
        request_id: argus_machines::RequestId::new("r2"),
    };
    let next = Command::NextAttempt {
        claim_request: argus_machines::RequestId::new("r3"),
        submit_request: argus_machines::RequestId::new("r4"),
    };
    assert_eq!(
        l.action(
            &Acted::Command(claim.clone()),
            &reply,
            &Actor::Operator,
            NOW
        ),
        vec![]
    );
    let argus = Actor::Argus { why: None };
    let writes = l.action(&Acted::Command(submit.clone()), &reply, &argus, NOW);
    assert!(
        matches!(
            writes.as_slice(),
            [LocalWrite::Feed { derived: false, message }]
                if message.text.starts_with("Argus decided to submit, but it was not done (refused by OpenTraining (held_by_other)")
        ),
        "{writes:?}"
    );
    let argus = Actor::Argus {
        why: Some("loss plateaued".into()),
    };
    let done = CommandReply {
        refusal: None,
        ..reply
    };
    let writes = l.action(&Acted::Command(next.clone()), &done, &argus, NOW);
    let texts: Vec<&str> = writes
        .iter()
        .filter_map(|w| match w {
            LocalWrite::Feed { message, .. } => Some(message.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            "Reviewer evidence: loss plateaued.",
            "Argus approved one bounded repair and started the next attempt."
        ]
    );
}

#[test]
fn a_lost_answer_settled_by_its_read_back_is_told_once_the_machine_moved_on() {
    use argus_machines::{ReadbackAnswer, WriteOutcome};
    let mut m = machine();
    controlling(&mut m);
    let rid = RequestId::new("s1");
    m.step(&Event::Operator(Command::Submit {
        request_id: rid.clone(),
    }));
    m.step(&Event::Written {
        request_id: rid.clone(),
        outcome: WriteOutcome::TimedOut,
    });
    assert_eq!(m.state_name(), StateName::AmbiguousWrite);
    let intent = m.record().state.intent().cloned().expect("in flight");
    let l = ledger(&m);
    // Still unresolved (the remote cannot be asked yet): nothing to tell.
    let unresolved = ReadbackAnswer::Unavailable;
    m.step(&Event::ReadBack {
        request_id: rid.clone(),
        answer: unresolved.clone(),
    });
    assert!(l.settled(&intent, &unresolved, &m, NOW).is_empty());
    // Not applied: the machine's own Needs you says it (and asks); the ledger adds nothing.
    let mut not = m.clone();
    not.step(&Event::ReadBack {
        request_id: rid.clone(),
        answer: ReadbackAnswer::NotApplied,
    });
    assert_ne!(not.state_name(), StateName::AmbiguousWrite);
    assert!(l
        .settled(&intent, &ReadbackAnswer::NotApplied, &not, NOW)
        .is_empty());
    // Applied: the feed says so, naming the task, once the machine left the ambiguity.
    let applied = ReadbackAnswer::Applied {
        task: Some(TaskId::new("task-7")),
    };
    m.step(&Event::ReadBack {
        request_id: rid,
        answer: applied.clone(),
    });
    let writes = l.settled(&intent, &applied, &m, NOW);
    let said: Vec<String> = writes
        .iter()
        .filter_map(|w| match w {
            LocalWrite::Feed { message, .. } => Some(message.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
            said,
            ["Read back: the submit whose answer was lost did apply (task task-7); nothing was resent."]
        );
}
